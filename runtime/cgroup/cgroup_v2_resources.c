/* linux.resources on cgroup v2, with the v1 -> v2 conversions runc and crun use
 * (cpu shares -> cpu.weight, blkio weight -> io.weight, memory+swap -> swap only). */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup_devices.h"
#include "runtime/cgroup/cgroup_fs.h"

static bool
has_file (int dirfd, const char *file)
{
  return faccessat (dirfd, file, F_OK, 0) == 0;
}

static int
write_field (int dirfd, const char *file, const char *value, const char *field, struct sbx_error *err)
{
  if (cgroup_write_at (dirfd, file, value, err) < 0)
    {
      if (err->errnum == ENOENT)
        return sbx_error_set (err, ENOENT, "%s: %s (is the controller enabled for this cgroup?)", field, file);
      return sbx_error_wrap (err, "%s", field);
    }
  return 0;
}

static int
read_line (int dirfd, const char *file, char *buf, size_t len)
{
  _cleanup_close_ int fd = openat (dirfd, file, O_RDONLY | O_CLOEXEC);
  ssize_t n;
  if (fd < 0)
    return -1;
  n = read (fd, buf, len - 1);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return 0;
}

static void
fmt_limit (char *buf, size_t len, int64_t v)
{
  if (v < 0)
    snprintf (buf, len, "max");
  else
    snprintf (buf, len, "%lld", (long long) v);
}

static int
apply_memory (int fd, const struct oci_resources *r, struct sbx_log *log, struct sbx_error *err)
{
  char buf[64];
  if (!r->has_memory)
    return 0;
  if (r->memory.has_check_before_update && r->memory.check_before_update && r->memory.has_limit && r->memory.limit > 0
      && read_line (fd, "memory.current", buf, sizeof buf) == 0 && strtoll (buf, NULL, 10) > r->memory.limit)
    return sbx_error_set (err, 0, "linux.resources.memory.limit: %lld is below the current usage",
                          (long long) r->memory.limit);
  if (r->memory.has_swap)
    {
      /* OCI swap is memory+swap; v2's memory.swap.max is swap alone. */
      int64_t limit = r->memory.has_limit ? r->memory.limit : -1;
      if (!r->memory.has_limit && read_line (fd, "memory.max", buf, sizeof buf) == 0 && strcmp (buf, "max") != 0)
        limit = strtoll (buf, NULL, 10);
      if (r->memory.swap == -1)
        strcpy (buf, "max");
      else if (r->memory.swap == 0 && limit < 0)
        strcpy (buf, "0"); /* no limit, and no swap either (as crun) */
      else if (limit < 0)
        return sbx_error_set (err, 0, "linux.resources.memory.swap: needs a memory limit on cgroup v2");
      else if (r->memory.swap < limit)
        return sbx_error_set (err, 0, "linux.resources.memory.swap: must be at least memory.limit");
      else
        snprintf (buf, sizeof buf, "%lld", (long long) (r->memory.swap - limit));
      if (!has_file (fd, "memory.swap.max"))
        {
          if (strcmp (buf, "0") != 0 && strcmp (buf, "max") != 0)
            return sbx_error_set (err, 0, "linux.resources.memory.swap: swap accounting is not enabled on this host");
        }
      else if (write_field (fd, "memory.swap.max", buf, "linux.resources.memory.swap", err) < 0)
        return -1;
    }
  if (r->memory.has_limit)
    {
      fmt_limit (buf, sizeof buf, r->memory.limit);
      if (write_field (fd, "memory.max", buf, "linux.resources.memory.limit", err) < 0)
        return -1;
    }
  if (r->memory.has_reservation)
    {
      fmt_limit (buf, sizeof buf, r->memory.reservation);
      if (write_field (fd, "memory.low", buf, "linux.resources.memory.reservation", err) < 0)
        return -1;
    }
  if (r->memory.has_swappiness)
    return sbx_error_set (err, 0, "linux.resources.memory.swappiness: not supported on cgroup v2");
  if (r->memory.has_disable_oom_killer && r->memory.disable_oom_killer)
    return sbx_error_set (err, 0, "linux.resources.memory.disableOOMKiller: not supported on cgroup v2");
  if (r->memory.has_kernel || r->memory.has_kernel_tcp)
    sbx_log_write (log, SBX_LOG_WARNING, "linux.resources.memory.kernel/kernelTCP: not supported by the kernel; ignored");
  return 0;
}

