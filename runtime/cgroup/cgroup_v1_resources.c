/* linux.resources on cgroup v1: one writer per controller, each naming the field it
 * applies when the kernel refuses it. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <dirent.h>
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
  return dirfd >= 0 && faccessat (dirfd, file, F_OK, 0) == 0;
}

static int
write_field (int dirfd, const char *file, const char *value, const char *field, struct sbx_error *err)
{
  if (dirfd < 0)
    return sbx_error_set (err, 0, "%s: the cgroup controller for it is not joined", field);
  if (cgroup_write_at (dirfd, file, value, err) < 0)
    return sbx_error_wrap (err, "%s", field);
  return 0;
}

static int
write_i64 (int dirfd, const char *file, int64_t v, const char *field, struct sbx_error *err)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%lld", (long long) v);
  return write_field (dirfd, file, buf, field, err);
}

static int64_t
read_i64 (int dirfd, const char *file)
{
  char buf[64] = { 0 };
  _cleanup_close_ int fd = openat (dirfd, file, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, buf, sizeof buf - 1) <= 0)
    return -1;
  return strtoll (buf, NULL, 10);
}

static int
apply_memory (struct cgroup *cg, const struct oci_resources *r, struct sbx_log *log, struct sbx_error *err)
{
  int fd = cg->v1_dirfd[CG1_MEMORY];
  bool swap_ok = has_file (fd, "memory.memsw.limit_in_bytes");
  if (!r->has_memory)
    return 0;
  if (r->memory.has_check_before_update && r->memory.check_before_update && r->memory.has_limit
      && r->memory.limit > 0 && read_i64 (fd, "memory.usage_in_bytes") > r->memory.limit)
    return sbx_error_set (err, 0, "linux.resources.memory.limit: %lld is below the current usage",
                          (long long) r->memory.limit);
  if (r->memory.has_swap && r->memory.swap != 0 && !swap_ok)
    return sbx_error_set (err, 0, "linux.resources.memory.swap: swap accounting is not enabled on this host");
  /* v1 requires limit <= memsw.limit at every step: raise memsw first when growing. */
  if (r->memory.has_limit || r->memory.has_swap)
    {
      /* a cgroup made by this create has no memsw limit yet: not read back */
      int64_t cur_sw = !swap_ok ? -1
                       : (cg->v1_made & (1u << CG1_MEMORY)) ? INT64_MAX
                                                             : read_i64 (fd, "memory.memsw.limit_in_bytes");
      int64_t limit = r->memory.has_limit ? r->memory.limit : -2;
      int64_t swap = r->memory.has_swap && swap_ok ? r->memory.swap : -2;
      if (limit != -2 && swap == -2 && swap_ok && (limit == -1 || limit > cur_sw))
        swap = limit; /* keep memsw >= limit when only the limit is given */
      if (swap != -2 && (swap == -1 || swap >= cur_sw))
        {
          if (write_i64 (fd, "memory.memsw.limit_in_bytes", swap, "linux.resources.memory.swap", err) < 0)
            return -1;
          swap = -2;
        }
      if (limit != -2 && write_i64 (fd, "memory.limit_in_bytes", limit, "linux.resources.memory.limit", err) < 0)
        return -1;
      if (swap != -2 && write_i64 (fd, "memory.memsw.limit_in_bytes", swap, "linux.resources.memory.swap", err) < 0)
        return -1;
    }
  if (r->memory.has_reservation
      && write_i64 (fd, "memory.soft_limit_in_bytes", r->memory.reservation, "linux.resources.memory.reservation",
                    err) < 0)
    return -1;
  if (r->memory.has_swappiness
      && write_i64 (fd, "memory.swappiness", (int64_t) r->memory.swappiness, "linux.resources.memory.swappiness",
                    err) < 0)
    return -1;
  if (r->memory.has_disable_oom_killer
      && write_field (fd, "memory.oom_control", r->memory.disable_oom_killer ? "1" : "0",
                      "linux.resources.memory.disableOOMKiller", err) < 0)
    return -1;
  if (r->memory.has_kernel || r->memory.has_kernel_tcp)
    sbx_log_write (log, SBX_LOG_WARNING, "linux.resources.memory.kernel/kernelTCP: not supported by the kernel; ignored");
  return 0;
}

