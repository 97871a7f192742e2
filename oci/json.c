#include "build-config.h"
#include "oci/json.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "runtime/util.h"

/* ------------------------------------------------------------------ reading */

int
json_read_fd (int fd, const char *what, size_t max_size, char **out, size_t *len, struct sbx_error *err)
{
  size_t cap = 16384, n = 0;
  char *buf = xmalloc0 (cap + 1);
  struct stat st;

  /* Size the buffer from fstat for regular files; stdin/pipes grow as they come. */
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    {
      if ((uint64_t) st.st_size > max_size)
        {
          free (buf);
          return sbx_error_set (err, 0, "%s: file is larger than the %zu byte limit", what, max_size);
        }
      if ((size_t) st.st_size + 1 > cap)
        {
          cap = st.st_size + 1;
          buf = xrealloc (buf, cap + 1);
        }
    }
  for (;;)
    {
      ssize_t r;
      if (n == cap)
        {
          if (cap > max_size)
            break;
          cap *= 2;
          buf = xrealloc (buf, cap + 1);
        }
      r = read (fd, buf + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno;
          free (buf);
          return sbx_error_set (err, e, "read %s", what);
        }
      if (r == 0)
        break;
      n += r;
      if (n > max_size)
        break;
    }
  if (n > max_size)
    {
      free (buf);
      return sbx_error_set (err, 0, "%s: file is larger than the %zu byte limit", what, max_size);
    }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

int
json_read_file (int dirfd, const char *path, size_t max_size, char **out, size_t *len, struct sbx_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return sbx_error_set (err, errno, "open %s", path);
  return json_read_fd (fd, path, max_size, out, len, err);
}

/* ------------------------------------------------------------------ parsing */

/* Duplicate-key detection: a linear scan for small objects, a hash set once an
 * object grows past KEYSET_THRESHOLD keys (a 150k-key annotation map must not take
 * quadratic time). One set per nesting level, freed when the object closes. */
#define KEYSET_THRESHOLD 16

struct keyset
{
  size_t cap; /* power of two, 0 when unused */
  const char **slots;
};

static uint64_t
hash_key (const char *s)
{
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ULL;
  return h;
}

/* Returns false if the key was already present. */
static bool
keyset_insert (struct keyset *k, const char *key)
{
  size_t i = hash_key (key) & (k->cap - 1);
  while (k->slots[i])
    {
      if (strcmp (k->slots[i], key) == 0)
        return false;
      i = (i + 1) & (k->cap - 1);
    }
  k->slots[i] = key;
  return true;
}

static void
keyset_grow (struct keyset *k, yajl_val obj)
{
  /* Keep the load factor under 1/2: rebuild from the object's keys. */
  size_t want = 64;
  while (want < obj->u.object.len * 4)
    want *= 2;
  free (k->slots);
  k->slots = xmalloc0 (want * sizeof (char *));
  k->cap = want;
  for (size_t i = 0; i < obj->u.object.len; i++)
    keyset_insert (k, obj->u.object.keys[i]);
}

/* Every node and string of a parsed document comes from one arena, freed at once by
 * json_free of the root: a 20 KB config is a few thousand nodes, and malloc/free of
 * each was a third of create's own work. Under ASan each allocation is its own
 * malloc, so overflows are still caught one by one. */
struct arena_chunk
{
  struct arena_chunk *next;
  size_t used, cap;
  max_align_t data[];
};

struct json_arena
{
  struct arena_chunk *chunks;
  size_t next_cap;
};

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_PER_ALLOCATION 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_PER_ALLOCATION 1
#endif
#endif

static void *
arena_alloc (struct json_arena *a, size_t n)
{
  struct arena_chunk *c = a->chunks;
  n = (n + sizeof (max_align_t) - 1) & ~(sizeof (max_align_t) - 1);
#ifndef ARENA_PER_ALLOCATION
  if (!c || c->cap - c->used < n)
#endif
    {
      size_t cap = n > a->next_cap ? n : a->next_cap;
#ifdef ARENA_PER_ALLOCATION
      cap = n;
#endif
      c = malloc (sizeof *c + cap); /* not zeroed: nodes are, strings need not be */
      if (!c)
        abort ();
      c->used = 0;
      c->cap = cap;
      c->next = a->chunks;
      a->chunks = c;
      if (a->next_cap < (1u << 20))
        a->next_cap *= 2;
    }
  {
    void *p = (char *) c->data + c->used;
    c->used += n;
    return p;
  }
}

static void *
arena_zalloc (struct json_arena *a, size_t n)
{
  return memset (arena_alloc (a, n), 0, n);
}

static char *
arena_strndup (struct json_arena *a, const char *s, size_t len)
{
  char *p = arena_alloc (a, len + 1);
  memcpy (p, s, len);
  p[len] = '\0';
  return p;
}

static void
arena_free (struct json_arena *a)
{
  struct arena_chunk *c = a->chunks;
  while (c)
    {
      struct arena_chunk *next = c->next;
      free (c);
      c = next;
    }
  free (a);
}

struct builder
{
  yajl_val stack[SBX_JSON_MAX_DEPTH + 1];
  struct keyset keys[SBX_JSON_MAX_DEPTH + 1];
  size_t depth;
  char *key; /* pending object key, owned until attached */
  yajl_val root;
  const char *fail; /* our reason for cancelling the parse */
  yajl_handle h;    /* for the byte offsets of objects and arrays */
  struct json_arena *arena;
};

/* Objects and arrays carry where they are in the parsed text (json_span); the root,
 * whatever its type, is one too and owns the arena. */
struct container_node
{
  struct yajl_val_s v; /* first: the node's address is the allocation's */
  size_t start, end;
  struct json_arena *arena; /* the root's: everything of the document */
};

/* The root is the first value parsed, at depth 0: it gets the bigger node. */
static yajl_val
node_alloc (struct builder *b, yajl_type type)
{
  yajl_val v;
  if (b->depth == 0 && !b->root)
    {
      struct container_node *c = arena_zalloc (b->arena, sizeof *c);
      c->arena = b->arena;
      v = &c->v;
    }
  else if (type == yajl_t_object || type == yajl_t_array)
    v = arena_zalloc (b->arena, sizeof (struct container_node));
  else
    v = arena_zalloc (b->arena, sizeof *v);
  v->type = type;
  return v;
}


/* Arrays grow to the next power of two (capacity is implicit in len). */
static bool
needs_growth (size_t len)
{
  return len == 0 || (len >= 4 && (len & (len - 1)) == 0);
}

static size_t
grown_capacity (size_t len)
{
  return len == 0 ? 4 : len * 2;
}

static int
attach (struct builder *b, yajl_val v)
{
  yajl_val parent;
  if (b->depth == 0)
    {
      b->root = v;
      return 1;
    }
  parent = b->stack[b->depth - 1];
  if (parent->type == yajl_t_object)
    {
      size_t n = parent->u.object.len;
      struct keyset *ks = &b->keys[b->depth - 1];
      bool dup = false;
      if (n < KEYSET_THRESHOLD)
        {
          for (size_t i = 0; i < n; i++)
            if (strcmp (parent->u.object.keys[i], b->key) == 0)
              dup = true;
        }
      else
        {
          if (ks->cap < (n + 1) * 2)
            keyset_grow (ks, parent);
          dup = !keyset_insert (ks, b->key);
        }
      if (dup)
        {
          b->fail = "duplicate object key"; /* v goes with the arena */
          return 0;
        }
      if (needs_growth (n))
        {
          size_t cap = grown_capacity (n);
          const char **keys = arena_alloc (b->arena, cap * sizeof (char *));
          yajl_val *values = arena_alloc (b->arena, cap * sizeof (yajl_val));
          if (n)
            {
              memcpy (keys, parent->u.object.keys, n * sizeof (char *));
              memcpy (values, parent->u.object.values, n * sizeof (yajl_val));
            }
          parent->u.object.keys = keys;
          parent->u.object.values = values;
        }
      parent->u.object.keys[n] = steal_pointer (&b->key);
      parent->u.object.values[n] = v;
      parent->u.object.len = n + 1;
    }
  else
    {
      size_t n = parent->u.array.len;
      if (needs_growth (n))
        {
          yajl_val *values = arena_alloc (b->arena, grown_capacity (n) * sizeof (yajl_val));
          if (n)
            memcpy (values, parent->u.array.values, n * sizeof (yajl_val));
          parent->u.array.values = values;
        }
      parent->u.array.values[n] = v;
      parent->u.array.len = n + 1;
    }
  return 1;
}

static int
cb_null (void *ctx)
{
  return attach (ctx, node_alloc (ctx, yajl_t_null));
}

static int
cb_boolean (void *ctx, int value)
{
  return attach (ctx, node_alloc (ctx, value ? yajl_t_true : yajl_t_false));
}

static int
cb_number (void *ctx, const char *s, size_t len)
{
  /* Keep the raw text: integers are parsed by the typed accessors with exact
   * uint64/int64 range checks (yajl's long long cannot hold 2^64-1). */
  struct builder *b = ctx;
  yajl_val v = node_alloc (b, yajl_t_number);
  v->u.number.r = arena_strndup (b->arena, s, len);
  return attach (ctx, v);
}

static int
cb_string (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  yajl_val v;
  if (memchr (s, '\0', len))
    {
      b->fail = "string contains a NUL character";
      return 0;
    }
  v = node_alloc (b, yajl_t_string);
  v->u.string = arena_strndup (b->arena, (const char *) s, len);
  return attach (ctx, v);
}

static int
cb_map_key (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  if (memchr (s, '\0', len))
    {
      b->fail = "object key contains a NUL character";
      return 0;
    }
  b->key = arena_strndup (b->arena, (const char *) s, len);
  return 1;
}

static int
push (struct builder *b, yajl_type type)
{
  yajl_val v;
  if (b->depth >= SBX_JSON_MAX_DEPTH)
    {
      b->fail = "nesting is deeper than the limit of " "64" " levels";
      return 0;
    }
  v = node_alloc (b, type);
  ((struct container_node *) v)->start = yajl_get_bytes_consumed (b->h) - 1; /* at the '{' or '[' just read */
  if (!attach (b, v))
    return 0;
  b->stack[b->depth++] = v;
  return 1;
}

static int
cb_start_map (void *ctx)
{
  return push (ctx, yajl_t_object);
}

static int
cb_start_array (void *ctx)
{
  return push (ctx, yajl_t_array);
}

static int
cb_end (void *ctx)
{
  struct builder *b = ctx;
  b->depth--;
  ((struct container_node *) b->stack[b->depth])->end = yajl_get_bytes_consumed (b->h);
  free (b->keys[b->depth].slots);
  b->keys[b->depth].slots = NULL;
  b->keys[b->depth].cap = 0;
  return 1;
}

static const yajl_callbacks callbacks = {
  .yajl_null = cb_null,
  .yajl_boolean = cb_boolean,
  .yajl_number = cb_number,
  .yajl_string = cb_string,
  .yajl_start_map = cb_start_map,
  .yajl_map_key = cb_map_key,
  .yajl_end_map = cb_end,
  .yajl_start_array = cb_start_array,
  .yajl_end_array = cb_end,
};

static void
offset_to_line_col (const char *buf, size_t off, size_t *line, size_t *col)
{
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++)
    {
      if (buf[i] == '\n')
        {
          (*line)++;
          *col = 1;
        }
      else
        (*col)++;
    }
}

