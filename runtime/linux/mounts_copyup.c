/* tmpcopyup: copy what a directory held into the tmpfs mounted over it, so e.g. a
 * tmpfs /etc/foo keeps the image's files. Everything is opened relative to fds
 * with O_NOFOLLOW: the rootfs's symlinks are copied as symlinks, never followed. */
#include "build-config.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mounts.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runtime/base/util.h"

#define COPYUP_MAX_DEPTH 32

static int
copy_file (int from, int to, const char *name, const struct stat *st, struct sbx_error *err)
{
  _cleanup_close_ int src = openat (from, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_close_ int dst = -1;
  off_t left = st->st_size;
  if (src < 0)
    return sbx_error_set (err, errno, "open %s", name);
  dst = FS_CREATE (openat (to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st->st_mode & 07777));
  if (dst < 0)
    return sbx_error_set (err, errno, "create %s", name);
  while (left > 0)
    {
      ssize_t n = sendfile (dst, src, NULL, left > (1 << 30) ? (1 << 30) : (size_t) left);
      if (n < 0)
        return sbx_error_set (err, errno, "copy %s", name);
      if (n == 0)
        break;
      left -= n;
    }
  return 0;
}

int
copy_tree (int from, int to, int depth, struct sbx_error *err)
{
  DIR *d;
  struct dirent *de;
  int ret = 0;
  if (depth > COPYUP_MAX_DEPTH)
    return sbx_error_set (err, ELOOP, "tmpcopyup: directory tree deeper than %d", COPYUP_MAX_DEPTH);
  if (depth == 0)
    {
      struct stat top;
      if (fstat (from, &top) == 0)
        {
          fchmod (to, top.st_mode & 07777);
          if (fchown (to, top.st_uid, top.st_gid) < 0)
            errno = 0; /* the owner may not be mapped in a user namespace */
        }
    }
  d = fdopendir (dup (from));
  if (!d)
    return sbx_error_set (err, errno, "tmpcopyup: read directory");
  while (ret == 0 && (de = readdir (d)))
    {
      struct stat st;
      const char *name = de->d_name;
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      if (fstatat (from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          _cleanup_close_ int sub_from = -1, sub_to = -1;
          if (FS_CREATE (mkdirat (to, name, st.st_mode & 07777)) < 0 && errno != EEXIST)
            ret = sbx_error_set (err, errno, "mkdir %s", name);
          sub_from = openat (from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          sub_to = openat (to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (ret == 0 && (sub_from < 0 || sub_to < 0))
            ret = sbx_error_set (err, errno, "open %s", name);
          if (ret == 0)
            ret = copy_tree (sub_from, sub_to, depth + 1, err);
        }
      else if (S_ISREG (st.st_mode))
        ret = copy_file (from, to, name, &st, err);
      else if (S_ISLNK (st.st_mode))
        {
          char target[PATH_MAX];
          ssize_t n = readlinkat (from, name, target, sizeof target - 1);
          if (n < 0)
            continue;
          target[n] = '\0';
          if (FS_CREATE (symlinkat (target, to, name)) < 0)
            ret = sbx_error_set (err, errno, "symlink %s", name);
        }
      else if (FS_CREATE (mknodat (to, name, st.st_mode, st.st_rdev)) < 0)
        continue; /* device nodes cannot be made in a user namespace: skip them */
      if (ret == 0 && fchownat (to, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
        errno = 0;
    }
  closedir (d);
  if (ret < 0)
    sbx_error_wrap (err, "tmpcopyup");
  return ret;
}
