/* cgroup v1 backend: one directory per hierarchy (freezer, memory, pids, ...).
 * Used on legacy hosts and, on hybrid hosts, for every controller bound to v1.
 * The freezer hierarchy is always joined: it gives membership (ps, kill --all,
 * delete) and pause. The others are joined only when the config uses them, since
 * every cgroup.procs write costs (see tests/bench). */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup_fs.h"

const char *const cgroup_v1_names[CG1_COUNT] = {
  [CG1_FREEZER] = "freezer", [CG1_MEMORY] = "memory",   [CG1_PIDS] = "pids",       [CG1_CPU] = "cpu",
  [CG1_CPUACCT] = "cpuacct", [CG1_CPUSET] = "cpuset",   [CG1_BLKIO] = "blkio",     [CG1_DEVICES] = "devices",
  [CG1_NET_CLS] = "net_cls", [CG1_NET_PRIO] = "net_prio", [CG1_HUGETLB] = "hugetlb", [CG1_RDMA] = "rdma",
};

static int
open_hierarchy (enum cgroup_v1_ctrl c)
{
  char path[64];
  snprintf (path, sizeof path, "/sys/fs/cgroup/%s", cgroup_v1_names[c]);
  return open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The first joined hierarchy is the one whose cgroup.procs lists the container. */
static int
tracking_fd (struct cgroup *cg)
{
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_dirfd[i] >= 0)
      return cg->v1_dirfd[i];
  return -1;
}

/* A new cpuset cgroup starts with no CPUs and no memory nodes, and no task can join
 * it: give each level we walk through its parent's sets (those we did not create
 * already have theirs). */
static int
fill_cpuset (int root, const char *path, struct sbx_error *err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  _cleanup_close_ int parent = dup (root);
  char *save = NULL;
  for (char *comp = strtok_r (copy, "/", &save); comp; comp = strtok_r (NULL, "/", &save))
    {
      static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
      int dir = openat (parent, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (dir < 0)
        return sbx_error_set (err, errno, "open cpuset cgroup %s", comp);
      for (size_t f = 0; f < ARRAY_SIZE (files); f++)
        {
          char mine[256] = { 0 }, theirs[256] = { 0 };
          _cleanup_close_ int a = openat (dir, files[f], O_RDONLY | O_CLOEXEC);
          _cleanup_close_ int b = openat (parent, files[f], O_RDONLY | O_CLOEXEC);
          if (a < 0 || b < 0 || read (a, mine, sizeof mine - 1) < 0 || read (b, theirs, sizeof theirs - 1) < 0)
            continue;
          if (mine[0] == '\n' || mine[0] == '\0')
            {
              theirs[strcspn (theirs, "\n")] = '\0';
              if (cgroup_write_at (dir, files[f], theirs, err) < 0)
                {
                  close (dir);
                  return sbx_error_wrap (err, "cgroup cpuset %s", comp);
                }
            }
        }
      close (parent);
      parent = dir;
    }
  return 0;
}

static int
v1_create (struct cgroup *cg, struct sbx_error *err)
{
  cg->owned_from = CGROUP_OWNS_NOTHING; /* lowered as we create components */
  cg->v1_mask |= 1u << CG1_FREEZER;
  for (int i = 0; i < CG1_COUNT; i++)
    {
      int root;
      if (!(cg->v1_mask & (1u << i)))
        continue;
      root = cg->v1_rootfd[i] = open_hierarchy (i);
      if (root < 0)
        {
          if (!(cg->v1_required & (1u << i)))
            {
              /* Not needed by the config: track membership through another hierarchy. */
              cg->v1_mask &= ~(1u << i);
              continue;
            }
          return sbx_error_set (err, errno, "linux.resources: cgroup v1 controller %s is not mounted at "
                                            "/sys/fs/cgroup/%s", cgroup_v1_names[i], cgroup_v1_names[i]);
        }
      {
        int owned = CGROUP_OWNS_NOTHING;
        int r = cgroup_mkdir_path (root, cg->path, &owned, &cg->v1_dirfd[i], err);
        if (owned < cg->owned_from)
          cg->owned_from = owned;
        if (r < 0)
          return sbx_error_wrap (err, "cgroup %s", cgroup_v1_names[i]);
        if (owned != CGROUP_OWNS_NOTHING)
          cg->v1_made |= 1u << i;
      }
      if (i == CG1_CPUSET && fill_cpuset (root, cg->path, err) < 0)
        return -1;
    }
  if (tracking_fd (cg) < 0)
    return sbx_error_set (err, 0, "no cgroup v1 hierarchy is usable (freezer is not mounted)");
  return 0;
}

static int
v1_open (struct cgroup *cg, struct sbx_error *err)
{
  const char *rel = cg->path;
  while (*rel == '/')
    rel++;
  for (int i = 0; i < CG1_COUNT; i++)
    {
      _cleanup_close_ int root = -1;
      if (!(cg->v1_mask & (1u << i)))
        continue;
      root = open_hierarchy (i);
      if (root < 0)
        continue;
      cg->v1_dirfd[i] = openat (root, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (cg->v1_dirfd[i] < 0 && errno != ENOENT)
        return sbx_error_set (err, errno, "open cgroup %s%s", cgroup_v1_names[i], cg->path);
    }
  return 0;
}

static int
v1_enter (struct cgroup *cg, pid_t pid, struct sbx_error *err)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%d", (int) pid);
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_dirfd[i] >= 0 && cgroup_write_at (cg->v1_dirfd[i], "cgroup.procs", buf, err) < 0)
      return sbx_error_wrap (err, "join cgroup %s%s", cgroup_v1_names[i], cg->path);
  return 0;
}

