/* A container's scope as systemd unit properties (systemd_props.h). The limits are
 * converted as runc's systemd driver converts them (cpu shares to CPUWeight, a
 * quota to CPUQuotaPerSecUSec rounded up to whole percents, OCI's memory+swap to
 * swap alone); the cgroup files are then written by the v1/v2 backend as well, which
 * checks and sets everything systemd has no property for. */
#include "build-config.h"
#include "runtime/cgroup/systemd_props.h"

#include <dbus/dbus.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/util.h"

#define ANNOTATION_PREFIX "org.systemd.property."

/* libdbus fails an append only when out of memory: abort, as xmalloc does. */
static void
need (dbus_bool_t ok)
{
  if (!ok)
    abort ();
}

/* One "(sv)" entry: NAME, a variant of basic type TYPE holding *VALUE. */
static void
prop_basic (DBusMessageIter *props, const char *name, int type, const void *value)
{
  DBusMessageIter entry, var;
  char sig[2] = { (char) type, '\0' };
  need (dbus_message_iter_open_container (props, DBUS_TYPE_STRUCT, NULL, &entry));
  need (dbus_message_iter_append_basic (&entry, DBUS_TYPE_STRING, &name));
  need (dbus_message_iter_open_container (&entry, DBUS_TYPE_VARIANT, sig, &var));
  need (dbus_message_iter_append_basic (&var, type, value));
  need (dbus_message_iter_close_container (&entry, &var));
  need (dbus_message_iter_close_container (props, &entry));
}

static void
prop_bool (DBusMessageIter *props, const char *name, bool v)
{
  dbus_bool_t b = v;
  prop_basic (props, name, DBUS_TYPE_BOOLEAN, &b);
}

static void
prop_u64 (DBusMessageIter *props, const char *name, uint64_t v)
{
  dbus_uint64_t u = v;
  prop_basic (props, name, DBUS_TYPE_UINT64, &u);
}

static void
prop_string (DBusMessageIter *props, const char *name, const char *v)
{
  prop_basic (props, name, DBUS_TYPE_STRING, &v);
}

/* "PIDs": an array of uint32, the init's and the keeper's if there is one. */
static void
prop_pids (DBusMessageIter *props, pid_t pid, pid_t keeper)
{
  DBusMessageIter entry, var, arr;
  const char *name = "PIDs";
  dbus_uint32_t p = (dbus_uint32_t) pid, k = (dbus_uint32_t) keeper;
  need (dbus_message_iter_open_container (props, DBUS_TYPE_STRUCT, NULL, &entry));
  need (dbus_message_iter_append_basic (&entry, DBUS_TYPE_STRING, &name));
  need (dbus_message_iter_open_container (&entry, DBUS_TYPE_VARIANT, "au", &var));
  need (dbus_message_iter_open_container (&var, DBUS_TYPE_ARRAY, "u", &arr));
  need (dbus_message_iter_append_basic (&arr, DBUS_TYPE_UINT32, &p));
  if (keeper > 0)
    need (dbus_message_iter_append_basic (&arr, DBUS_TYPE_UINT32, &k));
  need (dbus_message_iter_close_container (&var, &arr));
  need (dbus_message_iter_close_container (&entry, &var));
  need (dbus_message_iter_close_container (props, &entry));
}

/* -1 (OCI's "no limit") is systemd's infinity. */
static uint64_t
limit_or_infinity (int64_t v)
{
  return v < 0 ? UINT64_MAX : (uint64_t) v;
}

static void
memory_props (DBusMessageIter *props, const struct oci_resources *r)
{
  if (r->memory.has_limit && r->memory.limit != 0)
    prop_u64 (props, "MemoryMax", limit_or_infinity (r->memory.limit));
  if (r->memory.has_reservation && r->memory.reservation != 0)
    prop_u64 (props, "MemoryLow", limit_or_infinity (r->memory.reservation));
  /* OCI's swap is memory+swap; systemd's MemorySwapMax is swap alone. A combination
     the cgroup files refuse is left to them (cgroup_v2_resources.c names the field). */
  if (r->memory.has_swap && r->memory.swap == -1)
    prop_u64 (props, "MemorySwapMax", UINT64_MAX);
  else if (r->memory.has_swap && r->memory.has_limit && r->memory.limit > 0 && r->memory.swap >= r->memory.limit)
    prop_u64 (props, "MemorySwapMax", (uint64_t) (r->memory.swap - r->memory.limit));
}

