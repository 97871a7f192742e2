#include "build-config.h"
#include "oci/resources.h"

#include <stdio.h>
#include <string.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

/* Memory values are limits in bytes or -1 for unlimited. */
static int
get_memory_value (yajl_val obj, const char *path, const char *key, int64_t *out, bool *has, struct sbx_error *err)
{
  if (json_get_i64 (obj, path, key, false, -1, INT64_MAX, out, has, err) < 0)
    return -1;
  return 0;
}

static int
parse_memory (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val m = NULL;
  _cleanup_free_ char *p = xasprintf ("%s.memory", path);
  if (json_get_object (obj, path, "memory", false, &m, err) < 0)
    return -1;
  if (!m)
    return 0;
  r->has_memory = true;
  if (get_memory_value (m, p, "limit", &r->memory.limit, &r->memory.has_limit, err) < 0
      || get_memory_value (m, p, "reservation", &r->memory.reservation, &r->memory.has_reservation, err) < 0
      || get_memory_value (m, p, "swap", &r->memory.swap, &r->memory.has_swap, err) < 0
      || get_memory_value (m, p, "kernel", &r->memory.kernel, &r->memory.has_kernel, err) < 0
      || get_memory_value (m, p, "kernelTCP", &r->memory.kernel_tcp, &r->memory.has_kernel_tcp, err) < 0
      || json_get_u64 (m, p, "swappiness", false, 100, &r->memory.swappiness, &r->memory.has_swappiness, err) < 0
      || json_get_bool (m, p, "disableOOMKiller", &r->memory.disable_oom_killer, &r->memory.has_disable_oom_killer,
                        err) < 0
      || json_get_bool (m, p, "useHierarchy", &r->memory.use_hierarchy, &r->memory.has_use_hierarchy, err) < 0
      || json_get_bool (m, p, "checkBeforeUpdate", &r->memory.check_before_update,
                        &r->memory.has_check_before_update, err) < 0)
    return -1;
  if (r->memory.has_limit && r->memory.has_swap && r->memory.limit > 0 && r->memory.swap > 0
      && r->memory.swap < r->memory.limit)
    return sbx_error_set (err, 0, "%s.swap: %lld is less than memory.limit %lld (swap is memory+swap)", p,
                          (long long) r->memory.swap, (long long) r->memory.limit);
  return 0;
}

static bool
valid_cpu_list (const char *s)
{
  /* "0-3,7": digits, commas, dashes; empty allowed (means unchanged) */
  for (const char *p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || *p == ',' || *p == '-'))
      return false;
  return true;
}

static int
parse_cpu (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val c = NULL;
  _cleanup_free_ char *p = xasprintf ("%s.cpu", path);
  if (json_get_object (obj, path, "cpu", false, &c, err) < 0)
    return -1;
  if (!c)
    return 0;
  r->has_cpu = true;
  if (json_get_u64 (c, p, "shares", false, UINT64_MAX, &r->cpu.shares, &r->cpu.has_shares, err) < 0
      || json_get_i64 (c, p, "quota", false, -1, INT64_MAX, &r->cpu.quota, &r->cpu.has_quota, err) < 0
      || json_get_u64 (c, p, "burst", false, UINT64_MAX, &r->cpu.burst, &r->cpu.has_burst, err) < 0
      || json_get_u64 (c, p, "period", false, UINT64_MAX, &r->cpu.period, &r->cpu.has_period, err) < 0
      || json_get_i64 (c, p, "realtimeRuntime", false, -1, INT64_MAX, &r->cpu.realtime_runtime,
                       &r->cpu.has_realtime_runtime, err) < 0
      || json_get_u64 (c, p, "realtimePeriod", false, UINT64_MAX, &r->cpu.realtime_period,
                       &r->cpu.has_realtime_period, err) < 0
      || json_get_string (c, p, "cpus", false, &r->cpu.cpus, err) < 0
      || json_get_string (c, p, "mems", false, &r->cpu.mems, err) < 0
      || json_get_i64 (c, p, "idle", false, 0, 1, &r->cpu.idle, &r->cpu.has_idle, err) < 0)
    return -1;
  if (r->cpu.cpus && !valid_cpu_list (r->cpu.cpus))
    return sbx_error_set (err, 0, "%s.cpus: '%s' is not a CPU list like 0-3,7", p, r->cpu.cpus);
  if (r->cpu.mems && !valid_cpu_list (r->cpu.mems))
    return sbx_error_set (err, 0, "%s.mems: '%s' is not a node list like 0-1", p, r->cpu.mems);
  if (r->cpu.has_burst && r->cpu.has_quota && r->cpu.quota > 0 && r->cpu.burst > (uint64_t) r->cpu.quota)
    return sbx_error_set (err, 0, "%s.burst: must not be larger than quota", p);
  if (r->cpu.has_period && r->cpu.period && (r->cpu.period < 1000 || r->cpu.period > 1000000))
    return sbx_error_set (err, 0, "%s.period: %llu is outside [1000, 1000000] microseconds", p,
                          (unsigned long long) r->cpu.period);
  return 0;
}

