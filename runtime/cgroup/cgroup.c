/* Cgroup mode detection, path resolution, and helpers shared by both backends. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

enum cgroup_mode
cgroup_detect_mode (void)
{
  struct statfs sfs;
  if (statfs ("/sys/fs/cgroup", &sfs) < 0)
    return CGROUP_MODE_NONE;
  if (sfs.f_type == CGROUP2_SUPER_MAGIC)
    return CGROUP_MODE_UNIFIED;
  if (sfs.f_type != TMPFS_MAGIC)
    return CGROUP_MODE_NONE;
  if (statfs ("/sys/fs/cgroup/unified", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    return CGROUP_MODE_HYBRID;
  return CGROUP_MODE_LEGACY;
}

const char *
cgroup_mode_name (enum cgroup_mode m)
{
  switch (m)
    {
    case CGROUP_MODE_UNIFIED:
      return "unified";
    case CGROUP_MODE_HYBRID:
      return "hybrid";
    case CGROUP_MODE_LEGACY:
      return "legacy";
    default:
      return "none";
    }
}

/* systemd's "a-b-c.slice" lives at "/a.slice/a-b.slice/a-b-c.slice". */
static char *
expand_slice (const char *slice, struct sbx_error *err)
{
  size_t n = strlen (slice);
  char *out, *p;
  if (n < 6 || strcmp (slice + n - 6, ".slice") != 0 || strchr (slice, '/'))
    {
      sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not a systemd slice name", slice);
      return NULL;
    }
  if (strcmp (slice, "-.slice") == 0)
    return xstrdup ("");
  out = xmalloc0 (n * n + 2);
  p = out;
  for (size_t i = 0; i < n - 6; i++)
    if (slice[i] == '-')
      {
        if (i == 0 || slice[i - 1] == '-' || i + 1 == n - 6)
          {
            free (out);
            sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not a valid slice name", slice);
            return NULL;
          }
        p += sprintf (p, "/%.*s.slice", (int) i, slice);
      }
  sprintf (p, "/%s", slice);
  return out;
}

char *
cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd, struct sbx_error *err)
{
  if (!cgroups_path || !*cgroups_path)
    return xasprintf ("/sbx-oci/%s", id);
  if (systemd || (strchr (cgroups_path, ':') && cgroups_path[0] != '/'))
    {
      /* "slice:prefix:name": no systemd runs here, so map it to the cgroupfs path
       * systemd would use: <expanded slice>/<prefix>-<name>.scope */
      _cleanup_free_ char *copy = xstrdup (cgroups_path), *slice_path = NULL;
      char *slice = copy, *prefix, *name;
      prefix = strchr (slice, ':');
      name = prefix ? strchr (prefix + 1, ':') : NULL;
      if (!prefix || !name || strchr (name + 1, ':'))
        {
          sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not of the form slice:prefix:name", cgroups_path);
          return NULL;
        }
      *prefix++ = '\0';
      *name++ = '\0';
      if (!*name || strchr (name, '/') || strchr (prefix, '/'))
        {
          sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not of the form slice:prefix:name", cgroups_path);
          return NULL;
        }
      slice_path = expand_slice (*slice ? slice : "system.slice", err);
      if (!slice_path)
        return NULL;
      if (strlen (name) > 6 && strcmp (name + strlen (name) - 6, ".slice") == 0)
        return xasprintf ("%s/%s", slice_path, name);
      if (*prefix)
        return xasprintf ("%s/%s-%s.scope", slice_path, prefix, name);
      return xasprintf ("%s/%s.scope", slice_path, name);
    }
  if (cgroups_path[0] == '/')
    {
      /* Normalise repeated slashes; ".." was refused by validation. */
      char *out = xmalloc0 (strlen (cgroups_path) + 1), *o = out;
      for (const char *p = cgroups_path; *p; p++)
        if (!(*p == '/' && (o > out && o[-1] == '/')))
          *o++ = *p;
      if (o > out + 1 && o[-1] == '/')
        o[-1] = '\0';
      if (strcmp (out, "/") == 0)
        {
          free (out);
          sbx_error_set (err, 0, "linux.cgroupsPath: the root cgroup cannot hold a container");
          return NULL;
        }
      return out;
    }
  /* Relative: under our own parent, never under the caller's cgroup (which on our
   * machines belongs to someone else). */
  return xasprintf ("/sbx-oci/%s", cgroups_path);
}