yajl_val
json_parse (const char *buf, size_t len, const char *what, struct sbx_error *err)
{
  struct builder b = { 0 };
  yajl_handle h;
  yajl_status st;
  size_t off, line, col;
  bool at_end = false;

  if (memchr (buf, '\0', len))
    {
      offset_to_line_col (buf, (const char *) memchr (buf, '\0', len) - buf, &line, &col);
      sbx_error_set (err, 0, "%s: parse error at line %zu col %zu: NUL byte in input", what, line, col);
      return NULL;
    }
  h = yajl_alloc (&callbacks, NULL, &b);
  if (!h)
    abort ();
  b.h = h;
  b.arena = xmalloc0 (sizeof *b.arena);
  b.arena->next_cap = len * 2 + 1024; /* one chunk for most documents */
  yajl_config (h, yajl_allow_comments, 0);
  st = yajl_parse (h, (const unsigned char *) buf, len);
  if (st == yajl_status_ok)
    {
      st = yajl_complete_parse (h);
      at_end = true; /* its byte count is of the (empty) final call: the error is at the end */
    }
  if (st == yajl_status_ok && b.root)
    {
      yajl_free (h);
      return b.root;
    }

  off = at_end ? len : yajl_get_bytes_consumed (h);
  if (off > len)
    off = len;
  offset_to_line_col (buf, off, &line, &col);
  if (st == yajl_status_client_canceled && b.fail)
    sbx_error_set (err, 0, "%s: parse error at line %zu col %zu: %s", what, line, col, b.fail);
  else if (st == yajl_status_ok)
    sbx_error_set (err, 0, "%s: parse error: empty document", what);
  else
    {
      unsigned char *msg = yajl_get_error (h, 0, (const unsigned char *) buf, len);
      char *m = (char *) msg;
      /* yajl says "parse error: <reason>\n" or "lexical error: <reason>\n". */
      char *colon = m ? strchr (m, ':') : NULL;
      char *reason = colon ? colon + 1 : m;
      while (reason && *reason == ' ')
        reason++;
      if (reason)
        reason[strcspn (reason, "\n")] = '\0';
      sbx_error_set (err, 0, "%s: parse error at line %zu col %zu: %s", what, line, col,
                     reason && *reason ? reason : "invalid JSON");
      yajl_free_error (h, msg);
    }
  for (size_t i = 0; i <= SBX_JSON_MAX_DEPTH; i++)
    free (b.keys[i].slots);
  arena_free (b.arena);
  yajl_free (h);
  return NULL;
}