static int
apply_cpu (int fd, const struct oci_resources *r, struct sbx_error *err)
{
  char buf[64];
  if (!r->has_cpu)
    return 0;
  if (r->cpu.has_shares && r->cpu.shares)
    {
      /* 2..262144 shares -> 1..10000 weight */
      uint64_t s = r->cpu.shares < 2 ? 2 : r->cpu.shares > 262144 ? 262144 : r->cpu.shares;
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) (1 + ((s - 2) * 9999) / 262142));
      if (write_field (fd, "cpu.weight", buf, "linux.resources.cpu.shares", err) < 0)
        return -1;
    }
  if (r->cpu.has_quota || (r->cpu.has_period && r->cpu.period))
    {
      char cur[64] = "max 100000", quota[32];
      uint64_t period;
      read_line (fd, "cpu.max", cur, sizeof cur);
      period = r->cpu.has_period && r->cpu.period ? r->cpu.period : strtoull (strchr (cur, ' ') ? strchr (cur, ' ') + 1 : "100000", NULL, 10);
      if (r->cpu.has_quota)
        fmt_limit (quota, sizeof quota, r->cpu.quota == 0 ? -1 : r->cpu.quota);
      else
        snprintf (quota, sizeof quota, "%.*s", (int) strcspn (cur, " "), cur);
      snprintf (buf, sizeof buf, "%s %llu", quota, (unsigned long long) period);
      if (write_field (fd, "cpu.max", buf, "linux.resources.cpu.quota", err) < 0)
        return -1;
    }
  if (r->cpu.has_burst)
    {
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) r->cpu.burst);
      if (write_field (fd, "cpu.max.burst", buf, "linux.resources.cpu.burst", err) < 0)
        return -1;
    }
  if ((r->cpu.has_realtime_runtime && r->cpu.realtime_runtime > 0)
      || (r->cpu.has_realtime_period && r->cpu.realtime_period > 0))
    return sbx_error_set (err, 0, "linux.resources.cpu.realtimeRuntime: not supported on cgroup v2");
  if (r->cpu.has_idle && write_field (fd, "cpu.idle", r->cpu.idle ? "1" : "0", "linux.resources.cpu.idle", err) < 0)
    return -1;
  if (r->cpu.cpus && *r->cpu.cpus && write_field (fd, "cpuset.cpus", r->cpu.cpus, "linux.resources.cpu.cpus", err) < 0)
    return -1;
  if (r->cpu.mems && *r->cpu.mems && write_field (fd, "cpuset.mems", r->cpu.mems, "linux.resources.cpu.mems", err) < 0)
    return -1;
  return 0;
}

static unsigned
io_weight (unsigned blkio)
{
  /* 10..1000 -> 1..10000 */
  if (blkio < 10)
    blkio = 10;
  if (blkio > 1000)
    blkio = 1000;
  return 1 + (blkio - 10) * 9999 / 990;
}

static int
write_io_max (int fd, const struct oci_throttle *t, size_t n, const char *key, const char *field,
              struct sbx_error *err)
{
  for (size_t i = 0; i < n; i++)
    {
      char buf[96];
      snprintf (buf, sizeof buf, "%lld:%lld %s=%llu", (long long) t[i].major, (long long) t[i].minor, key,
                (unsigned long long) t[i].rate);
      if (write_field (fd, "io.max", buf, field, err) < 0)
        return -1;
    }
  return 0;
}