/* The calling (single-threaded) process joins every hierarchy by writing "0" to its
 * `tasks`. Moving one's own thread is the one migration the kernel does without
 * write-locking cgroup_threadgroup_rwsem, whose percpu rwsem otherwise waits for an
 * RCU grace period whenever it has been idle for a moment: measured on our hybrid
 * hosts, 5-7 ms per cgroup.procs write after a 0.3 s pause against 0.035 ms for this
 * (the "idle gap" of tests/bench). The caller must have no other thread. */
static int
v1_enter_self (struct cgroup *cg, struct sbx_error *err)
{
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_dirfd[i] >= 0 && cgroup_write_at (cg->v1_dirfd[i], "tasks", "0", err) < 0)
      return sbx_error_wrap (err, "join cgroup %s%s", cgroup_v1_names[i], cg->path);
  return 0;
}

static int
read_freezer_state (int fd, char *buf, size_t len)
{
  _cleanup_close_ int f = openat (fd, "freezer.state", O_RDONLY | O_CLOEXEC);
  ssize_t n;
  if (f < 0)
    return -1;
  n = read (f, buf, len - 1);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return 0;
}

static int
v1_freeze (struct cgroup *cg, bool frozen, struct sbx_error *err)
{
  int fd = cg->v1_dirfd[CG1_FREEZER];
  char state[32];
  if (fd < 0)
    return sbx_error_set (err, ENOTSUP, "the freezer cgroup is not available");
  if (cgroup_write_at (fd, "freezer.state", frozen ? "FROZEN" : "THAWED", err) < 0)
    return -1;
  /* FREEZING is transitional; wait (bounded) until every task stopped. */
  for (int i = 0; frozen && i < 1000; i++)
    {
      struct timespec ts = { 0, 1000 * 1000 };
      if (read_freezer_state (fd, state, sizeof state) == 0 && strcmp (state, "FROZEN") == 0)
        return 0;
      cgroup_write_at (fd, "freezer.state", "FROZEN", err);
      sbx_error_clear (err);
      nanosleep (&ts, NULL);
    }
  if (frozen)
    return sbx_error_set (err, EBUSY, "the cgroup did not freeze");
  return 0;
}

static int
v1_is_frozen (struct cgroup *cg)
{
  char state[32];
  if (cg->v1_dirfd[CG1_FREEZER] < 0 || read_freezer_state (cg->v1_dirfd[CG1_FREEZER], state, sizeof state) < 0)
    return 0;
  return strcmp (state, "FROZEN") == 0;
}

