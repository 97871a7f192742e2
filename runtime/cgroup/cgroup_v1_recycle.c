/* A kept v1 cgroup made as fresh as a new one for its next container (cgroup.h,
 * cgroup_ops.recycle; the kept cgroups of `serve` in cgroup_kept.c).
 *
 * Why keep one: making and removing a memory cgroup for every run was about a tenth
 * of all the CPU `serve` used (perf, 8 clients: the kernel's worker offlining it,
 * reparent_shrinker_deferred, alone 4.5%), and each removed one lingers in the kernel
 * until its last charged page goes.
 *
 * What "fresh" means, hierarchy by hierarchy, for one the create found in place:
 *   all        no task and no sub-cgroup (else it is someone's: refused)
 *   freezer    THAWED (an empty cgroup can still be FROZEN)
 *   memory     what the last container charged reclaimed (memory.force_empty),
 *              then no more than KEPT_MEMORY_SLACK left; the peak and the failure
 *              counts reset. The OOM kills cannot be: baseline.
 *   cpuacct    the CPU time reset (cpuacct.usage also clears user and system)
 *   pids       nothing to reset; the refused forks (pids.events) cannot be: baseline
 *   cpu        its limits are the config's (apply); the throttling counts: baseline
 *   devices    the allow-list is written again in full by apply
 * Any other hierarchy (cpuset, blkio, ...) keeps state apply does not rewrite: a
 * cgroup with one of those is not recycled. The limits themselves are the config's:
 * apply writes them after this, as for a new cgroup. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup_fs.h"

/* What force_empty may leave charged (kernel objects of the last container still
   referenced elsewhere, such as the dentries of files it made in a host directory):
   more, and the next container would start with less memory than a new cgroup's. */
#define KEPT_MEMORY_SLACK (1u << 20)

#define RECYCLABLE                                                                                                     \
  (1u << CG1_FREEZER | 1u << CG1_MEMORY | 1u << CG1_CPUACCT | 1u << CG1_PIDS | 1u << CG1_CPU | 1u << CG1_DEVICES)

static int
reset (int fd, const char *file, const char *value, bool optional, struct sbx_error *err)
{
  if (optional && faccessat (fd, file, W_OK, 0) < 0)
    return 0;
  return cgroup_write_at (fd, file, value, err);
}

static uint64_t
read_usage (int fd)
{
  char buf[32] = "";
  _cleanup_close_ int f = openat (fd, "memory.usage_in_bytes", O_RDONLY | O_CLOEXEC);
  if (f < 0 || read (f, buf, sizeof buf - 1) <= 0)
    return UINT64_MAX;
  return strtoull (buf, NULL, 10);
}

static int
reset_memory (int fd, struct sbx_error *err)
{
  uint64_t left = read_usage (fd);
  /* force_empty reclaims every page charged here (EBUSY if some cannot be), but it
     walks every shrinker of the host for the cgroup (perf: as much CPU as removing
     the cgroup saved): only when more than the slack is left */
  if (left > KEPT_MEMORY_SLACK)
    {
      if (cgroup_write_at (fd, "memory.force_empty", "0", err) < 0)
        return -1;
      left = read_usage (fd);
    }
  if (left > KEPT_MEMORY_SLACK)
    return sbx_error_set (err, EBUSY, "%llu bytes are still charged after memory.force_empty",
                          (unsigned long long) left);
  if (reset (fd, "memory.max_usage_in_bytes", "0", false, err) < 0 || reset (fd, "memory.failcnt", "0", false, err) < 0
      || reset (fd, "memory.memsw.max_usage_in_bytes", "0", true, err) < 0
      || reset (fd, "memory.memsw.failcnt", "0", true, err) < 0)
    return -1;
  return 0;
}

/* The leaf of every joined hierarchy the create found in place: empty, no children. */
static int
check_unused (struct cgroup *cg, struct sbx_error *err)
{
  for (int i = 0; i < CG1_COUNT; i++)
    {
      int fd = cg->v1_dirfd[i];
      if (fd < 0)
        continue;
      /* (the hierarchies' names are cgroup_v1.c's, which calls this file) */
      if (!(RECYCLABLE & (1u << i)))
        return sbx_error_set (err, 0, "it is in a hierarchy other than freezer, memory, cpuacct, pids, cpu and devices");
      if (!cgroup_empty (fd))
        return sbx_error_set (err, EBUSY, "it has tasks");
      if (cgroup_has_children (fd))
        return sbx_error_set (err, EBUSY, "it has a sub-cgroup");
    }
  return 0;
}

int
cgroup_v1_recycle (struct cgroup *cg, struct sbx_error *err)
{
  int mem = cg->v1_dirfd[CG1_MEMORY], acct = cg->v1_dirfd[CG1_CPUACCT];
  int freezer = cg->v1_dirfd[CG1_FREEZER];
  if (check_unused (cg, err) < 0)
    return sbx_error_wrap (err, "kept cgroup %s", cg->path);
  if ((freezer >= 0 && cgroup_write_at (freezer, "freezer.state", "THAWED", err) < 0)
      || (mem >= 0 && reset_memory (mem, err) < 0) || (acct >= 0 && cgroup_write_at (acct, "cpuacct.usage", "0", err) < 0))
    return sbx_error_wrap (err, "kept cgroup %s", cg->path);
  cg->has_base = false;
  cgroup_v1_stats (cg, &cg->base);
  cg->has_base = true;
  return 0;
}
