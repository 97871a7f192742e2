/* cgroup v2 backend: one directory in the unified hierarchy. The container's init
 * is placed there atomically by clone3(CLONE_INTO_CGROUP) (see spawn.c). */
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

static int
open_root (void)
{
  return open ("/sys/fs/cgroup", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* In every ancestor we created (never in one we did not), enable for its children
 * all the controllers it has, so the container's cgroup gets them. */
static int
enable_controllers (int root, const char *path, int owned_from, struct sbx_error *err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  _cleanup_close_ int cur = dup (root);
  char *save = NULL, *comp, *next;
  int idx = 0;
  for (comp = strtok_r (copy, "/", &save); comp; comp = next, idx++)
    {
      int dir = openat (cur, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      next = strtok_r (NULL, "/", &save);
      if (dir < 0)
        return sbx_error_set (err, errno, "open cgroup %s", comp);
      close (cur);
      cur = dir;
      if (next && idx >= owned_from)
        {
          char avail[512] = { 0 }, want[768] = { 0 };
          _cleanup_close_ int fd = openat (dir, "cgroup.controllers", O_RDONLY | O_CLOEXEC);
          size_t len = 0;
          if (fd < 0 || read (fd, avail, sizeof avail - 1) < 0)
            continue;
          for (char *c = strtok (avail, " \n"); c; c = strtok (NULL, " \n"))
            len += snprintf (want + len, sizeof want - len, "%s+%s", len ? " " : "", c);
          if (len && cgroup_write_at (dir, "cgroup.subtree_control", want, err) < 0)
            return sbx_error_wrap (err, "enable controllers in cgroup %s", comp);
        }
    }
  return 0;
}

static int
v2_create (struct cgroup *cg, struct sbx_error *err)
{
  _cleanup_close_ int root = open_root ();
  if (root < 0)
    return sbx_error_set (err, errno, "open /sys/fs/cgroup");
  cg->owned_from = CGROUP_OWNS_NOTHING; /* lowered as we create components */
  if (cgroup_mkdir_path (root, cg->path, &cg->owned_from, &cg->v2_dirfd, err) < 0)
    return -1;
  if (cg->owned_from != CGROUP_OWNS_NOTHING && enable_controllers (root, cg->path, cg->owned_from, err) < 0)
    return -1;
  return 0;
}

static int
v2_open (struct cgroup *cg, struct sbx_error *err)
{
  _cleanup_close_ int root = open_root ();
  const char *rel = cg->path;
  while (*rel == '/')
    rel++;
  if (root < 0)
    return sbx_error_set (err, errno, "open /sys/fs/cgroup");
  cg->v2_dirfd = openat (root, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (cg->v2_dirfd < 0 && errno != ENOENT)
    return sbx_error_set (err, errno, "open cgroup %s", cg->path);
  return 0;
}

static int
v2_enter (struct cgroup *cg, pid_t pid, struct sbx_error *err)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%d", (int) pid);
  if (cgroup_write_at (cg->v2_dirfd, "cgroup.procs", buf, err) < 0)
    return sbx_error_wrap (err, "join cgroup %s", cg->path);
  return 0;
}

static int
read_small (int dirfd, const char *file, char *buf, size_t len)
{
  _cleanup_close_ int fd = openat (dirfd, file, O_RDONLY | O_CLOEXEC);
  ssize_t n;
  if (fd < 0)
    return -1;
  n = read (fd, buf, len - 1);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return 0;
}

static int
v2_is_frozen (struct cgroup *cg)
{
  char buf[16];
  if (cg->v2_dirfd < 0 || read_small (cg->v2_dirfd, "cgroup.freeze", buf, sizeof buf) < 0)
    return 0;
  return buf[0] == '1';
}

static int
v2_freeze (struct cgroup *cg, bool frozen, struct sbx_error *err)
{
  char buf[512];
  if (cgroup_write_at (cg->v2_dirfd, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
    return -1;
  /* cgroup.events says "frozen 1" once every task has stopped. */
  for (int i = 0; frozen && i < 1000; i++)
    {
      struct timespec ts = { 0, 1000 * 1000 };
      if (read_small (cg->v2_dirfd, "cgroup.events", buf, sizeof buf) == 0 && strstr (buf, "frozen 1"))
        return 0;
      nanosleep (&ts, NULL);
    }
  if (frozen)
    return sbx_error_set (err, EBUSY, "the cgroup did not freeze");
  return 0;
}

static int
v2_pids (struct cgroup *cg, pid_t **pids, size_t *n, struct sbx_error *err)
{
  if (cg->v2_dirfd < 0)
    {
      *pids = NULL;
      *n = 0;
      return 0;
    }
  return cgroup_read_pids_at (cg->v2_dirfd, pids, n, err);
}

static int
v2_kill_all (struct cgroup *cg, int sig, struct sbx_error *err)
{
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  bool was_frozen;
  if (cg->v2_dirfd < 0)
    return 0;
  if (sig == SIGKILL && faccessat (cg->v2_dirfd, "cgroup.kill", W_OK, 0) == 0)
    return cgroup_write_at (cg->v2_dirfd, "cgroup.kill", "1", err);
  was_frozen = v2_is_frozen (cg) > 0;
  if (!was_frozen && v2_freeze (cg, true, err) < 0)
    return -1;
  if (v2_pids (cg, &pids, &n, err) == 0)
    for (size_t i = 0; i < n; i++)
      if (kill (pids[i], sig) < 0 && errno != ESRCH)
        {
          sbx_error_set (err, errno, "kill %d", (int) pids[i]);
          break;
        }
  if (!was_frozen)
    {
      struct sbx_error e2 = { 0 };
      v2_freeze (cg, false, &e2);
      sbx_error_clear (&e2);
    }
  return sbx_error_is_set (err) ? -1 : 0;
}

static int
v2_destroy (struct cgroup *cg, struct sbx_error *err)
{
  _cleanup_close_ int root = open_root ();
  if (root < 0)
    return sbx_error_set (err, errno, "open /sys/fs/cgroup");
  if (cg->v2_dirfd >= 0)
    {
      bool has_kill = faccessat (cg->v2_dirfd, "cgroup.kill", W_OK, 0) == 0;
      if (v2_is_frozen (cg) > 0)
        {
          v2_freeze (cg, false, err);
          sbx_error_clear (err);
        }
      if (cgroup_drain (cg->v2_dirfd, has_kill, err) < 0)
        return sbx_error_wrap (err, "cgroup %s", cg->path);
    }
  if (cgroup_rmdir_leaf (root, cg->path) < 0)
    return sbx_error_set (err, errno, "remove cgroup %s", cg->path);
  if (cg->aborting)
    cgroup_rmdir_made (root, cg->path, cg->owned_from);
  return 0;
}

/* cgroup_ops.release: usually the tasks are gone with the pid namespace's init. */
static int
v2_release (struct cgroup *cg, struct sbx_error *err)
{
  if (cg->v2_dirfd < 0 || cgroup_empty (cg->v2_dirfd))
    return 0;
  if (v2_is_frozen (cg) > 0 && v2_freeze (cg, false, err) < 0)
    return -1;
  return cgroup_drain (cg->v2_dirfd, faccessat (cg->v2_dirfd, "cgroup.kill", W_OK, 0) == 0, err);
}

const struct cgroup_ops cgroup_v2_ops = {
  .apply = cgroup_v2_apply,
  .stats = cgroup_v2_stats,
  .create = v2_create,
  .open = v2_open,
  .enter = v2_enter,
  .freeze = v2_freeze,
  .is_frozen = v2_is_frozen,
  .kill_all = v2_kill_all,
  .pids = v2_pids,
  .destroy = v2_destroy,
  .recycle = cgroup_v2_recycle,
  .release = v2_release,
};