static int
v1_pids (struct cgroup *cg, pid_t **pids, size_t *n, struct sbx_error *err)
{
  int fd = tracking_fd (cg);
  if (fd < 0)
    {
      *pids = NULL;
      *n = 0;
      return 0;
    }
  return cgroup_read_pids_at (fd, pids, n, err);
}

static int
v1_kill_all (struct cgroup *cg, int sig, struct sbx_error *err)
{
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  bool was_frozen = v1_is_frozen (cg) > 0;
  bool can_freeze = cg->v1_dirfd[CG1_FREEZER] >= 0;
  /* Freeze first so no task can fork a child we would miss, signal, then thaw
   * (a frozen task does not act on SIGKILL until thawed). */
  if (can_freeze && !was_frozen && v1_freeze (cg, true, err) < 0)
    return -1;
  if (v1_pids (cg, &pids, &n, err) < 0)
    goto out;
  for (size_t i = 0; i < n; i++)
    if (kill (pids[i], sig) < 0 && errno != ESRCH)
      {
        sbx_error_set (err, errno, "kill %d", (int) pids[i]);
        goto out;
      }
out:
  if (can_freeze && (!was_frozen || sig == SIGKILL))
    {
      struct sbx_error e2 = { 0 };
      v1_freeze (cg, false, &e2);
      sbx_error_clear (&e2);
    }
  return sbx_error_is_set (err) ? -1 : 0;
}

static int
v1_rmdir_all (struct cgroup *cg, struct sbx_error *err)
{
  for (int i = 0; i < CG1_COUNT; i++)
    {
      _cleanup_close_ int opened = -1;
      int root;
      if (!(cg->v1_mask & (1u << i)))
        continue;
      root = cg->v1_rootfd[i] >= 0 ? cg->v1_rootfd[i] : (opened = open_hierarchy (i));
      if (root < 0)
        continue;
      if (cgroup_rmdir_leaf (root, cg->path) < 0)
        return sbx_error_set (err, errno, "remove cgroup %s%s", cgroup_v1_names[i], cg->path);
      if (cg->aborting && (cg->v1_made & (1u << i)))
        cgroup_rmdir_made (root, cg->path, cg->owned_from);
    }
  return 0;
}

static int
v1_destroy (struct cgroup *cg, struct sbx_error *err)
{
  int fd = tracking_fd (cg);
  /* Usually the tasks are gone already (a pid namespace's init takes them along,
   * and the init was reaped): the rmdirs alone do it, and a busy cgroup refuses
   * them (EBUSY) before anything is removed, since every task is in every
   * hierarchy. Only then thaw, kill and wait. Saves reading freezer.state and
   * cgroup.procs on every run. */
  if (fd < 0)
    return v1_rmdir_all (cg, err);
  if (v1_rmdir_all (cg, err) == 0)
    return 0;
  if (err->errnum != EBUSY)
    return -1;
  sbx_error_clear (err);
  if (v1_is_frozen (cg) > 0)
    {
      v1_freeze (cg, false, err);
      sbx_error_clear (err);
    }
  if (cgroup_drain (fd, false, err) < 0)
    return sbx_error_wrap (err, "cgroup %s", cg->path);
  return v1_rmdir_all (cg, err);
}

/* cgroup_ops.release: usually the tasks are gone with the pid namespace's init. */
static int
v1_release (struct cgroup *cg, struct sbx_error *err)
{
  int fd = tracking_fd (cg);
  if (fd < 0 || cgroup_empty (fd))
    return 0;
  if (v1_is_frozen (cg) > 0 && v1_freeze (cg, false, err) < 0)
    return -1;
  return cgroup_drain (fd, false, err);
}

const struct cgroup_ops cgroup_v1_ops = {
  .apply = cgroup_v1_apply,
  .stats = cgroup_v1_stats,
  .create = v1_create,
  .open = v1_open,
  .enter = v1_enter,
  .enter_self = v1_enter_self,
  .freeze = v1_freeze,
  .is_frozen = v1_is_frozen,
  .kill_all = v1_kill_all,
  .pids = v1_pids,
  .destroy = v1_destroy,
  .recycle = cgroup_v1_recycle,
  .release = v1_release,
};