static void
cpu_props (DBusMessageIter *props, const struct oci_resources *r)
{
  uint64_t period = r->cpu.has_period && r->cpu.period ? r->cpu.period : 100000;
  if (r->cpu.has_shares && r->cpu.shares)
    {
      /* clamped to v1's range first, as the file backend does: systemd refuses a
         weight beyond 1..10000 */
      uint64_t shares = r->cpu.shares < 2 ? 2 : r->cpu.shares > 262144 ? 262144 : r->cpu.shares;
      prop_u64 (props, "CPUWeight", 1 + ((shares - 2) * 9999) / 262142);
    }
  if (r->cpu.has_period && r->cpu.period)
    prop_u64 (props, "CPUQuotaPeriodUSec", r->cpu.period);
  if (r->cpu.has_quota && r->cpu.quota > 0)
    {
      /* systemd keeps the quota as whole percents of a CPU: rounded up, as runc does,
         so that the cgroup's own cpu.max is never above what systemd writes back */
      uint64_t per_sec = (uint64_t) r->cpu.quota * 1000000 / period;
      per_sec = (per_sec + 9999) / 10000 * 10000;
      prop_u64 (props, "CPUQuotaPerSecUSec", per_sec);
    }
  else if (r->cpu.has_quota && r->cpu.quota < 0)
    prop_u64 (props, "CPUQuotaPerSecUSec", UINT64_MAX);
}

/* systemd refuses TasksMax 0; pids.max 0 is written to the file all the same, and 1
   holds no less (the init is in the scope already: only forks count). */
static uint64_t
tasks_max (int64_t limit)
{
  return limit < 0 ? UINT64_MAX : limit == 0 ? 1 : (uint64_t) limit;
}

static void
resource_props (DBusMessageIter *props, const struct oci_resources *r)
{
  memory_props (props, r);
  cpu_props (props, r);
  /* Always, for a scope: otherwise systemd applies DefaultTasksMax (15% of the
     host's pid limit) to it, and writes that again at every daemon-reload. */
  prop_u64 (props, "TasksMax", tasks_max (r->has_pids_limit ? r->pids_limit : -1));
  if (r->blkio.has_weight && r->blkio.weight)
    {
      uint64_t w = r->blkio.weight < 10 ? 10 : r->blkio.weight > 1000 ? 1000 : r->blkio.weight;
      prop_u64 (props, "IOWeight", 1 + (w - 10) * 9999 / 990);
    }
}

/* An integer annotation: "uint64 N" (or uint32, int64, int32), or a bare N, which
   GVariant's text reads as an int32. */
static bool
annotation_int (DBusMessageIter *props, const char *name, const char *text)
{
  static const struct
  {
    const char *word;
    int type;
  } typed[] = { { "uint64 ", DBUS_TYPE_UINT64 }, { "uint32 ", DBUS_TYPE_UINT32 },
                { "int64 ", DBUS_TYPE_INT64 },   { "int32 ", DBUS_TYPE_INT32 } };
  int type = DBUS_TYPE_INT32;
  const char *num = text;
  char *end;
  for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
    if (strncmp (text, typed[i].word, strlen (typed[i].word)) == 0)
      {
        type = typed[i].type;
        num = text + strlen (typed[i].word);
      }
  errno = 0;
  if (type == DBUS_TYPE_UINT64 || type == DBUS_TYPE_UINT32)
    {
      dbus_uint64_t u = strtoull (num, &end, 10);
      dbus_uint32_t u32 = (dbus_uint32_t) u;
      if (*num < '0' || *num > '9' || *end || errno || (type == DBUS_TYPE_UINT32 && u > UINT32_MAX))
        return false;
      prop_basic (props, name, type, type == DBUS_TYPE_UINT64 ? (void *) &u : (void *) &u32);
      return true;
    }
  dbus_int64_t v = strtoll (num, &end, 10);
  dbus_int32_t v32 = (dbus_int32_t) v;
  if (!*num || *end || errno || (type == DBUS_TYPE_INT32 && (v < INT32_MIN || v > INT32_MAX)))
    return false;
  prop_basic (props, name, type, type == DBUS_TYPE_INT64 ? (void *) &v : (void *) &v32);
  return true;
}

/* An annotation's value in GVariant's text form, as runc reads it: true/false, a
   quoted string, or an integer (annotation_int). */