static int
apply_io (int fd, const struct oci_resources *r, struct sbx_error *err)
{
  const char *wfile = has_file (fd, "io.bfq.weight") ? "io.bfq.weight" : "io.weight";
  char buf[96];
  if (!r->has_blkio)
    return 0;
  if (r->blkio.has_leaf_weight)
    return sbx_error_set (err, 0, "linux.resources.blockIO.leafWeight: not supported on cgroup v2");
  if (r->blkio.has_weight)
    {
      snprintf (buf, sizeof buf, "%u", strcmp (wfile, "io.bfq.weight") == 0 ? r->blkio.weight : io_weight (r->blkio.weight));
      if (write_field (fd, wfile, buf, "linux.resources.blockIO.weight", err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->blkio.n_weight_device; i++)
    {
      const struct oci_weight_device *d = &r->blkio.weight_device[i];
      if (d->has_leaf_weight)
        return sbx_error_set (err, 0, "linux.resources.blockIO.weightDevice[%zu].leafWeight: not supported on cgroup v2", i);
      snprintf (buf, sizeof buf, "%lld:%lld %u", (long long) d->major, (long long) d->minor,
                strcmp (wfile, "io.bfq.weight") == 0 ? d->weight : io_weight (d->weight));
      if (write_field (fd, wfile, buf, "linux.resources.blockIO.weightDevice", err) < 0)
        return -1;
    }
  if (write_io_max (fd, r->blkio.read_bps, r->blkio.n_read_bps, "rbps", "linux.resources.blockIO.throttleReadBpsDevice", err) < 0
      || write_io_max (fd, r->blkio.write_bps, r->blkio.n_write_bps, "wbps", "linux.resources.blockIO.throttleWriteBpsDevice", err) < 0
      || write_io_max (fd, r->blkio.read_iops, r->blkio.n_read_iops, "riops", "linux.resources.blockIO.throttleReadIOPSDevice", err) < 0
      || write_io_max (fd, r->blkio.write_iops, r->blkio.n_write_iops, "wiops", "linux.resources.blockIO.throttleWriteIOPSDevice", err) < 0)
    return -1;
  return 0;
}

static int
apply_misc (int fd, const struct oci_resources *r, struct sbx_error *err)
{
  char buf[256];
  if (r->has_pids_limit)
    {
      fmt_limit (buf, sizeof buf, r->pids_limit);
      if (write_field (fd, "pids.max", buf, "linux.resources.pids.limit", err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      char file[96], rsvd[96];
      snprintf (file, sizeof file, "hugetlb.%s.max", r->hugepage_limits[i].page_size);
      snprintf (rsvd, sizeof rsvd, "hugetlb.%s.rsvd.max", r->hugepage_limits[i].page_size);
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) r->hugepage_limits[i].limit);
      if (write_field (fd, has_file (fd, rsvd) ? rsvd : file, buf, "linux.resources.hugepageLimits", err) < 0)
        return -1;
    }
  if (r->has_network)
    return sbx_error_set (err, 0, "linux.resources.network: net_cls/net_prio do not exist on cgroup v2");
  for (size_t i = 0; i < r->n_rdma; i++)
    {
      size_t len = snprintf (buf, sizeof buf, "%s", r->rdma[i].device);
      if (r->rdma[i].has_handles)
        len += snprintf (buf + len, sizeof buf - len, " hca_handle=%u", r->rdma[i].handles);
      if (r->rdma[i].has_objects)
        snprintf (buf + len, sizeof buf - len, " hca_object=%u", r->rdma[i].objects);
      if (write_field (fd, "rdma.max", buf, "linux.resources.rdma", err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_unified; i++)
    {
      char field[160];
      snprintf (field, sizeof field, "linux.resources.unified.%s", r->unified[i].key);
      /* "Configuration unknown to the runtime MUST still be written": the file decides. */
      if (write_field (fd, r->unified[i].key, r->unified[i].value, field, err) < 0)
        return -1;
    }
  return 0;
}

int
cgroup_v2_apply (struct cgroup *cg, const struct oci_resources *r, const struct cgroup_device_defaults *defaults,
                 struct sbx_log *log, struct sbx_error *err)
{
  int fd = cg->v2_dirfd;
  if (fd < 0)
    return sbx_error_set (err, ENOENT, "the container's cgroup does not exist");
  if (apply_memory (fd, r, log, err) < 0 || apply_cpu (fd, r, err) < 0 || apply_io (fd, r, err) < 0
      || apply_misc (fd, r, err) < 0)
    return -1;
  if (defaults || r->has_devices)
    return cgroup_v2_devices_apply (fd, r, defaults, err);
  return 0;
}