void
json_free (yajl_val root)
{
  /* Only a root (what json_parse returned) owns anything: the arena of its document. */
  struct container_node *c = (struct container_node *) root;
  if (root && c->arena)
    arena_free (c->arena);
}

/* ---------------------------------------------------------------- accessors */

const char *
json_type_name (yajl_val v)
{
  if (!v)
    return "nothing";
  switch (v->type)
    {
    case yajl_t_string:
      return "a string";
    case yajl_t_number:
      return "a number";
    case yajl_t_object:
      return "an object";
    case yajl_t_array:
      return "an array";
    case yajl_t_true:
    case yajl_t_false:
      return "a boolean";
    case yajl_t_null:
      return "null";
    default:
      return "an unknown value";
    }
}

yajl_val
json_member (yajl_val obj, const char *key)
{
  if (!obj || obj->type != yajl_t_object)
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      {
        yajl_val v = obj->u.object.values[i];
        return v && v->type == yajl_t_null ? NULL : v;
      }
  return NULL;
}

/* "<path>.<key>" or "<key>" at top level. */
#define MEMBER_FMT "%s%s%s"
#define MEMBER_ARGS(path, key) (path && *path ? path : ""), (path && *path ? "." : ""), key

static int
type_error (const char *path, const char *key, const char *want, yajl_val got, struct sbx_error *err)
{
  return sbx_error_set (err, 0, MEMBER_FMT ": expected %s, got %s", MEMBER_ARGS (path, key), want,
                        json_type_name (got));
}

