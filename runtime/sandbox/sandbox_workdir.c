/* The sandbox's writable host paths (the workdir, --rw binds): who owns them, and what
 * a run changed in the workdir.
 *
 * Ownership. Rootless, the sandbox user is the caller outside, so the caller's paths
 * are simply bound. As root the sandbox user is an unprivileged host id (H):
 *   - no --workdir: a fresh directory made by us for H, removed after the run;
 *   - a path owned by H: bound as it is;
 *   - owned by anyone else, root included: bound through an idmapped mount that shows
 *     the owner as the sandbox user, so what the sandbox writes is the owner's on disk.
 * Nothing the user named is ever chowned (a chown of --workdir /etc to H handed /etc
 * to every process of H). What would make such a file a privilege on the host (a
 * setuid or setgid bit, a file capability, a device node) the sandbox cannot create:
 * the python seccomp profile refuses those modes and xattrs (config/seccomp/profiles.py)
 * and the sandbox has no capability. The sandbox owns the path's top directory (through
 * the mapping, or as the caller), so it may chmod it: its mode is put back after the
 * run, whoever owns it.
 *
 * The path is resolved once and held open; `sbx-oci python` walks that fd, and mounts
 * it (/proc/self/fd/N) when idmapped, so a path component swapped for a symlink after
 * the check (by another run that can write the parent) cannot redirect either.
 *
 * What changed: a bounded walk before and after the run (no symlink followed). */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"

#define WALK_MAX_ENTRIES 10000
#define WALK_MAX_DEPTH 32
#define WALK_MAX_PATH_BYTES (4u << 20) /* the names kept, and so the result's size */

int
host_writable_open (const struct sbx_ctx *ctx, const char *opt, const char *given, uid_t host_uid,
                    struct host_writable *h, struct sbx_error *err)
{
  char real[PATH_MAX];
  struct stat st;
  int fd;
  memset (h, 0, sizeof *h);
  h->fd = -1;
  if (!realpath (given, real))
    return sbx_error_set (err, errno, "%s %s", opt, given);
  /* O_RDONLY, not O_PATH: the mode is put back through it after the run. A fifo or
     device named here is refused before it could block the open. */
  fd = open (real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return sbx_error_set (err, e, "%s %s", opt, given);
    }
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    {
      close (fd);
      return sbx_error_set (err, 0, "%s %s: not a directory or a regular file", opt, given);
    }
  if (syspaths_check (ctx, opt, given, real, fd, err) < 0)
    {
      close (fd);
      return -1;
    }
  h->fd = fd;
  h->path = xstrdup (real);
  h->owner = st.st_uid;
  h->group = st.st_gid;
  h->mode = st.st_mode & 07777;
  h->is_dir = S_ISDIR (st.st_mode);
  h->idmap = ctx->as_root && st.st_uid != host_uid;
  return 0;
}

char *
host_writable_mount_source (const struct host_writable *h)
{
  /* An idmapped tree is made by this process (runtime/linux/idmap.c), which holds the fd. A
     plain bind is opened by the container's init, whose fd numbers are its own: the
     path, which gives the sandbox user nothing it could not reach as itself. */
  return h->idmap ? xasprintf ("/proc/self/fd/%d", h->fd) : xstrdup (h->path);
}

int
host_writable_restore (const char *opt, struct host_writable *h, struct sbx_error *err)
{
  struct stat st;
  if (!h->path || h->fd < 0)
    return 0;
  if (fstat (h->fd, &st) < 0)
    return sbx_error_set (err, errno, "%s %s", opt, h->path);
  if ((st.st_mode & 07777) != h->mode && fchmod (h->fd, h->mode) < 0)
    return sbx_error_set (err, errno, "%s %s: put its mode back to %04o", opt, h->path, (unsigned) h->mode);
  return 0;
}

void
host_writable_close (struct host_writable *h)
{
  if (h->path && h->fd >= 0) /* (a zeroed one was never opened: its fd 0 is not ours) */
    close (h->fd);
  free (h->path);
  memset (h, 0, sizeof *h);
  h->fd = -1;
}

int
workdir_prepare (const struct sbx_ctx *ctx, const char *given, uid_t host_uid, gid_t host_gid, struct workdir *w,
                 struct sbx_error *err)
{
  memset (w, 0, sizeof *w);
  w->h.fd = -1;
  if (!given)
    {
      /* Ours: made here, so handing it to H changes nothing of the user's. */
      const char *tmp = getenv ("TMPDIR");
      _cleanup_free_ char *tmpl = xasprintf ("%s/sbx-python-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
      if (!mkdtemp (tmpl))
        return sbx_error_set (err, errno, "make a workdir %s", tmpl);
      w->h.path = xstrdup (tmpl);
      w->temporary = true;
      w->h.fd = open (w->h.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (w->h.fd < 0 || (ctx->as_root && fchown (w->h.fd, host_uid, host_gid) < 0))
        return sbx_error_set (err, errno, "chown the workdir %s", w->h.path);
      w->h.owner = host_uid;
      w->h.group = host_gid;
      return 0;
    }
  if (host_writable_open (ctx, "--workdir", given, host_uid, &w->h, err) < 0)
    return -1;
  if (!w->h.is_dir)
    return sbx_error_set (err, ENOTDIR, "--workdir %s", given);
  return 0;
}

void
workdir_finish (struct workdir *w)
{
  if (w->temporary && w->h.path)
    fs_remove_tree (AT_FDCWD, w->h.path);
  host_writable_close (&w->h);
  memset (w, 0, sizeof *w);
  w->h.fd = -1;
}

/* ------------------------------------------------------------- snapshot */

static void
add_entry (struct workdir_snapshot *s, const char *rel, const struct stat *st)
{
  if (s->n >= WALK_MAX_ENTRIES || s->path_bytes + strlen (rel) > WALK_MAX_PATH_BYTES)
    {
      s->truncated = true;
      return;
    }
  s->path_bytes += strlen (rel);
  if (s->n == 0 || (s->n >= 16 && (s->n & (s->n - 1)) == 0)) /* capacity 16, 32, 64, ... */
    s->e = xrealloc (s->e, (s->n ? s->n * 2 : 16) * sizeof *s->e);
  s->e[s->n++] = (struct workdir_entry) {
    .path = xstrdup (rel),
    .size = (uint64_t) st->st_size,
    .mtime_ns = (int64_t) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
    .ctime_ns = (int64_t) st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
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
workdir_snapshot_take (int dirfd, struct workdir_snapshot *s)
{
  /* from the held fd: the path may have been swapped for a link by now */
  _cleanup_close_ int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
  /* ctime too: the sandbox can put an mtime back (utimensat), not a ctime */
  return a->size != b->size || a->mtime_ns != b->mtime_ns || a->ctime_ns != b->ctime_ns || a->ino != b->ino
         || a->mode != b->mode;
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
