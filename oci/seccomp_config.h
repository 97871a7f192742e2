/* linux.seccomp (config-linux.md "Seccomp") in typed form. */
#ifndef SBX_OCI_SECCOMP_CONFIG_H
#define SBX_OCI_SECCOMP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "oci/vocab.h"
#include "runtime/base/error.h"

struct oci_seccomp_arg
{
  uint32_t index;
  uint64_t value, value_two;
  enum sbx_seccomp_op op;
};

struct oci_seccomp_rule
{
  const char **names;
  size_t n_names;
  enum sbx_seccomp_action action;
  bool has_errno_ret;
  uint32_t errno_ret;
  struct oci_seccomp_arg *args;
  size_t n_args;
};

struct oci_seccomp
{
  enum sbx_seccomp_action default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  int *archs; /* indexes into sbx_seccomp_archs */
  size_t n_archs;
  uint32_t flags; /* bit i = sbx_seccomp_flags[i] */
  const char *listener_path, *listener_metadata;
  struct oci_seccomp_rule *rules;
  size_t n_rules;
  bool uses_notify;
  yajl_val tree; /* the object parsed, for the cache key */
  const char *text; /* the document tree was parsed from, if the caller sets it:
                     * the key then hashes the section as written (json_span) */
  const char *path; /* "linux.seccomp", for errors */
  yajl_val deferred_rules; /* syscalls not parsed yet (json_parse_config): rules,
                            * n_rules and uses_notify wait for oci_seccomp_load_rules */
  yajl_val rules_doc;      /* what oci_seccomp_load_rules parsed */
};

int oci_seccomp_parse (yajl_val obj, const char *path, struct oci_seccomp *s, struct sbx_error *err);
/* The deferred syscalls, parsed and checked now (needs s->text); a no-op otherwise. */
int oci_seccomp_load_rules (struct oci_seccomp *s, struct sbx_error *err);
/* Whether the profile lets `name` through whatever its arguments: a rule allows it
 * without conditions, or no rule names it and the default allows (rules loaded). */
bool oci_seccomp_allows_unconditionally (const struct oci_seccomp *s, const char *name);
void oci_seccomp_clear (struct oci_seccomp *s);

#endif