static int
lookup (yajl_val obj, const char *path, const char *key, bool required, yajl_val *v, struct sbx_error *err)
{
  *v = json_member (obj, key);
  if (!*v && required)
    return sbx_error_set (err, 0, MEMBER_FMT ": required field is missing", MEMBER_ARGS (path, key));
  return 0;
}

int
json_get_object (yajl_val obj, const char *path, const char *key, bool required, yajl_val *out,
                 struct sbx_error *err)
{
  yajl_val v;
  if (lookup (obj, path, key, required, &v, err) < 0)
    return -1;
  if (!v)
    return 0;
  if (v->type != yajl_t_object)
    return type_error (path, key, "an object", v, err);
  *out = v;
  return 0;
}

int
json_get_array (yajl_val obj, const char *path, const char *key, bool required, yajl_val *out,
                struct sbx_error *err)
{
  yajl_val v;
  if (lookup (obj, path, key, required, &v, err) < 0)
    return -1;
  if (!v)
    return 0;
  if (v->type != yajl_t_array)
    return type_error (path, key, "an array", v, err);
  *out = v;
  return 0;
}

int
json_get_string (yajl_val obj, const char *path, const char *key, bool required, const char **out,
                 struct sbx_error *err)
{
  yajl_val v;
  if (lookup (obj, path, key, required, &v, err) < 0)
    return -1;
  if (!v)
    return 0;
  if (v->type != yajl_t_string)
    return type_error (path, key, "a string", v, err);
  *out = v->u.string;
  return 0;
}

int
json_get_bool (yajl_val obj, const char *path, const char *key, bool *out, bool *present, struct sbx_error *err)
{
  yajl_val v = json_member (obj, key);
  if (present)
    *present = v != NULL;
  if (!v)
    return 0;
  if (v->type != yajl_t_true && v->type != yajl_t_false)
    return type_error (path, key, "a boolean", v, err);
  *out = v->type == yajl_t_true;
  return 0;
}

/* Integers: plain JSON integer syntax only (no fraction/exponent), exact range. */
static int
parse_i64_text (const char *s, int64_t min, int64_t max, int64_t *out)
{
  char *end;
  long long x;
  if (!s || !*s || strpbrk (s, ".eE"))
    return -1;
  errno = 0;
  x = strtoll (s, &end, 10);
  if (errno || *end || x < min || x > max)
    return -1;
  *out = x;
  return 0;
}

