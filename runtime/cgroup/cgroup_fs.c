/* The file operations both backends share: writing a control file, reading
 * cgroup.procs, making and removing cgroup directories, and draining a cgroup of its
 * tasks. Below cgroup.c (the front that picks a backend) and the backends, so that
 * neither needs the other. */
#include "build-config.h"
#include "runtime/cgroup/cgroup_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/util.h"

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
  cur = fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
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
/* The name of a sub-cgroup (a directory) of dirfd, if there is one. */
static bool
first_subdir (int dirfd, char name[NAME_MAX + 1])
{
  int listfd = fcntl (dirfd, F_DUPFD_CLOEXEC, 3);
  DIR *d = listfd >= 0 ? fdopendir (listfd) : NULL;
  struct dirent *e;
  bool found = false;
  if (!d)
    {
      if (listfd >= 0)
        close (listfd);
      return false;
    }
  while (!found && (e = readdir (d)))
    if (e->d_type == DT_DIR && strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
      {
        snprintf (name, NAME_MAX + 1, "%s", e->d_name);
        found = true;
      }
  closedir (d);
  return found;
}

bool
cgroup_has_children (int dirfd)
{
  char name[NAME_MAX + 1];
  return first_subdir (dirfd, name);
}

/* A sub-cgroup the container froze gets no SIGKILL until it thaws (v1 freezer.state,
 * v2 cgroup.freeze); whichever file is there. */
static void
thaw_and_drain (int dirfd)
{
  struct sbx_error err = { 0 };
  if (faccessat (dirfd, "freezer.state", W_OK, 0) == 0)
    cgroup_write_at (dirfd, "freezer.state", "THAWED", &err);
  else if (faccessat (dirfd, "cgroup.freeze", W_OK, 0) == 0)
    cgroup_write_at (dirfd, "cgroup.freeze", "0", &err);
  sbx_error_clear (&err);
  cgroup_drain (dirfd, false, &err);
  sbx_error_clear (&err);
}

/* rmdir, and when the cgroup is busy, first what the container made inside its own
 * cgroup: runc and crun remove sub-cgroups too, and a delete must leave nothing it
 * cannot remove. One leaf at a time, deepest first: walk down through the first
 * sub-cgroup of each level holding only two fds (a parent and its child), thaw and
 * empty the leaf, remove it, start again from the top. Bounded by a count of steps,
 * not by depth (the container chooses the depth). A cgroup file system has no
 * symlinks; O_NOFOLLOW all the same. The container's own cgroup is left for the
 * caller, whose destroy drains its tasks. */
static int
rmdir_tree (int rootfd, const char *rel)
{
  int steps = 0;
  if (unlinkat (rootfd, rel, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  if (errno != EBUSY)
    return -1;
  while (steps < 100000)
    {
      char name[NAME_MAX + 1], child[NAME_MAX + 1];
      int parent = openat (rootfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), cur, r;
      if (parent < 0)
        return -1;
      if (!first_subdir (parent, name))
        {
          close (parent);
          break; /* no sub-cgroup left */
        }
      cur = openat (parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      while (cur >= 0 && ++steps < 100000 && first_subdir (cur, child))
        {
          int next = openat (cur, child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          close (parent);
          parent = cur;
          cur = next;
          memcpy (name, child, sizeof name);
        }
      if (cur >= 0)
        {
          thaw_and_drain (cur);
          close (cur);
        }
      r = unlinkat (parent, name, AT_REMOVEDIR);
      close (parent);
      if (r < 0 && errno != ENOENT)
        return -1; /* a sub-cgroup that stays busy: report it rather than loop */
    }
  if (unlinkat (rootfd, rel, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return -1;
  return 0;
}

int
cgroup_rmdir_leaf (int rootfd, const char *path)
{
  const char *rel = path;
  while (*rel == '/')
    rel++;
  return rmdir_tree (rootfd, rel);
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

bool
cgroup_empty (int dirfd)
{
  pid_t *pids = NULL;
  size_t n = 0;
  struct sbx_error err = { 0 };
  bool empty = cgroup_read_pids_at (dirfd, &pids, &n, &err) == 0 && n == 0;
  if (sbx_error_is_set (&err))
    empty = err.errnum == ENOENT;
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