/* A v1 cpu cgroup may hand its children no more realtime time than it has itself
   (the sum of runtime/period over the children), and a new group has none: the
   /sbx-oci group we put containers under could give none to a container asking for
   linux.resources.cpu.realtimeRuntime. That group is ours, so before the container's
   write it is given what its children have plus what the container asks (computed
   again each time, so that what deleted containers had is given back). A group we
   did not make (a cgroupsPath of the caller's) is left alone: the write then fails,
   naming the field. */
static int64_t
rt_share (int64_t runtime, int64_t child_period, int64_t parent_period)
{
  if (runtime <= 0 || child_period <= 0 || parent_period <= 0)
    return 0;
  return (int64_t) (((__int128) runtime * parent_period + child_period - 1) / child_period);
}

static void
grow_our_rt_budget (struct cgroup *cg, int fd, int64_t runtime, int64_t period)
{
  _cleanup_close_ int parent = -1, list = -1;
  int64_t parent_period, total;
  DIR *d;
  struct dirent *de;
  const char *name = cg->path ? cg->path : "";
  if (strncmp (name, "/sbx-oci/", 9) != 0 || strchr (name + 9, '/') || runtime <= 0)
    return;
  parent = openat (fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
  list = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0 || list < 0 || (parent_period = read_i64 (parent, "cpu.rt_period_us")) <= 0)
    return;
  total = rt_share (runtime, period, parent_period);
  d = fdopendir (list);
  if (!d)
    return;
  list = -1; /* the DIR owns it */
  while ((de = readdir (d)))
    {
      _cleanup_close_ int child = -1;
      if (de->d_type != DT_DIR || de->d_name[0] == '.' || strcmp (de->d_name, name + 9) == 0)
        continue;
      child = openat (dirfd (d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child >= 0)
        total += rt_share (read_i64 (child, "cpu.rt_runtime_us"), read_i64 (child, "cpu.rt_period_us"),
                           parent_period);
    }
  closedir (d);
  if (total > read_i64 (parent, "cpu.rt_runtime_us"))
    {
      struct sbx_error ignored = { 0 };
      char buf[32];
      snprintf (buf, sizeof buf, "%lld", (long long) total);
      /* the kernel refuses more than the root has free: the container's write then fails */
      if (cgroup_write_at (parent, "cpu.rt_runtime_us", buf, &ignored) < 0)
        sbx_error_clear (&ignored);
    }
}

static int
apply_cpu (struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err)
{
  int fd = cg->v1_dirfd[CG1_CPU];
  if (!r->has_cpu)
    return 0;
  if (r->cpu.has_shares && r->cpu.shares
      && write_i64 (fd, "cpu.shares", (int64_t) r->cpu.shares, "linux.resources.cpu.shares", err) < 0)
    return -1;
  if (r->cpu.has_period && r->cpu.period
      && write_i64 (fd, "cpu.cfs_period_us", (int64_t) r->cpu.period, "linux.resources.cpu.period", err) < 0)
    return -1;
  if (r->cpu.has_quota && write_i64 (fd, "cpu.cfs_quota_us", r->cpu.quota == 0 ? -1 : r->cpu.quota,
                                     "linux.resources.cpu.quota", err) < 0)
    return -1;
  if (r->cpu.has_burst)
    {
      if (!has_file (fd, "cpu.cfs_burst_us"))
        return sbx_error_set (err, 0, "linux.resources.cpu.burst: not supported by this kernel");
      if (write_i64 (fd, "cpu.cfs_burst_us", (int64_t) r->cpu.burst, "linux.resources.cpu.burst", err) < 0)
        return -1;
    }
  if (r->cpu.has_realtime_period
      && write_i64 (fd, "cpu.rt_period_us", (int64_t) r->cpu.realtime_period, "linux.resources.cpu.realtimePeriod",
                    err) < 0)
    return -1;
  if (r->cpu.has_realtime_runtime)
    {
      grow_our_rt_budget (cg, fd, r->cpu.realtime_runtime,
                          r->cpu.has_realtime_period ? (int64_t) r->cpu.realtime_period
                                                     : read_i64 (fd, "cpu.rt_period_us"));
      if (write_i64 (fd, "cpu.rt_runtime_us", r->cpu.realtime_runtime, "linux.resources.cpu.realtimeRuntime", err) < 0)
        return -1;
    }
  if (r->cpu.has_idle && r->cpu.idle)
    {
      if (!has_file (fd, "cpu.idle"))
        return sbx_error_set (err, 0, "linux.resources.cpu.idle: not supported by this kernel");
      if (write_i64 (fd, "cpu.idle", r->cpu.idle, "linux.resources.cpu.idle", err) < 0)
        return -1;
    }
  fd = cg->v1_dirfd[CG1_CPUSET];
  if (r->cpu.cpus && *r->cpu.cpus && write_field (fd, "cpuset.cpus", r->cpu.cpus, "linux.resources.cpu.cpus", err) < 0)
    return -1;
  if (r->cpu.mems && *r->cpu.mems && write_field (fd, "cpuset.mems", r->cpu.mems, "linux.resources.cpu.mems", err) < 0)
    return -1;
  return 0;
}

static int
apply_pids (struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err)
{
  char buf[32];
  if (!r->has_pids_limit)
    return 0;
  if (r->pids_limit < 0)
    strcpy (buf, "max");
  else
    snprintf (buf, sizeof buf, "%lld", (long long) r->pids_limit);
  return write_field (cg->v1_dirfd[CG1_PIDS], "pids.max", buf, "linux.resources.pids.limit", err);
}

static int
write_throttles (int fd, const char *file, const struct oci_throttle *t, size_t n, const char *field,
                 struct sbx_error *err)
{
  for (size_t i = 0; i < n; i++)
    {
      char buf[64], f[96];
      snprintf (buf, sizeof buf, "%lld:%lld %llu", (long long) t[i].major, (long long) t[i].minor,
                (unsigned long long) t[i].rate);
      snprintf (f, sizeof f, "%s[%zu]", field, i);
      if (write_field (fd, file, buf, f, err) < 0)
        return -1;
    }
  return 0;
}

static int
apply_blkio (struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err)
{
  int fd = cg->v1_dirfd[CG1_BLKIO];
  /* Weights live in blkio.weight (CFQ) or blkio.bfq.weight (BFQ), whichever exists. */
  const char *weight = has_file (fd, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight";
  const char *weight_dev = has_file (fd, "blkio.weight_device") ? "blkio.weight_device" : "blkio.bfq.weight_device";
  if (!r->has_blkio)
    return 0;
  if (r->blkio.has_weight)
    {
      if (!has_file (fd, weight))
        return sbx_error_set (err, 0, "linux.resources.blockIO.weight: no I/O scheduler with weights (CFQ/BFQ)");
      if (write_i64 (fd, weight, r->blkio.weight, "linux.resources.blockIO.weight", err) < 0)
        return -1;
    }
  if (r->blkio.has_leaf_weight)
    {
      if (!has_file (fd, "blkio.leaf_weight"))
        return sbx_error_set (err, 0, "linux.resources.blockIO.leafWeight: not supported by this kernel");
      if (write_i64 (fd, "blkio.leaf_weight", r->blkio.leaf_weight, "linux.resources.blockIO.leafWeight", err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->blkio.n_weight_device; i++)
    {
      const struct oci_weight_device *d = &r->blkio.weight_device[i];
      char buf[64];
      if (d->has_leaf_weight)
        return sbx_error_set (err, 0, "linux.resources.blockIO.weightDevice[%zu].leafWeight: not supported", i);
      if (!has_file (fd, weight_dev))
        return sbx_error_set (err, 0, "linux.resources.blockIO.weightDevice: no I/O scheduler with weights");
      snprintf (buf, sizeof buf, "%lld:%lld %u", (long long) d->major, (long long) d->minor, d->weight);
      if (write_field (fd, weight_dev, buf, "linux.resources.blockIO.weightDevice", err) < 0)
        return -1;
    }
  return write_throttles (fd, "blkio.throttle.read_bps_device", r->blkio.read_bps, r->blkio.n_read_bps,
                          "linux.resources.blockIO.throttleReadBpsDevice", err) < 0
                 || write_throttles (fd, "blkio.throttle.write_bps_device", r->blkio.write_bps, r->blkio.n_write_bps,
                                     "linux.resources.blockIO.throttleWriteBpsDevice", err) < 0
                 || write_throttles (fd, "blkio.throttle.read_iops_device", r->blkio.read_iops, r->blkio.n_read_iops,
                                     "linux.resources.blockIO.throttleReadIOPSDevice", err) < 0
                 || write_throttles (fd, "blkio.throttle.write_iops_device", r->blkio.write_iops,
                                     r->blkio.n_write_iops, "linux.resources.blockIO.throttleWriteIOPSDevice", err) < 0
             ? -1
             : 0;
}

static int
apply_misc (struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      char file[96], rsvd[96];
      int fd = cg->v1_dirfd[CG1_HUGETLB];
      snprintf (file, sizeof file, "hugetlb.%s.limit_in_bytes", r->hugepage_limits[i].page_size);
      snprintf (rsvd, sizeof rsvd, "hugetlb.%s.rsvd.limit_in_bytes", r->hugepage_limits[i].page_size);
      if (fd >= 0 && !has_file (fd, file))
        return sbx_error_set (err, 0, "linux.resources.hugepageLimits[%zu]: no %s huge pages on this host", i,
                              r->hugepage_limits[i].page_size);
      /* Reservation accounting when the kernel has it (config-linux.md prefers it). */
      if (write_i64 (fd, has_file (fd, rsvd) ? rsvd : file, (int64_t) r->hugepage_limits[i].limit,
                     "linux.resources.hugepageLimits", err) < 0)
        return -1;
    }
  if (r->has_class_id
      && write_i64 (cg->v1_dirfd[CG1_NET_CLS], "net_cls.classid", r->class_id, "linux.resources.network.classID",
                    err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_net_priorities; i++)
    {
      char buf[128];
      snprintf (buf, sizeof buf, "%s %u", r->net_priorities[i].name, r->net_priorities[i].priority);
      if (write_field (cg->v1_dirfd[CG1_NET_PRIO], "net_prio.ifpriomap", buf, "linux.resources.network.priorities",
                       err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_rdma; i++)
    {
      char buf[256] = { 0 };
      size_t len = snprintf (buf, sizeof buf, "%s", r->rdma[i].device);
      if (r->rdma[i].has_handles)
        len += snprintf (buf + len, sizeof buf - len, " hca_handle=%u", r->rdma[i].handles);
      if (r->rdma[i].has_objects)
        snprintf (buf + len, sizeof buf - len, " hca_object=%u", r->rdma[i].objects);
      if (write_field (cg->v1_dirfd[CG1_RDMA], "rdma.max", buf, "linux.resources.rdma", err) < 0)
        return -1;
    }
  if (r->n_unified)
    return sbx_error_set (err, 0, "linux.resources.unified.%s: needs cgroup v2, and this host uses cgroup v1 for it",
                          r->unified[0].key);
  return 0;
}

int
cgroup_v1_apply (struct cgroup *cg, const struct oci_resources *r, const struct cgroup_device_defaults *defaults,
                 struct sbx_log *log, struct sbx_error *err)
{
  if (apply_memory (cg, r, log, err) < 0 || apply_cpu (cg, r, err) < 0 || apply_pids (cg, r, err) < 0
      || apply_blkio (cg, r, err) < 0 || apply_misc (cg, r, err) < 0)
    return -1;
  if (defaults && cg->v1_dirfd[CG1_DEVICES] >= 0)
    return cgroup_v1_devices_apply (cg->v1_dirfd[CG1_DEVICES], r, defaults, err);
  if (r->has_devices && cg->v1_dirfd[CG1_DEVICES] < 0)
    return sbx_error_set (err, 0, "linux.resources.devices: the devices cgroup is not mounted on this host");
  if (r->has_devices)
    return cgroup_v1_devices_apply (cg->v1_dirfd[CG1_DEVICES], r, NULL, err);
  return 0;
}

/* The hierarchies the config's resources need: they must exist. */
uint32_t
cgroup_v1_required_for (const struct oci_resources *r)
{
  uint32_t m = 0;
  if (r->has_memory)
    m |= 1u << CG1_MEMORY;
  if (r->has_pids_limit)
    m |= 1u << CG1_PIDS;
  if (r->has_cpu && (r->cpu.has_shares || r->cpu.has_quota || r->cpu.has_period || r->cpu.has_burst
                     || r->cpu.has_realtime_runtime || r->cpu.has_realtime_period || r->cpu.has_idle))
    m |= 1u << CG1_CPU;
  if (r->has_blkio)
    m |= 1u << CG1_BLKIO;
  if (r->has_devices)
    m |= 1u << CG1_DEVICES;
  /* only on request: cpuset (a new cpuset cgroup must be filled before use), and the
     rarer ones */
  if (r->has_cpu && ((r->cpu.cpus && *r->cpu.cpus) || (r->cpu.mems && *r->cpu.mems)))
    m |= 1u << CG1_CPUSET;
  if (r->n_hugepage_limits)
    m |= 1u << CG1_HUGETLB;
  if (r->has_class_id)
    m |= 1u << CG1_NET_CLS;
  if (r->n_net_priorities)
    m |= 1u << CG1_NET_PRIO;
  if (r->n_rdma)
    m |= 1u << CG1_RDMA;
  return m;
}

uint32_t
cgroup_v1_mask_for (const struct oci_resources *r, bool one_shot, bool cpu_numbers)
{
  /* Joined always: freezer (membership, pause, kill) and devices (the allow-list). A
   * container that may live on also joins cpuacct (the CPU numbers of every process,
   * daemons included, for `events --stats`), memory (OOM and usage reports), pids, cpu,
   * cpuset and blkio, the ones an `update` may want later (runc and crun join every
   * hierarchy). A one-shot foreground run joins
   * only what its config sets, plus cpuacct when its caller reads the numbers
   * (`sbx-oci python`) or it limits CPU (the usage goes with the limit): each
   * hierarchy is a mkdir, a join and an rmdir of a directory of control files
   * (cpuacct: 0.20 ms a run, alternated, N=400), and every memory cgroup removed
   * lingers in the kernel until its last charged page goes (over 1000 runs, each run
   * got measurably slower). */
  uint32_t m = 1u << CG1_FREEZER | 1u << CG1_DEVICES;
  if (!one_shot || cpu_numbers || r->has_cpu)
    m |= 1u << CG1_CPUACCT;
  if (!one_shot)
    m |= 1u << CG1_MEMORY | 1u << CG1_PIDS | 1u << CG1_CPU | 1u << CG1_CPUSET | 1u << CG1_BLKIO;
  return m | cgroup_v1_required_for (r);
}
