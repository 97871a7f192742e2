#include "build-config.h"
#include "runtime/sandbox/sandbox_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

#define MAX_TEXT (1u << 20)        /* a value, a message, a traceback */
#define MAX_FIGURES 64
#define MAX_FIGURE_DATA (24u << 20) /* one figure's base64 */

int
sandbox_report_read (int fd, struct sandbox_report *rep, struct sbx_error *err)
{
  size_t len = 0;
  memset (rep, 0, sizeof *rep);
  if (lseek (fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
    return sbx_error_set (err, errno, "the run's report");
  if (json_read_fd (fd, "the run's report", SANDBOX_REPORT_MAX, &rep->raw, &len, err) < 0)
    return -1;
  rep->tree = json_parse (rep->raw, len, "the run's report", err);
  if (!rep->tree || rep->tree->type != yajl_t_object)
    {
      sandbox_report_free (rep);
      return sbx_error_is_set (err) ? -1 : sbx_error_set (err, 0, "the run's report is not a JSON object");
    }
  return 0;
}

void
sandbox_report_free (struct sandbox_report *rep)
{
  json_free (rep->tree);
  free (rep->raw);
  memset (rep, 0, sizeof *rep);
}

/* member KEY of OBJ if it is a string no longer than MAX, else NULL */
static const char *
text (yajl_val obj, const char *key, size_t max)
{
  yajl_val v = json_member (obj, key);
  return v && v->type == yajl_t_string && strlen (v->u.string) <= max ? v->u.string : NULL;
}

/* member KEY of OBJ if it is an integer in [0, max], else -1 */
static long long
count (yajl_val obj, const char *key, long long max)
{
  struct sbx_error e = { 0 };
  int64_t v;
  if (json_value_i64 (json_member (obj, key), key, 0, max, &v, &e) < 0)
    {
      sbx_error_clear (&e);
      return -1;
    }
  return v;
}

static yajl_gen_status
gen_exception (yajl_gen g, yajl_val e)
{
  const char *type = text (e, "type", 4096), *message = text (e, "message", MAX_TEXT),
             *tb = text (e, "traceback", MAX_TEXT);
  yajl_gen_status st;
  if (!type || !message || !tb)
    return yajl_gen_status_ok;
  if ((st = gen_string (g, "exception")) != yajl_gen_status_ok || (st = yajl_gen_map_open (g)) != yajl_gen_status_ok
      || (st = gen_key_string (g, "type", type)) != yajl_gen_status_ok
      || (st = gen_key_string (g, "message", message)) != yajl_gen_status_ok
      || (st = gen_key_string (g, "traceback", tb)) != yajl_gen_status_ok)
    return st;
  return yajl_gen_map_close (g);
}

/* one figure: a PNG as base64, with its size; anything else is left out */
static yajl_gen_status
gen_figure (yajl_gen g, yajl_val f)
{
  const char *format = text (f, "format", 8), *data = text (f, "data", MAX_FIGURE_DATA);
  long long w = count (f, "width", 1 << 20), h = count (f, "height", 1 << 20), bytes = count (f, "bytes", 1LL << 30);
  yajl_gen_status st;
  if (!format || strcmp (format, "png") != 0 || !data || w < 0 || h < 0 || bytes < 0)
    return yajl_gen_status_ok;
  if ((st = yajl_gen_map_open (g)) != yajl_gen_status_ok || (st = gen_key_string (g, "format", "png")) != yajl_gen_status_ok
      || (st = gen_key_int (g, "width", w)) != yajl_gen_status_ok || (st = gen_key_int (g, "height", h)) != yajl_gen_status_ok
      || (st = gen_key_int (g, "bytes", bytes)) != yajl_gen_status_ok
      || (st = gen_key_string (g, "data", data)) != yajl_gen_status_ok)
    return st;
  return yajl_gen_map_close (g);
}

static yajl_gen_status
gen_figures (yajl_gen g, yajl_val figures)
{
  yajl_gen_status st;
  if ((st = gen_string (g, "figures")) != yajl_gen_status_ok || (st = yajl_gen_array_open (g)) != yajl_gen_status_ok)
    return st;
  for (size_t i = 0; figures && YAJL_IS_ARRAY (figures) && i < figures->u.array.len && i < MAX_FIGURES; i++)
    if (YAJL_IS_OBJECT (figures->u.array.values[i]) && (st = gen_figure (g, figures->u.array.values[i])) != yajl_gen_status_ok)
      return st;
  return yajl_gen_array_close (g);
}

yajl_gen_status
sandbox_report_gen (yajl_gen g, const struct sandbox_report *rep)
{
  yajl_val t = rep ? rep->tree : NULL, e, truncated;
  const char *value;
  long long n;
  yajl_gen_status st;
  if (!t)
    return yajl_gen_status_ok;
  if ((value = text (t, "value", MAX_TEXT)))
    {
      truncated = json_member (t, "value_truncated");
      if ((st = gen_key_string (g, "value", value)) != yajl_gen_status_ok
          || (st = gen_key_bool (g, "value_truncated", truncated && YAJL_IS_TRUE (truncated))) != yajl_gen_status_ok)
        return st;
      if ((n = count (t, "value_length", 1LL << 40)) >= 0 && (st = gen_key_int (g, "value_length", n)) != yajl_gen_status_ok)
        return st;
    }
  if ((e = json_member (t, "exception")) && YAJL_IS_OBJECT (e) && (st = gen_exception (g, e)) != yajl_gen_status_ok)
    return st;
  if ((st = gen_figures (g, json_member (t, "figures"))) != yajl_gen_status_ok)
    return st;
  n = count (t, "figures_dropped", 1 << 20);
  return gen_key_int (g, "figures_dropped", n < 0 ? 0 : n);
}
