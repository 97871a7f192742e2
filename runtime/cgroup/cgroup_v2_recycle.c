/* A kept v2 cgroup made as fresh as a new one for its next container (cgroup.h,
 * cgroup_ops.recycle; why keep one: cgroup_v1_recycle.c). In its one directory:
 *   no task and no sub-cgroup (else it is someone's: refused), not frozen, at most
 *   one device filter (apply replaces it);
 *   what the last container charged reclaimed (memory.reclaim, only when more than
 *   KEPT_MEMORY_SLACK is left), then no more than that left;
 *   memory.peak reset (6.12+: the reset holds for reads through the fd that wrote it,
 *   kept in cgroup.v2_peak_fd for the stats; a kernel that cannot reset it cannot
 *   recycle);
 *   the counters that cannot be reset (memory.events, pids.events, cpu.stat) taken as
 *   the baseline stats subtract.
 * The limits are the config's: apply writes them after this, as for a new cgroup. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup_devices.h"
#include "runtime/cgroup/cgroup_fs.h"

/* as on v1 (cgroup_v1_recycle.c): a page cache page or a kernel object of the last
   container's, or the per-CPU charge batch */
#define KEPT_MEMORY_SLACK (1u << 20)

static uint64_t
read_current (int fd)
{
  char buf[32] = "";
  _cleanup_close_ int f = openat (fd, "memory.current", O_RDONLY | O_CLOEXEC);
  if (f < 0 || read (f, buf, sizeof buf - 1) <= 0)
    return UINT64_MAX;
  return strtoull (buf, NULL, 10);
}

static int
reclaim (int fd, struct sbx_error *err)
{
  uint64_t left = read_current (fd);
  if (left > KEPT_MEMORY_SLACK)
    {
      char amount[32];
      struct sbx_error ignored = { 0 };
      snprintf (amount, sizeof amount, "%llu", (unsigned long long) left);
      /* EAGAIN when not all of it could be: what is left is judged below */
      cgroup_write_at (fd, "memory.reclaim", amount, &ignored);
      sbx_error_clear (&ignored);
      left = read_current (fd);
    }
  if (left > KEPT_MEMORY_SLACK)
    return sbx_error_set (err, EBUSY, "%llu bytes are still charged after memory.reclaim",
                          (unsigned long long) left);
  return 0;
}

static int
reset_peak (struct cgroup *cg, struct sbx_error *err)
{
  int fd = openat (cg->v2_dirfd, "memory.peak", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return sbx_error_set (err, errno, "memory.peak cannot be reset");
  if (write (fd, "reset\n", 6) < 0)
    {
      int e = errno;
      close (fd);
      return sbx_error_set (err, e, "memory.peak cannot be reset");
    }
  if (cg->v2_peak_fd >= 0)
    close (cg->v2_peak_fd);
  cg->v2_peak_fd = fd;
  return 0;
}

int
cgroup_v2_recycle (struct cgroup *cg, struct sbx_error *err)
{
  int fd = cg->v2_dirfd;
  if (!cgroup_empty (fd))
    return sbx_error_set (err, EBUSY, "kept cgroup %s has tasks", cg->path);
  if (cgroup_has_children (fd))
    return sbx_error_set (err, EBUSY, "kept cgroup %s has a sub-cgroup", cg->path);
  /* apply replaces the one filter; more would pile up if a detach ever failed */
  if (cgroup_v2_device_filters (fd) > 1)
    return sbx_error_set (err, 0, "kept cgroup %s has more than one device filter", cg->path);
  if ((faccessat (fd, "cgroup.freeze", W_OK, 0) == 0 && cgroup_write_at (fd, "cgroup.freeze", "0", err) < 0)
      || reclaim (fd, err) < 0 || reset_peak (cg, err) < 0)
    return sbx_error_wrap (err, "kept cgroup %s", cg->path);
  cg->has_base = false;
  cgroup_v2_stats (cg, &cg->base);
  cg->has_base = true;
  return 0;
}
