/* The sandbox's one writable directory: who owns it, and what a run changed in it.
 *
 * Ownership. Rootless, the sandbox user is the caller outside, so the caller's
 * directory is simply bound. As root the sandbox user is an unprivileged host id (H):
 *   - no --workdir: a fresh directory owned by H, removed after the run;
 *   - a directory owned by H: bound as it is;
 *   - owned by root: handed to H (chown of that directory only). Never idmapped to
 *     root: a file the sandbox made setuid would be a root setuid file on the host;
 *   - owned by another user U: bound through an idmapped mount that shows U as the
 *     sandbox user, so what the sandbox writes stays U's on disk.
 *
 * What changed: a bounded walk before and after the run (no symlink followed). */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/fs.h"

#define WALK_MAX_ENTRIES 10000
#define WALK_MAX_DEPTH 32

int
workdir_prepare (const struct sbx_ctx *ctx, const char *given, uid_t host_uid, gid_t host_gid, struct workdir *w,
                 struct sbx_error *err)
{
  char real[PATH_MAX];
  struct stat st;
  _cleanup_close_ int fd = -1;
  memset (w, 0, sizeof *w);
  if (!given)
    {
      const char *tmp = getenv ("TMPDIR");
      _cleanup_free_ char *tmpl = xasprintf ("%s/sbx-python-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
      if (!mkdtemp (tmpl))
        return sbx_error_set (err, errno, "make a workdir %s", tmpl);
      w->path = xstrdup (tmpl);
      w->temporary = true;
      fd = open (w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || (ctx->as_root && fchown (fd, host_uid, host_gid) < 0))
        return sbx_error_set (err, errno, "chown the workdir %s", w->path);
      return 0;
    }
  if (!realpath (given, real))
    return sbx_error_set (err, errno, "--workdir %s", given);
  if (strcmp (real, "/") == 0)
    return sbx_error_set (err, 0, "--workdir: the host's / cannot be the workdir");
  /* Acted on through one fd that is the directory, not a symlink swapped in since
     realpath: root's chown must land on what the caller named. */
  fd = open (real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    return sbx_error_set (err, errno, "--workdir %s", given);
  w->path = xstrdup (real);
  w->owner = st.st_uid;
  w->group = st.st_gid;
  if (!ctx->as_root || st.st_uid == host_uid)
    return 0;
  if (st.st_uid == 0)
    {
      if (fchown (fd, host_uid, host_gid) < 0)
        return sbx_error_set (err, errno, "--workdir %s: hand it to the sandbox user (uid %u)", given,
                              (unsigned) host_uid);
      return 0;
    }
  w->idmap = true;
  return 0;
}

void
workdir_finish (struct workdir *w)
{
  if (w->temporary && w->path)
    fs_remove_tree (AT_FDCWD, w->path);
  free (w->path);
  memset (w, 0, sizeof *w);
}

/* ------------------------------------------------------------- snapshot */

static void
add_entry (struct workdir_snapshot *s, const char *rel, const struct stat *st)
{
  if (s->n >= WALK_MAX_ENTRIES)
    {
      s->truncated = true;
      return;
    }
  if (s->n == 0 || (s->n >= 16 && (s->n & (s->n - 1)) == 0)) /* capacity 16, 32, 64, ... */
    s->e = xrealloc (s->e, (s->n ? s->n * 2 : 16) * sizeof *s->e);
  s->e[s->n++] = (struct workdir_entry) {
    .path = xstrdup (rel),
    .size = (uint64_t) st->st_size,
    .mtime_ns = (int64_t) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
    .ino = st->st_ino,
    .mode = st->st_mode,
  };
}

static void
walk (int parent, const char *prefix, int depth, struct workdir_snapshot *s)
{
  DIR *d;
  struct dirent *de;
  int fd = openat (parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  d = fdopendir (fd);
  if (!d)
    {
      close (fd);
      return;
    }
  while ((de = readdir (d)) && !s->truncated)
    {
      struct stat st;
      _cleanup_free_ char *rel = NULL;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      rel = *prefix ? xasprintf ("%s/%s", prefix, de->d_name) : xstrdup (de->d_name);
      add_entry (s, rel, &st);
      if (S_ISDIR (st.st_mode) && depth >= WALK_MAX_DEPTH)
        s->truncated = true;
      else if (S_ISDIR (st.st_mode))
        {
          int sub = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            {
              walk (sub, rel, depth + 1, s);
              close (sub);
            }
          else
            s->truncated = true; /* a directory we cannot read (mode 0): the list is incomplete */
        }
    }
  closedir (d);
}

static int
cmp_entry (const void *a, const void *b)
{
  return strcmp (((const struct workdir_entry *) a)->path, ((const struct workdir_entry *) b)->path);
}

int
workdir_snapshot_take (const char *dir, struct workdir_snapshot *s)
{
  _cleanup_close_ int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  memset (s, 0, sizeof *s);
  if (fd < 0)
    return -1;
  walk (fd, "", 0, s);
  if (s->n)
    qsort (s->e, s->n, sizeof *s->e, cmp_entry);
  return 0;
}

void
workdir_snapshot_free (struct workdir_snapshot *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->e[i].path);
  free (s->e);
  memset (s, 0, sizeof *s);
}

static bool
entry_changed (const struct workdir_entry *a, const struct workdir_entry *b)
{
  return a->size != b->size || a->mtime_ns != b->mtime_ns || a->ino != b->ino || a->mode != b->mode;
}

void
workdir_diff (const struct workdir_snapshot *before, const struct workdir_snapshot *after,
              void (*fn) (void *data, const struct workdir_entry *e, const char *change), void *data)
{
  size_t i = 0, j = 0;
  while (i < before->n || j < after->n)
    {
      int c = i == before->n ? 1 : j == after->n ? -1 : strcmp (before->e[i].path, after->e[j].path);
      if (c < 0)
        fn (data, &before->e[i++], "deleted");
      else if (c > 0)
        fn (data, &after->e[j++], "created");
      else
        {
          /* a directory's own mtime moves with its entries: those are reported */
          if (entry_changed (&before->e[i], &after->e[j]) && !S_ISDIR (after->e[j].mode))
            fn (data, &after->e[j], "modified");
          i++;
          j++;
        }
    }
}
