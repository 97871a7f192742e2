/* Kept cgroups: `serve` gives each of its sandbox slots one cgroup path, reused by one
 * sandbox after another (create_opts.kept_cgroup). A container's create that finds
 * the cgroup in place recycles it (cgroup_ops.recycle: as fresh as a new one, or
 * removed and made anew), its end only empties it (cgroup_ops.release), and the
 * server removes its kept cgroups when it stops, or the next server does those of one
 * that was killed (cgroup_sweep_children). What is here is the backends' common part. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup_fs.h"

bool
cgroup_was_there (const struct cgroup *cg)
{
  if (cg->mode == CGROUP_MODE_UNIFIED)
    return cg->v2_dirfd >= 0 && cg->owned_from == CGROUP_OWNS_NOTHING;
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_dirfd[i] >= 0 && !(cg->v1_made & (1u << i)))
      return true;
  return false;
}

bool
cgroup_path_is_kept (const char *path)
{
  const char *last = path ? strrchr (path, '/') : NULL;
  return last && strncmp (last + 1, "@serve-", 7) == 0;
}

static int
open_root (const char *hierarchy)
{
  char path[64];
  snprintf (path, sizeof path, "/sys/fs/cgroup%s%s", hierarchy ? "/" : "", hierarchy ? hierarchy : "");
  return open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Each hierarchy's root (v2: the one), in turn, for FN. */
static void
each_root (void (*fn) (int root, const void *arg), const void *arg)
{
  enum cgroup_mode mode = cgroup_detect_mode ();
  if (mode == CGROUP_MODE_NONE)
    return;
  for (int i = mode == CGROUP_MODE_UNIFIED ? -1 : 0; i < (mode == CGROUP_MODE_UNIFIED ? 0 : CG1_COUNT); i++)
    {
      _cleanup_close_ int root = open_root (i < 0 ? NULL : cgroup_v1_names[i]);
      if (root >= 0)
        fn (root, arg);
    }
}

static const char *
relative (const char *path)
{
  while (*path == '/')
    path++;
  return path;
}

/* Ours (this server's): whatever is in it killed, then removed, sub-cgroups too. */
static void
empty_and_remove_at (int root, const void *arg)
{
  const char *path = arg;
  _cleanup_close_ int fd = openat (root, relative (path), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct sbx_error err = { 0 };
  if (fd < 0)
    return;
  if (faccessat (fd, "freezer.state", W_OK, 0) == 0)
    cgroup_write_at (fd, "freezer.state", "THAWED", &err);
  else if (faccessat (fd, "cgroup.freeze", W_OK, 0) == 0)
    cgroup_write_at (fd, "cgroup.freeze", "0", &err);
  sbx_error_clear (&err);
  cgroup_drain (fd, faccessat (fd, "cgroup.kill", W_OK, 0) == 0, &err);
  sbx_error_clear (&err);
  cgroup_rmdir_leaf (root, path);
}

void
cgroup_empty_and_remove (const char *path)
{
  each_root (empty_and_remove_at, path);
}

struct sweep
{
  const char *parent;
  bool (*stale) (const char *name);
};

/* Not ours (a server that is gone): each removed only if empty, nothing killed. */
static void
sweep_at (int root, const void *arg)
{
  const struct sweep *sw = arg;
  int fd = openat (root, relative (sw->parent), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *e;
  if (!d)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((e = readdir (d)))
    if (e->d_type == DT_DIR && e->d_name[0] != '.' && sw->stale (e->d_name))
      unlinkat (dirfd (d), e->d_name, AT_REMOVEDIR);
  closedir (d);
}

void
cgroup_sweep_children (const char *parent, bool (*stale) (const char *name))
{
  struct sweep sw = { parent, stale };
  each_root (sweep_at, &sw);
}