static int
parse_throttles (yajl_val obj, const char *path, const char *key, struct oci_throttle **out, size_t *n,
                 struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (obj, path, key, false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  *out = xmalloc0 (arr->u.array.len * sizeof **out + 1);
  *n = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *ep = xasprintf ("%s.%s[%zu]", path, key, i);
      if (json_expect_object (e, ep, err) < 0
          || json_get_i64 (e, ep, "major", true, 0, 0xfff, &(*out)[i].major, NULL, err) < 0
          || json_get_i64 (e, ep, "minor", true, 0, 0xfffff, &(*out)[i].minor, NULL, err) < 0
          || json_get_u64 (e, ep, "rate", true, UINT64_MAX, &(*out)[i].rate, NULL, err) < 0)
        return -1;
    }
  return 0;
}

static int
parse_blkio (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val b = NULL, wd = NULL;
  uint64_t v;
  _cleanup_free_ char *p = xasprintf ("%s.blockIO", path);
  if (json_get_object (obj, path, "blockIO", false, &b, err) < 0)
    return -1;
  if (!b)
    return 0;
  r->has_blkio = true;
  if (json_get_u64 (b, p, "weight", false, 10000, &v, &r->blkio.has_weight, err) < 0)
    return -1;
  r->blkio.weight = (uint16_t) v;
  if (json_get_u64 (b, p, "leafWeight", false, 10000, &v, &r->blkio.has_leaf_weight, err) < 0)
    return -1;
  r->blkio.leaf_weight = (uint16_t) v;
  if (json_get_array (b, p, "weightDevice", false, &wd, err) < 0)
    return -1;
  if (wd)
    {
      r->blkio.weight_device = xmalloc0 (wd->u.array.len * sizeof *r->blkio.weight_device + 1);
      r->blkio.n_weight_device = wd->u.array.len;
      for (size_t i = 0; i < wd->u.array.len; i++)
        {
          struct oci_weight_device *d = &r->blkio.weight_device[i];
          yajl_val e = wd->u.array.values[i];
          _cleanup_free_ char *ep = xasprintf ("%s.weightDevice[%zu]", p, i);
          if (json_expect_object (e, ep, err) < 0 || json_get_i64 (e, ep, "major", true, 0, 0xfff, &d->major, NULL, err) < 0
              || json_get_i64 (e, ep, "minor", true, 0, 0xfffff, &d->minor, NULL, err) < 0
              || json_get_u64 (e, ep, "weight", false, 10000, &v, &d->has_weight, err) < 0)
            return -1;
          d->weight = (uint16_t) v;
          if (json_get_u64 (e, ep, "leafWeight", false, 10000, &v, &d->has_leaf_weight, err) < 0)
            return -1;
          d->leaf_weight = (uint16_t) v;
          if (!d->has_weight && !d->has_leaf_weight)
            return sbx_error_set (err, 0, "%s: needs weight or leafWeight", ep);
        }
    }
  if (parse_throttles (b, p, "throttleReadBpsDevice", &r->blkio.read_bps, &r->blkio.n_read_bps, err) < 0
      || parse_throttles (b, p, "throttleWriteBpsDevice", &r->blkio.write_bps, &r->blkio.n_write_bps, err) < 0
      || parse_throttles (b, p, "throttleReadIOPSDevice", &r->blkio.read_iops, &r->blkio.n_read_iops, err) < 0
      || parse_throttles (b, p, "throttleWriteIOPSDevice", &r->blkio.write_iops, &r->blkio.n_write_iops, err) < 0)
    return -1;
  return 0;
}

