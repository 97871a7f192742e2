#include "build-config.h"
#include "runtime/linux/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"

int
sys_openat2 (int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
  struct open_how how = { .flags = (uint64_t) flags, .mode = flags & (O_CREAT | O_TMPFILE) ? mode : 0,
                          .resolve = resolve };
  int fd;
  do
    fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
  while (fd < 0 && errno == EAGAIN); /* RESOLVE_IN_ROOT retries on a concurrent rename */
  return fd;
}

/* Paths are given as in the config ("/dev/null" or "dev/null"); from the root
 * both mean the same, and an empty remainder means the root itself. */
static const char *
root_relative (const char *path)
{
  while (*path == '/')
    path++;
  return *path ? path : ".";
}

int
fs_open_in_root (int rootfd, const char *path, int flags, struct sbx_error *err)
{
  int fd = sys_openat2 (rootfd, root_relative (path), flags | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  if (fd < 0)
    return sbx_error_set (err, errno, "open %s in the container root", path);
  return fd;
}

bool
fs_exists_in_root (int rootfd, const char *path)
{
  int fd = sys_openat2 (rootfd, root_relative (path), O_PATH | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  if (fd < 0)
    return false;
  close (fd);
  return true;
}

int
fs_open_parent_in_root (int rootfd, const char *path, char **name, bool create, struct sbx_error *err)
{
  _cleanup_free_ char *copy = xstrdup (root_relative (path));
  char *slash;
  size_t len = strlen (copy);
  /* Trailing slashes do not make a different last component. */
  while (len > 1 && copy[len - 1] == '/')
    copy[--len] = '\0';
  slash = strrchr (copy, '/');
  if (!slash)
    {
      *name = xstrdup (copy);
      return create ? fs_mkdir_in_root (rootfd, ".", 0755, err)
                    : fs_open_in_root (rootfd, ".", O_PATH | O_DIRECTORY, err);
    }
  *slash = '\0';
  *name = xstrdup (slash + 1);
  if (create)
    return fs_mkdir_in_root (rootfd, copy, 0755, err);
  return fs_open_in_root (rootfd, copy, O_PATH | O_DIRECTORY, err);
}

int
fs_mkdir_in_root (int rootfd, const char *path, mode_t mode, struct sbx_error *err)
{
  const char *rel = root_relative (path);
  _cleanup_free_ char *prefix = NULL;
  size_t len;
  int fd = sys_openat2 (rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT)
    return sbx_error_set (err, errno, "open directory %s in the container root", path);

  /* Walk the components: open each prefix resolved inside the root (symlinks in the
   * rootfs are followed, within the root), and create what is missing with mkdirat
   * relative to the already-opened parent, which cannot escape. */
  len = strlen (rel);
  prefix = xmalloc0 (len + 1);
  {
    _cleanup_close_ int parent = fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
    size_t pos = 0;
    if (parent < 0)
      return sbx_error_set (err, errno, "dup");
    while (pos < len)
      {
        size_t start = pos, end;
        _cleanup_free_ char *comp = NULL;
        int next;
        while (start < len && rel[start] == '/')
          start++;
        if (start >= len)
          break;
        end = start;
        while (end < len && rel[end] != '/')
          end++;
        comp = strndup (rel + start, end - start);
        memcpy (prefix, rel, end);
        prefix[end] = '\0';
        pos = end;
        next = sys_openat2 (rootfd, prefix, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
        if (next < 0 && errno == ENOENT)
          {
            if (FS_CREATE (mkdirat (parent, comp, mode)) < 0 && errno != EEXIST)
              return sbx_error_set (err, errno, "mkdir %s in the container root", prefix);
            next = sys_openat2 (rootfd, prefix, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
          }
        if (next < 0)
          return sbx_error_set (err, errno, "open directory %s in the container root", prefix);
        close (parent);
        parent = next;
      }
    return steal_fd (&parent);
  }
}

/* Symlinks a bind destination may go through before it names a file: runc and
 * crun follow a destination's links inside the root, and so do we, a few hops. */
#define MKFILE_MAX_HOPS 8

static int
mkfile_in_root (int rootfd, const char *path, bool follow, int hops, struct sbx_error *err)
{
  _cleanup_free_ char *name = NULL;
  _cleanup_close_ int parent = -1;
  int fd;

  /* Symlinks, the last component's too, resolve inside the root (RESOLVE_IN_ROOT,
     no magic links), so the mount lands where the link points within the rootfs,
     as with runc and crun (/etc/localtime -> ../usr/share/zoneinfo/...). */
  fd = sys_openat2 (rootfd, root_relative (path), O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW), 0,
                    RESOLVE_ROOT_FLAGS);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT)
    return sbx_error_set (err, errno, "open %s in the container root", path);
  parent = fs_open_parent_in_root (rootfd, path, &name, true, err);
  if (parent < 0)
    return -1;
  {
    /* O_PATH parent: reopen it as a real directory to create in it. */
    _cleanup_close_ int dir = openat (parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int created;
    if (dir < 0)
      return sbx_error_set (err, errno, "open parent of %s", path);
    created = FS_CREATE (openat (dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (created < 0 && errno == EEXIST && follow)
      {
        /* The lookup said ENOENT, yet the name exists: a dangling symlink. Its
           target, inside the root, is made instead (runc and crun do the same). */
        char link[PATH_MAX];
        ssize_t n = readlinkat (dir, name, link, sizeof link - 1);
        if (n > 0 && hops < MKFILE_MAX_HOPS)
          {
            _cleanup_free_ char *target = NULL, *rel = xstrdup (root_relative (path));
            size_t len = strlen (rel);
            char *slash;
            while (len > 0 && rel[len - 1] == '/')
              rel[--len] = '\0'; /* "etc/localtime/" names etc/localtime */
            slash = strrchr (rel, '/');
            link[n] = '\0';
            if (link[0] == '/' || !slash)
              target = xstrdup (link);
            else
              target = xasprintf ("%.*s/%s", (int) (slash - rel), rel, link);
            return mkfile_in_root (rootfd, target, true, hops + 1, err);
          }
        if (n > 0)
          return sbx_error_set (err, ELOOP, "open %s in the container root", path);
        errno = EEXIST; /* not a link after all (a race): open what is there, as before */
      }
    if (created < 0 && errno != EEXIST)
      return sbx_error_set (err, errno, "create %s in the container root", path);
    if (created >= 0)
      close (created);
    fd = openat (dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      return sbx_error_set (err, errno, "open %s in the container root", path);
  }
  return fd;
}

int
fs_mkfile_in_root (int rootfd, const char *path, struct sbx_error *err)
{
  return mkfile_in_root (rootfd, path, true, 0, err);
}

int
fs_mkfile_in_root_nofollow (int rootfd, const char *path, struct sbx_error *err)
{
  return mkfile_in_root (rootfd, path, false, 0, err);
}

bool
fs_is_procfs (int fd)
{
  struct statfs sfs;
  return fstatfs (fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

bool
fs_is_inode (int fd, const struct stat *st)
{
  struct stat s;
  return fstat (fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

bool
fs_same_inode (int a, int b)
{
  struct stat sa, sb;
  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool
fs_is_dir (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 && S_ISDIR (st.st_mode);
}

char *
fs_resolve (const char *path, int flags, int *fd_out)
{
  int fd = open (path, O_PATH | O_CLOEXEC | flags);
  char *real = NULL;
  if (fd < 0)
    return NULL;
  real = fs_fd_path (fd);
  if (!real || real[0] != '/' || strstr (real, " (deleted)"))
    {
      /* no /proc, or a path the kernel cannot name from here: the slow way */
      char buf[PATH_MAX];
      free (real);
      real = realpath (path, buf) ? xstrdup (buf) : NULL;
    }
  if (real && fd_out)
    *fd_out = fd;
  else
    {
      int e = errno;
      close (fd);
      errno = e;
    }
  return real;
}

char *
fs_fd_path (int fd)
{
  char link[64], target[PATH_MAX];
  ssize_t n;
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, target, sizeof target - 1);
  if (n < 0)
    return NULL;
  target[n] = '\0';
  return xstrdup (target);
}

int
fs_write_file_at (int dirfd, const char *name, const char *data, size_t len, struct sbx_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  ssize_t w;
  if (fd < 0)
    return sbx_error_set (err, errno, "open %s", name);
  w = write (fd, data, len);
  if (w < 0)
    return sbx_error_set (err, errno, "write %s", name);
  if ((size_t) w != len)
    return sbx_error_set (err, EIO, "short write to %s", name);
  return 0;
}

int
fs_write_atomic (int dirfd, const char *name, const char *data, size_t len, mode_t mode, struct sbx_error *err)
{
  char tmp[NAME_MAX + 1];
  _cleanup_close_ int fd = -1;
  ssize_t w;
  snprintf (tmp, sizeof tmp, ".%s.%d.tmp", name, (int) getpid ());
  fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return sbx_error_set (err, errno, "create %s", tmp);
  w = write (fd, data, len);
  if (w < 0 || (size_t) w != len)
    {
      int e = w < 0 ? errno : EIO;
      unlinkat (dirfd, tmp, 0);
      return sbx_error_set (err, e, "write %s", tmp);
    }
  if (renameat (dirfd, tmp, dirfd, name) < 0)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return sbx_error_set (err, e, "rename %s", name);
    }
  return 0;
}

int
fs_write_pid_file (const char *path, pid_t pid, struct sbx_error *err)
{
  char buf[32];
  _cleanup_free_ char *copy = xstrdup (path);
  char *slash = strrchr (copy, '/');
  _cleanup_close_ int dirfd = -1;
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  dirfd = open (slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sbx_error_set (err, errno, "--pid-file %s", path);
  if (fs_write_atomic (dirfd, strrchr (path, '/') ? strrchr (path, '/') + 1 : path, buf, n, 0644, err) < 0)
    return sbx_error_wrap (err, "--pid-file %s", path);
  return 0;
}

/* rm -r of dirfd/name without following a symlink anywhere (the tree may have been
 * written by the sandbox: a symlink to / in it must not send us there). A tree deeper
 * than REMOVE_DEPTH is not recursed into: its deep part is renamed to the top and
 * removed by the next pass, so a sandbox's million nested directories cost passes,
 * not open fds or stack. What cannot be removed stays, and -1 says so. */
#define REMOVE_DEPTH 48
#define REMOVE_PASSES 100000

struct remove_ctx
{
  int top;          /* the tree's root, where deep parts are hoisted */
  unsigned hoisted; /* in this pass */
  unsigned serial;
};


/* u+rwx on a directory we could not open, through an O_PATH fd of it: fchmodat would
   follow a symlink put in its place meanwhile. */
static int
chmod_own_dir (int parent, const char *name)
{
  char self[64];
  struct stat st;
  _cleanup_close_ int fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode))
    return -1;
  snprintf (self, sizeof self, "/proc/self/fd/%d", fd);
  return chmod (self, 0700);
}

static int
remove_tree_at (struct remove_ctx *rc, int parent, const char *name, int depth)
{
  int fd, ret = 0;
  DIR *d;
  struct dirent *de;
  if (unlinkat (parent, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno != EISDIR && errno != EPERM)
    return -1;
  if (depth >= REMOVE_DEPTH && rc->top >= 0)
    {
      char hoist[32];
      snprintf (hoist, sizeof hoist, ".sbx-rm-%u", rc->serial++);
      if (renameat (parent, name, rc->top, hoist) < 0)
        return -1;
      rc->hoisted++;
      return 0;
    }
  fd = openat (parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES && chmod_own_dir (parent, name) == 0)
    fd = openat (parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* a mode-0 dir of our own */
  if (fd < 0)
    return -1;
  d = fdopendir (fd);
  if (!d)
    {
      close (fd);
      return -1;
    }
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (remove_tree_at (rc, dirfd (d), de->d_name, depth + 1) < 0)
        ret = -1;
    }
  closedir (d);
  if (unlinkat (parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    ret = -1;
  return ret;
}

int
fs_remove_tree (int dirfd, const char *name)
{
  struct remove_ctx rc = { .top = -1 };
  int ret = 0;
  if (unlinkat (dirfd, name, 0) == 0 || errno == ENOENT)
    return 0;
  rc.top = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rc.top < 0)
    return remove_tree_at (&rc, dirfd, name, 0);
  for (unsigned pass = 0; pass < REMOVE_PASSES; pass++)
    {
      DIR *d;
      struct dirent *de;
      int again = dup (rc.top);
      rc.hoisted = 0;
      ret = 0;
      if (again < 0 || lseek (again, 0, SEEK_SET) < 0 || !(d = fdopendir (again)))
        {
          if (again >= 0)
            close (again);
          ret = -1;
          break;
        }
      while ((de = readdir (d)))
        if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
            && remove_tree_at (&rc, rc.top, de->d_name, 1) < 0)
          ret = -1;
      closedir (d);
      if (!rc.hoisted)
        break;
    }
  close (rc.top);
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    ret = -1;
  return ret;
}

/* The first id of a /proc/self/{uid,gid}_map: the one inside the namespace. */
static int
first_mapped_id (const char *file)
{
  char buf[256];
  unsigned inside, outside, count;
  _cleanup_close_ int fd = open (file, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  if (sscanf (buf, "%u %u %u", &inside, &outside, &count) != 3 || count == 0)
    return -1;
  return (int) inside;
}

int
fs_become_mapped_creator (void)
{
  int uid = first_mapped_id ("/proc/self/uid_map"), gid = first_mapped_id ("/proc/self/gid_map");
  if (uid < 0 || gid < 0)
    return -1;
  setfsgid ((gid_t) gid);
  setfsuid ((uid_t) uid);
  /* setfs*id return the previous id whatever happens: read back to see it took */
  return setfsuid ((uid_t) -1) == uid ? 0 : -1;
}
