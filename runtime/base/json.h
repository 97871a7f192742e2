/* Reading and writing JSON safely.
 *
 * Parsing (json_parse.c) builds a yajl_tree-compatible tree with a strict RFC 8259
 * parser of our own, so that the limits hold *while* parsing rather than after:
 * comments are rejected (yajl_tree_parse silently accepts them), nesting is capped
 * (yajl_tree_free recurses and crashed at a million levels), strings with an embedded
 * NUL are refused (C would truncate them), strings must be valid UTF-8, duplicate
 * object keys are refused (which one wins is ambiguous), and errors carry a line and
 * column. yajl remains for the types and for writing JSON.
 *
 * Accessors read one member of an object into a typed C value and, on a wrong type or
 * an out-of-range number, report the JSON path of the member ("process.user.uid").
 * Strings returned point into the tree: the tree must outlive them.
 */
#ifndef SBX_OCI_JSON_H
#define SBX_OCI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "runtime/base/error.h"

#define SBX_JSON_MAX_DEPTH 64
#define SBX_JSON_MAX_SIZE (4u << 20) /* podman/containerd configs are 10-30 KB */

/* Read a whole file (at most max_size bytes) relative to dirfd (AT_FDCWD for cwd). */
int json_read_file (int dirfd, const char *path, size_t max_size, char **out, size_t *len,
                    struct sbx_error *err);
int json_read_fd (int fd, const char *what, size_t max_size, char **out, size_t *len,
                  struct sbx_error *err);

/* Parse `len` bytes; `what` names the document in errors ("config.json"). */
yajl_val json_parse (const char *buf, size_t len, const char *what, struct sbx_error *err);
/* The same for a config document, except that linux.seccomp.syscalls is only found,
 * not parsed: an empty array for which json_is_deferred is true, and which
 * json_parse_deferred parses (strictly, errors located in `text`) when it is needed
 * (json_parse.c says why this is sound). */
yajl_val json_parse_config (const char *buf, size_t len, const char *what, struct sbx_error *err);
bool json_is_deferred (yajl_val v);
/* v: a deferred array of a document parsed from `text`; a new document to json_free. */
yajl_val json_parse_deferred (const char *text, yajl_val v, const char *what, struct sbx_error *err);
/* Free a whole document: v must be what json_parse returned (its root). */
void json_free (yajl_val v);

/* Where an object or array of a json_parse tree is in the text it was parsed from:
 * bytes [start, end) (for hashing a section as written). */
bool json_span (yajl_val v, size_t *start, size_t *end);

/* "BASE.MEMBER[I]" into buf (truncated if need be): the path of an array element,
 * without printf or malloc (a long seccomp profile has hundreds of them). */
#define JSON_PATH_MAX 256
const char *json_path_elem (char buf[JSON_PATH_MAX], const char *base, const char *member, size_t i);

/* Member lookup; JSON null counts as absent (optional fields). */
yajl_val json_member (yajl_val obj, const char *key);
const char *json_type_name (yajl_val v);

/* Each accessor: absent + !required -> returns 0 and leaves *out untouched (and sets
 * *present=false where a present flag exists); absent + required -> error
 * "<path>.<key>: required"; wrong type / range -> error naming the path. */
int json_get_object (yajl_val obj, const char *path, const char *key, bool required, yajl_val *out,
                     struct sbx_error *err);
int json_get_array (yajl_val obj, const char *path, const char *key, bool required, yajl_val *out,
                    struct sbx_error *err);
int json_get_string (yajl_val obj, const char *path, const char *key, bool required, const char **out,
                     struct sbx_error *err);
int json_get_bool (yajl_val obj, const char *path, const char *key, bool *out, bool *present,
                   struct sbx_error *err);
int json_get_i64 (yajl_val obj, const char *path, const char *key, bool required, int64_t min, int64_t max,
                  int64_t *out, bool *present, struct sbx_error *err);
int json_get_u64 (yajl_val obj, const char *path, const char *key, bool required, uint64_t max, uint64_t *out,
                  bool *present, struct sbx_error *err);
/* A NULL-terminated vector of pointers into the tree (the vector itself is malloc'd). */
int json_get_strv (yajl_val obj, const char *path, const char *key, bool required, const char ***out,
                   size_t *n, struct sbx_error *err);

/* Values (not members): for array elements. `path` is the element's full path. */
int json_value_i64 (yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out, struct sbx_error *err);
int json_value_u64 (yajl_val v, const char *path, uint64_t max, uint64_t *out, struct sbx_error *err);
int json_value_string (yajl_val v, const char *path, const char **out, struct sbx_error *err);
int json_expect_object (yajl_val v, const char *path, struct sbx_error *err);

/* Writing: every yajl_gen call is checked; GEN() jumps to `gen_fail` on error. */
#define GEN(call)                                  \
  do                                               \
    {                                              \
      if ((call) != yajl_gen_status_ok)            \
        goto gen_fail;                             \
    }                                              \
  while (0)
yajl_gen_status gen_string (yajl_gen g, const char *s);
yajl_gen_status gen_key_string (yajl_gen g, const char *key, const char *value);
yajl_gen_status gen_key_int (yajl_gen g, const char *key, long long value);
yajl_gen_status gen_key_bool (yajl_gen g, const char *key, bool value);
yajl_gen_status gen_string_array (yajl_gen g, const char *const *v, size_t n);
/* Re-emit a parsed tree (e.g. annotations copied into state.json). */
yajl_gen_status gen_tree (yajl_gen g, yajl_val v);
/* A generator that the caller frees with yajl_gen_free. */
yajl_gen gen_new (bool pretty);
/* Take the generated buffer as a NUL-terminated malloc'd string. */
char *gen_finish (yajl_gen g, size_t *len);

#endif