static int
parse_u64_text (const char *s, uint64_t max, uint64_t *out)
{
  char *end;
  unsigned long long x;
  if (!s || !*s || *s == '-' || strpbrk (s, ".eE"))
    return -1;
  errno = 0;
  x = strtoull (s, &end, 10);
  if (errno || *end || x > max)
    return -1;
  *out = x;
  return 0;
}

int
json_value_i64 (yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out, struct sbx_error *err)
{
  if (!v || v->type != yajl_t_number)
    return sbx_error_set (err, 0, "%s: expected an integer, got %s", path, json_type_name (v));
  if (parse_i64_text (v->u.number.r, min, max, out) < 0)
    return sbx_error_set (err, 0, "%s: %s is not an integer in [%" PRId64 ", %" PRId64 "]", path,
                          v->u.number.r, min, max);
  return 0;
}

int
json_value_u64 (yajl_val v, const char *path, uint64_t max, uint64_t *out, struct sbx_error *err)
{
  if (!v || v->type != yajl_t_number)
    return sbx_error_set (err, 0, "%s: expected an unsigned integer, got %s", path, json_type_name (v));
  if (parse_u64_text (v->u.number.r, max, out) < 0)
    return sbx_error_set (err, 0, "%s: %s is not an integer in [0, %" PRIu64 "]", path, v->u.number.r, max);
  return 0;
}

int
json_value_string (yajl_val v, const char *path, const char **out, struct sbx_error *err)
{
  if (!v || v->type != yajl_t_string)
    return sbx_error_set (err, 0, "%s: expected a string, got %s", path, json_type_name (v));
  *out = v->u.string;
  return 0;
}

int
json_expect_object (yajl_val v, const char *path, struct sbx_error *err)
{
  if (!v || v->type != yajl_t_object)
    return sbx_error_set (err, 0, "%s: expected an object, got %s", path, json_type_name (v));
  return 0;
}

int
json_get_i64 (yajl_val obj, const char *path, const char *key, bool required, int64_t min, int64_t max,
              int64_t *out, bool *present, struct sbx_error *err)
{
  yajl_val v;
  _cleanup_free_ char *full = NULL;
  if (present)
    *present = false;
  if (lookup (obj, path, key, required, &v, err) < 0)
    return -1;
  if (!v)
    return 0;
  /* the path is only spelled out for an error message */
  if (!(v->type == yajl_t_number && parse_i64_text (v->u.number.r, min, max, out) == 0))
    {
      full = xasprintf (MEMBER_FMT, MEMBER_ARGS (path, key));
      if (json_value_i64 (v, full, min, max, out, err) < 0)
        return -1;
    }
  if (present)
    *present = true;
  return 0;
}

int
json_get_u64 (yajl_val obj, const char *path, const char *key, bool required, uint64_t max, uint64_t *out,
              bool *present, struct sbx_error *err)
{
  yajl_val v;
  _cleanup_free_ char *full = NULL;
  if (present)
    *present = false;
  if (lookup (obj, path, key, required, &v, err) < 0)
    return -1;
  if (!v)
    return 0;
  if (!(v->type == yajl_t_number && parse_u64_text (v->u.number.r, max, out) == 0))
    {
      full = xasprintf (MEMBER_FMT, MEMBER_ARGS (path, key));
      if (json_value_u64 (v, full, max, out, err) < 0)
        return -1;
    }
  if (present)
    *present = true;
  return 0;
}

int
json_get_strv (yajl_val obj, const char *path, const char *key, bool required, const char ***out, size_t *n,
               struct sbx_error *err)
{
  yajl_val arr = NULL;
  const char **v;
  if (json_get_array (obj, path, key, required, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  v = xmalloc0 ((arr->u.array.len + 1) * sizeof (char *));
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val e = arr->u.array.values[i];
      if (!e || e->type != yajl_t_string)
        {
          free (v);
          return sbx_error_set (err, 0, MEMBER_FMT "[%zu]: expected a string, got %s", MEMBER_ARGS (path, key), i,
                                json_type_name (e));
        }
      v[i] = e->u.string;
    }
  *out = v;
  if (n)
    *n = arr->u.array.len;
  return 0;
}

/* ------------------------------------------------------------------ writing */

yajl_gen
gen_new (bool pretty)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (!g)
    abort ();
  yajl_gen_config (g, yajl_gen_beautify, pretty ? 1 : 0);
  if (pretty)
    yajl_gen_config (g, yajl_gen_indent_string, "\t");
  /* "/" in paths stays readable. */
  yajl_gen_config (g, yajl_gen_escape_solidus, 0);
  yajl_gen_config (g, yajl_gen_validate_utf8, 1);
  return g;
}