static int
annotation_prop (DBusMessageIter *props, const char *key, const char *text, struct sbx_error *err)
{
  const char *name = key + strlen (ANNOTATION_PREFIX);
  size_t n = strlen (text);
  if (!*name)
    return sbx_error_set (err, 0, "annotations.%s: no property name", key);
  /* These say which unit and whose: the container's scope must be its own. */
  if (!strcmp (name, "PIDs") || !strcmp (name, "Slice") || !strcmp (name, "Delegate"))
    return sbx_error_set (err, 0, "annotations.%s: the runtime sets %s itself", key, name);
  if (!strcmp (text, "true") || !strcmp (text, "false"))
    {
      prop_bool (props, name, text[0] == 't');
      return 0;
    }
  if (n >= 2 && (text[0] == '\'' || text[0] == '"') && text[n - 1] == text[0])
    {
      _cleanup_free_ char *s = xasprintf ("%.*s", (int) (n - 2), text + 1);
      if (strchr (s, text[0]) || strchr (s, '\\'))
        return sbx_error_set (err, 0, "annotations.%s: '%s': escapes in a quoted string are not supported", key, text);
      prop_string (props, name, s);
      return 0;
    }
  if (annotation_int (props, name, text))
    return 0;
  return sbx_error_set (err, 0,
                        "annotations.%s: '%s' is not a boolean, a quoted string or an integer in GVariant "
                        "text (e.g. 'uint64 5')",
                        key, text);
}

static int
annotation_props (DBusMessageIter *props, yajl_val annotations, struct sbx_error *err)
{
  if (!annotations || !YAJL_IS_OBJECT (annotations))
    return 0;
  for (size_t i = 0; i < annotations->u.object.len; i++)
    {
      const char *key = annotations->u.object.keys[i];
      yajl_val v = annotations->u.object.values[i];
      if (strncmp (key, ANNOTATION_PREFIX, strlen (ANNOTATION_PREFIX)) != 0 || !YAJL_IS_STRING (v))
        continue;
      if (annotation_prop (props, key, YAJL_GET_STRING (v), err) < 0)
        return -1;
    }
  return 0;
}

int
sd_props_fill_start (DBusMessageIter *args, const void *data, struct sbx_error *err)
{
  const struct sd_scope_spec *s = data;
  const char *mode = "fail";
  DBusMessageIter props, aux;
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_STRING, &s->unit));
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_STRING, &mode));
  need (dbus_message_iter_open_container (args, DBUS_TYPE_ARRAY, "(sv)", &props));
  prop_string (&props, "Description", s->description);
  prop_string (&props, "Slice", s->slice);
  prop_pids (&props, s->pid, s->keeper);
  /* The scope's subtree is ours to write; systemd leaves it alone (its cgroup
     delegation rules) and gives it every controller. */
  prop_bool (&props, "Delegate", true);
  prop_bool (&props, "DefaultDependencies", false);
  prop_bool (&props, "MemoryAccounting", true);
  prop_bool (&props, "CPUAccounting", true);
  prop_bool (&props, "IOAccounting", true);
  prop_bool (&props, "TasksAccounting", true);
  resource_props (&props, s->resources);
  if (annotation_props (&props, s->annotations, err) < 0)
    {
      dbus_message_iter_abandon_container (args, &props);
      return -1;
    }
  need (dbus_message_iter_close_container (args, &props));
  need (dbus_message_iter_open_container (args, DBUS_TYPE_ARRAY, "(sa(sv))", &aux));
  need (dbus_message_iter_close_container (args, &aux));
  return 0;
}

int
sd_props_fill_update (DBusMessageIter *args, const void *data, struct sbx_error *err)
{
  const struct sd_update_spec *s = data;
  dbus_bool_t runtime = TRUE;
  DBusMessageIter props;
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_STRING, &s->unit));
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_BOOLEAN, &runtime));
  need (dbus_message_iter_open_container (args, DBUS_TYPE_ARRAY, "(sv)", &props));
  memory_props (&props, s->resources);
  cpu_props (&props, s->resources);
  if (s->resources->has_pids_limit)
    prop_u64 (&props, "TasksMax", tasks_max (s->resources->pids_limit));
  need (dbus_message_iter_close_container (args, &props));
  return 0;
}

int
sd_props_fill_unit (DBusMessageIter *args, const void *unit, struct sbx_error *err)
{
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_STRING, &unit));
  return 0;
}

int
sd_props_fill_stop (DBusMessageIter *args, const void *unit, struct sbx_error *err)
{
  const char *mode = "replace";
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_STRING, &unit));
  need (dbus_message_iter_append_basic (args, DBUS_TYPE_STRING, &mode));
  return 0;
}