void
cgroup_init (struct cgroup *cg, enum cgroup_mode mode, const char *path)
{
  memset (cg, 0, sizeof *cg);
  cg->mode = mode;
  cg->path = path ? xstrdup (path) : NULL;
  cg->owned_from = CGROUP_OWNS_NOTHING;
  cg->v2_dirfd = -1;
  for (int i = 0; i < CG1_COUNT; i++)
    cg->v1_dirfd[i] = cg->v1_rootfd[i] = -1;
  cg->ops = mode == CGROUP_MODE_UNIFIED ? &cgroup_v2_ops : (mode == CGROUP_MODE_NONE ? NULL : &cgroup_v1_ops);
}

void
cgroup_drop_roots (struct cgroup *cg)
{
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_rootfd[i] >= 0)
      {
        close (cg->v1_rootfd[i]);
        cg->v1_rootfd[i] = -1;
      }
}

void
cgroup_close (struct cgroup *cg)
{
  if (cg->v2_dirfd >= 0)
    close (cg->v2_dirfd);
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_dirfd[i] >= 0)
      close (cg->v1_dirfd[i]);
  cgroup_drop_roots (cg);
  free (cg->path);
  cgroup_init (cg, CGROUP_MODE_NONE, NULL);
}

int
cgroup_open_from_state (const struct sbx_state *s, struct cgroup *cg, struct sbx_error *err)
{
  cgroup_init (cg, (enum cgroup_mode) s->cgroup_mode, s->cgroup_path);
  cg->v1_mask = s->cgroup_v1_mask;
  if (cg->mode == CGROUP_MODE_NONE || !s->cgroup_path || !*s->cgroup_path)
    {
      cg->mode = CGROUP_MODE_NONE;
      cg->ops = NULL;
      return 0;
    }
  return cg->ops->open (cg, err);
}

bool
cgroup_is_frozen (const struct sbx_state *s)
{
  struct cgroup cg;
  struct sbx_error err = { 0 };
  bool frozen = false;
  if (s->cgroup_mode == CGROUP_MODE_NONE)
    return false;
  if (cgroup_open_from_state (s, &cg, &err) == 0 && cg.ops)
    frozen = cg.ops->is_frozen (&cg) > 0;
  sbx_error_clear (&err);
  cgroup_close (&cg);
  return frozen;
}

int
cgroup_write_at (int dirfd, const char *file, const char *value, struct sbx_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  size_t len = strlen (value);
  ssize_t w;
  if (fd < 0)
    return sbx_error_set (err, errno, "open %s", file);
  w = write (fd, value, len);
  if (w < 0)
    return sbx_error_set (err, errno, "write '%s' to %s", value, file);
  return 0;
}

int
cgroup_read_pids_at (int dirfd, pid_t **pids, size_t *n, struct sbx_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  FILE *f;
  long v;
  size_t cap = 16;
  *n = 0;
  *pids = xmalloc0 (cap * sizeof (pid_t));
  if (fd < 0)
    return sbx_error_set (err, errno, "open cgroup.procs");
  f = fdopen (steal_fd (&fd), "r");
  if (!f)
    return sbx_error_set (err, errno, "fdopen cgroup.procs");
  while (fscanf (f, "%ld", &v) == 1)
    {
      if (*n == cap)
        *pids = xrealloc (*pids, (cap *= 2) * sizeof (pid_t));
      (*pids)[(*n)++] = (pid_t) v;
    }
  fclose (f);
  return 0;
}