yajl_gen_status
gen_string (yajl_gen g, const char *s)
{
  if (!s)
    return yajl_gen_null (g);
  return yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

yajl_gen_status
gen_key_string (yajl_gen g, const char *key, const char *value)
{
  yajl_gen_status st = gen_string (g, key);
  return st != yajl_gen_status_ok ? st : gen_string (g, value);
}

yajl_gen_status
gen_key_int (yajl_gen g, const char *key, long long value)
{
  yajl_gen_status st = gen_string (g, key);
  return st != yajl_gen_status_ok ? st : yajl_gen_integer (g, value);
}

yajl_gen_status
gen_key_bool (yajl_gen g, const char *key, bool value)
{
  yajl_gen_status st = gen_string (g, key);
  return st != yajl_gen_status_ok ? st : yajl_gen_bool (g, value);
}

yajl_gen_status
gen_string_array (yajl_gen g, const char *const *v, size_t n)
{
  yajl_gen_status st = yajl_gen_array_open (g);
  for (size_t i = 0; st == yajl_gen_status_ok && i < n; i++)
    st = gen_string (g, v[i]);
  return st != yajl_gen_status_ok ? st : yajl_gen_array_close (g);
}

yajl_gen_status
gen_tree (yajl_gen g, yajl_val v)
{
  yajl_gen_status st = yajl_gen_status_ok;
  if (!v)
    return yajl_gen_null (g);
  switch (v->type)
    {
    case yajl_t_string:
      return gen_string (g, v->u.string);
    case yajl_t_number:
      return yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
    case yajl_t_true:
      return yajl_gen_bool (g, 1);
    case yajl_t_false:
      return yajl_gen_bool (g, 0);
    case yajl_t_null:
      return yajl_gen_null (g);
    case yajl_t_object:
      st = yajl_gen_map_open (g);
      for (size_t i = 0; st == yajl_gen_status_ok && i < v->u.object.len; i++)
        {
          st = gen_string (g, v->u.object.keys[i]);
          if (st == yajl_gen_status_ok)
            st = gen_tree (g, v->u.object.values[i]);
        }
      return st != yajl_gen_status_ok ? st : yajl_gen_map_close (g);
    case yajl_t_array:
      st = yajl_gen_array_open (g);
      for (size_t i = 0; st == yajl_gen_status_ok && i < v->u.array.len; i++)
        st = gen_tree (g, v->u.array.values[i]);
      return st != yajl_gen_status_ok ? st : yajl_gen_array_close (g);
    default:
      return yajl_gen_invalid_string;
    }
}

char *
gen_finish (yajl_gen g, size_t *len)
{
  const unsigned char *buf;
  size_t n;
  char *out;
  if (yajl_gen_get_buf (g, &buf, &n) != yajl_gen_status_ok)
    return NULL;
  out = xmalloc0 (n + 1);
  memcpy (out, buf, n);
  if (len)
    *len = n;
  return out;
}

bool
json_span (yajl_val v, size_t *start, size_t *end)
{
  const struct container_node *c = (const struct container_node *) v;
  if (!v || (v->type != yajl_t_object && v->type != yajl_t_array) || c->end <= c->start)
    return false;
  *start = c->start;
  *end = c->end;
  return true;
}

const char *
json_path_elem (char buf[JSON_PATH_MAX], const char *base, const char *member, size_t i)
{
  char digits[24];
  size_t n = 0, d = 0;
  const char *parts[2] = { base, member };
  do
    digits[d++] = (char) ('0' + i % 10);
  while ((i /= 10) && d < sizeof digits);
  for (int k = 0; k < 2; k++)
    {
      size_t len = strlen (parts[k]);
      if (k == 1 && n < JSON_PATH_MAX - 1)
        buf[n++] = '.';
      if (len > JSON_PATH_MAX - 1 - n)
        len = JSON_PATH_MAX - 1 - n;
      memcpy (buf + n, parts[k], len);
      n += len;
    }
  if (n + d + 2 < JSON_PATH_MAX)
    {
      buf[n++] = '[';
      while (d)
        buf[n++] = digits[--d];
      buf[n++] = ']';
    }
  buf[n] = '\0';
  return buf;
}
