#include "build-config.h"
#include "runtime/base/json.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"

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
  /* the first byte before the call: most keys differ there (a config asks a few
     thousand of these, a long seccomp profile most of them) */
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (obj->u.object.keys[i][0] == key[0] && strcmp (obj->u.object.keys[i], key) == 0)
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
    sbx_out_of_memory ();
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