int
cgroup_mkdir_path (int rootfd, const char *path, int *owned_from, int *out_fd, struct sbx_error *err)
{
  _cleanup_free_ char *copy = NULL;
  _cleanup_close_ int cur = -1;
  char *save = NULL, *comp;
  int idx = 0, first_created = -1;
  const char *rel = path;
  size_t depth = 0;
  /* The common case in one mkdir and one open: every ancestor exists, the leaf does
     not. A cgroup file system has no symlinks, and validation refused "..". */
  while (*rel == '/')
    rel++;
  for (const char *p = rel; *p; p++)
    depth += p[0] != '/' && (p[1] == '/' || p[1] == '\0');
  if (depth > 0 && mkdirat (rootfd, rel, 0755) == 0)
    {
      int leaf = openat (rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (owned_from && (int) depth - 1 < *owned_from)
        *owned_from = (int) depth - 1;
      if (leaf < 0)
        return sbx_error_set (err, errno, "open cgroup %s", path);
      *out_fd = leaf;
      return 0;
    }
  /* A missing ancestor (or an existing leaf): one component at a time. */
  copy = xstrdup (path);
  cur = dup (rootfd);
  if (cur < 0)
    return sbx_error_set (err, errno, "dup");
  for (comp = strtok_r (copy, "/", &save); comp; comp = strtok_r (NULL, "/", &save), idx++)
    {
      int next;
      if (mkdirat (cur, comp, 0755) == 0)
        {
          /* recorded at once: an abort further down removes it (cgroup_rmdir_made) */
          if (first_created < 0)
            first_created = idx;
          if (owned_from && idx < *owned_from)
            *owned_from = idx;
        }
      else if (errno != EEXIST)
        return sbx_error_set (err, errno, "mkdir cgroup %s", path);
      next = openat (cur, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (next < 0)
        return sbx_error_set (err, errno, "open cgroup %s", path);
      close (cur);
      cur = next;
    }
  if (owned_from && first_created >= 0 && first_created < *owned_from)
    *owned_from = first_created;
  *out_fd = steal_fd (&cur);
  return 0;
}

/* Only the leaf goes. Its ancestors stay, whoever made them: they are shared by
 * every container under the same parent. Removing the ones this container made did
 * not keep the host clean anyway (4 parallel loops under one new parent left it
 * behind: the sibling that made it found it busy, the last one out had not made it),
 * it could pull a parent from under a sibling's create between its two mkdirs, and it
 * cost a mkdir and an rmdir per level and hierarchy on every run. runc and crun leave
 * the ancestors too. A create that fails is the exception (cgroup_rmdir_made). */
int
cgroup_rmdir_leaf (int rootfd, const char *path)
{
  const char *rel = path;
  while (*rel == '/')
    rel++;
  if (unlinkat (rootfd, rel, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return -1;
  return 0;
}

/* A failed create also removes the ancestors it made (components from owned_from
 * on), deepest first, best effort: one it made may have been left without its
 * controllers enabled (v2), and later creates, finding it, would not enable them. */
void
cgroup_rmdir_made (int rootfd, const char *path, int owned_from)
{
  _cleanup_free_ char *copy = xstrdup (path);
  char *ends[256];
  int n = 0;
  char *rel = copy;
  while (*rel == '/')
    rel++;
  for (char *p = rel; *p && n < 256; p++)
    if (p[1] == '/' || p[1] == '\0')
      ends[n++] = p + 1;
  for (int i = n - 2; i >= 0 && i >= owned_from; i--)
    {
      *ends[i] = '\0';
      if (unlinkat (rootfd, rel, AT_REMOVEDIR) < 0 && errno != ENOENT)
        break; /* a sibling's cgroup lives there now */
    }
}

static bool
cgroup_empty (int dirfd)
{
  pid_t *pids = NULL;
  size_t n = 0;
  struct sbx_error err = { 0 };
  bool empty = cgroup_read_pids_at (dirfd, &pids, &n, &err) == 0 && n == 0;
  if (sbx_error_is_set (&err))
    empty = errno == ENOENT;
  sbx_error_clear (&err);
  free (pids);
  return empty;
}

int
cgroup_drain (int dirfd, bool use_cgroup_kill, struct sbx_error *err)
{
  /* Kill, then wait for the tasks to leave: a killed task stays in cgroup.procs
   * until its parent reaps it (or init does), so poll with a bound (~2 s). */
  for (int attempt = 0; attempt < 200; attempt++)
    {
      pid_t *pids = NULL;
      size_t n = 0;
      if (cgroup_empty (dirfd))
        return 0;
      if (use_cgroup_kill && attempt % 20 == 0)
        cgroup_write_at (dirfd, "cgroup.kill", "1", err), sbx_error_clear (err);
      else if (attempt % 20 == 0 && cgroup_read_pids_at (dirfd, &pids, &n, err) == 0)
        for (size_t i = 0; i < n; i++)
          kill (pids[i], SIGKILL);
      sbx_error_clear (err);
      free (pids);
      {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep (&ts, NULL);
      }
    }
  return sbx_error_set (err, EBUSY, "processes are still in the cgroup after SIGKILL");
}