static int
parse_hugepages (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (obj, path, "hugepageLimits", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  r->hugepage_limits = xmalloc0 (arr->u.array.len * sizeof *r->hugepage_limits + 1);
  r->n_hugepage_limits = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_hugepage_limit *h = &r->hugepage_limits[i];
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *ep = xasprintf ("%s.hugepageLimits[%zu]", path, i);
      const char *ps;
      if (json_expect_object (e, ep, err) < 0 || json_get_string (e, ep, "pageSize", true, &h->page_size, err) < 0
          || json_get_u64 (e, ep, "limit", true, UINT64_MAX, &h->limit, NULL, err) < 0)
        return -1;
      ps = h->page_size;
      /* <size><KB|MB|GB>, used as a file name: digits and a unit only. */
      if (!*ps || strspn (ps, "0123456789") == 0 || (strcmp (ps + strspn (ps, "0123456789"), "KB") != 0
                                                    && strcmp (ps + strspn (ps, "0123456789"), "MB") != 0
                                                    && strcmp (ps + strspn (ps, "0123456789"), "GB") != 0))
        return sbx_error_set (err, 0, "%s.pageSize: '%s' is not like 2MB or 1GB", ep, ps);
    }
  return 0;
}

static int
parse_network (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val n = NULL, prio = NULL;
  uint64_t v;
  _cleanup_free_ char *p = xasprintf ("%s.network", path);
  if (json_get_object (obj, path, "network", false, &n, err) < 0)
    return -1;
  if (!n)
    return 0;
  r->has_network = true;
  if (json_get_u64 (n, p, "classID", false, UINT32_MAX, &v, &r->has_class_id, err) < 0)
    return -1;
  r->class_id = (uint32_t) v;
  if (json_get_array (n, p, "priorities", false, &prio, err) < 0)
    return -1;
  if (prio)
    {
      r->net_priorities = xmalloc0 (prio->u.array.len * sizeof *r->net_priorities + 1);
      r->n_net_priorities = prio->u.array.len;
      for (size_t i = 0; i < prio->u.array.len; i++)
        {
          yajl_val e = prio->u.array.values[i];
          _cleanup_free_ char *ep = xasprintf ("%s.priorities[%zu]", p, i);
          if (json_expect_object (e, ep, err) < 0
              || json_get_string (e, ep, "name", true, &r->net_priorities[i].name, err) < 0
              || json_get_u64 (e, ep, "priority", true, UINT32_MAX, &v, NULL, err) < 0)
            return -1;
          r->net_priorities[i].priority = (uint32_t) v;
          if (strpbrk (r->net_priorities[i].name, " \n/"))
            return sbx_error_set (err, 0, "%s.name: not an interface name", ep);
        }
    }
  return 0;
}

static int
parse_rdma (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val m = NULL;
  uint64_t v;
  if (json_get_object (obj, path, "rdma", false, &m, err) < 0)
    return -1;
  if (!m)
    return 0;
  r->rdma = xmalloc0 (m->u.object.len * sizeof *r->rdma + 1);
  r->n_rdma = m->u.object.len;
  for (size_t i = 0; i < m->u.object.len; i++)
    {
      struct oci_rdma *d = &r->rdma[i];
      _cleanup_free_ char *ep = xasprintf ("%s.rdma.%s", path, m->u.object.keys[i]);
      d->device = m->u.object.keys[i];
      if (json_expect_object (m->u.object.values[i], ep, err) < 0
          || json_get_u64 (m->u.object.values[i], ep, "hcaHandles", false, UINT32_MAX, &v, &d->has_handles, err) < 0)
        return -1;
      d->handles = (uint32_t) v;
      if (json_get_u64 (m->u.object.values[i], ep, "hcaObjects", false, UINT32_MAX, &v, &d->has_objects, err) < 0)
        return -1;
      d->objects = (uint32_t) v;
      if (!d->has_handles && !d->has_objects)
        return sbx_error_set (err, 0, "%s: needs hcaHandles or hcaObjects", ep);
      if (strpbrk (d->device, " \n/="))
        return sbx_error_set (err, 0, "%s: not a device name", ep);
    }
  return 0;
}

