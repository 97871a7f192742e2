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

static void
minus (uint64_t *v, uint64_t base)
{
  *v = *v > base ? *v - base : 0;
}

void
cgroup_subtract_base (const struct cgroup *cg, struct cgroup_stats *s)
{
  const struct cgroup_stats *b = &cg->base;
  if (!cg->has_base)
    return;
  minus (&s->memory_failcnt, b->memory_failcnt);
  minus (&s->memory_max_events, b->memory_max_events);
  minus (&s->oom_kill, b->oom_kill);
  minus (&s->pids_max_events, b->pids_max_events);
  minus (&s->cpu_usage_ns, b->cpu_usage_ns);
  minus (&s->cpu_user_ns, b->cpu_user_ns);
  minus (&s->cpu_system_ns, b->cpu_system_ns);
  minus (&s->cpu_throttled_periods, b->cpu_throttled_periods);
  minus (&s->cpu_throttled_ns, b->cpu_throttled_ns);
}

static int
open_root (const char *hierarchy)
{
  char path[64];
  snprintf (path, sizeof path, "/sys/fs/cgroup%s%s", hierarchy ? "/" : "", hierarchy ? hierarchy : "");
  return open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

void
cgroup_remove_everywhere (const char *path)
{
  enum cgroup_mode mode = cgroup_detect_mode ();
  if (mode == CGROUP_MODE_NONE)
    return;
  for (int i = mode == CGROUP_MODE_UNIFIED ? -1 : 0; i < (mode == CGROUP_MODE_UNIFIED ? 0 : CG1_COUNT); i++)
    {
      _cleanup_close_ int root = open_root (i < 0 ? NULL : cgroup_v1_names[i]);
      if (root >= 0)
        cgroup_rmdir_leaf (root, path);
    }
}

void
cgroup_sweep_children (const char *parent, bool (*stale) (const char *name))
{
  enum cgroup_mode mode = cgroup_detect_mode ();
  _cleanup_close_ int root = -1;
  int fd;
  DIR *d;
  struct dirent *e;
  if (mode == CGROUP_MODE_NONE)
    return;
  /* every v1 container is in the freezer hierarchy (cgroup_v1.c) */
  root = open_root (mode == CGROUP_MODE_UNIFIED ? NULL : "freezer");
  while (*parent == '/')
    parent++;
  fd = root >= 0 ? openat (root, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  d = fd >= 0 ? fdopendir (fd) : NULL;
  if (!d)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((e = readdir (d)))
    if (e->d_type == DT_DIR && e->d_name[0] != '.' && stale (e->d_name))
      {
        _cleanup_free_ char *path = xasprintf ("/%s/%s", parent, e->d_name);
        cgroup_remove_everywhere (path);
      }
  closedir (d);
}