static int
parse_unified (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val m = NULL;
  if (json_get_object (obj, path, "unified", false, &m, err) < 0)
    return -1;
  if (!m)
    return 0;
  r->unified = xmalloc0 (m->u.object.len * sizeof *r->unified + 1);
  r->n_unified = m->u.object.len;
  for (size_t i = 0; i < m->u.object.len; i++)
    {
      const char *k = m->u.object.keys[i];
      yajl_val v = m->u.object.values[i];
      /* A key is a file name in the container's cgroup directory, nothing else. */
      if (!*k || strchr (k, '/') || k[0] == '.' || !strchr (k, '.'))
        return sbx_error_set (err, 0, "%s.unified.%s: not a cgroup file name", path, k);
      if (!v || v->type != yajl_t_string)
        return sbx_error_set (err, 0, "%s.unified.%s: expected a string, got %s", path, k, json_type_name (v));
      r->unified[i].key = k;
      r->unified[i].value = v->u.string;
    }
  return 0;
}

static int
parse_devices (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (obj, path, "devices", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  r->has_devices = true;
  r->devices = xmalloc0 (arr->u.array.len * sizeof *r->devices + 1);
  r->n_devices = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_device_rule *d = &r->devices[i];
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *ep = xasprintf ("%s.devices[%zu]", path, i);
      const char *type = NULL, *access = NULL;
      bool has_major = false, has_minor = false;
      if (json_expect_object (e, ep, err) < 0)
        return -1;
      if (!json_member (e, "allow"))
        return sbx_error_set (err, 0, "%s.allow: required field is missing", ep);
      if (json_get_bool (e, ep, "allow", &d->allow, NULL, err) < 0
          || json_get_string (e, ep, "type", false, &type, err) < 0
          || json_get_i64 (e, ep, "major", false, -1, 0xfff, &d->major, &has_major, err) < 0
          || json_get_i64 (e, ep, "minor", false, -1, 0xfffff, &d->minor, &has_minor, err) < 0
          || json_get_string (e, ep, "access", false, &access, err) < 0)
        return -1;
      if (!has_major)
        d->major = -1;
      if (!has_minor)
        d->minor = -1;
      d->type = type && *type ? type[0] : 'a';
      if ((type && strlen (type) > 1) || !strchr ("acb", d->type))
        return sbx_error_set (err, 0, "%s.type: '%s' is not a, c or b", ep, type);
      if (!access || !*access)
        access = "rwm";
      if (strlen (access) > 3 || strspn (access, "rwm") != strlen (access))
        return sbx_error_set (err, 0, "%s.access: '%s' is not a combination of r, w, m", ep, access);
      strcpy (d->access, access);
    }
  return 0;
}

int
oci_resources_parse (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err)
{
  yajl_val pids = NULL;
  memset (r, 0, sizeof *r);
  if (!obj)
    return 0;
  if (json_expect_object (obj, path, err) < 0 || parse_memory (obj, path, r, err) < 0
      || parse_cpu (obj, path, r, err) < 0 || json_get_object (obj, path, "pids", false, &pids, err) < 0)
    return -1;
  if (pids)
    {
      _cleanup_free_ char *pp = xasprintf ("%s.pids", path);
      r->has_pids = true;
      if (json_get_i64 (pids, pp, "limit", false, -1, INT64_MAX, &r->pids_limit, &r->has_pids_limit, err) < 0)
        return -1;
    }
  if (parse_blkio (obj, path, r, err) < 0 || parse_hugepages (obj, path, r, err) < 0
      || parse_network (obj, path, r, err) < 0 || parse_rdma (obj, path, r, err) < 0
      || parse_unified (obj, path, r, err) < 0 || parse_devices (obj, path, r, err) < 0)
    return -1;
  return 0;
}

void
oci_resources_clear (struct oci_resources *r)
{
  free (r->blkio.weight_device);
  free (r->blkio.read_bps);
  free (r->blkio.write_bps);
  free (r->blkio.read_iops);
  free (r->blkio.write_iops);
  free (r->hugepage_limits);
  free (r->net_priorities);
  free (r->rdma);
  free (r->unified);
  free (r->devices);
  memset (r, 0, sizeof *r);
}

bool
oci_resources_empty (const struct oci_resources *r)
{
  return !r->has_memory && !r->has_cpu && !r->has_pids && !r->has_blkio && !r->n_hugepage_limits && !r->has_network
         && !r->n_rdma && !r->n_unified && !r->has_devices;
}
