#include "build-config.h"
#include "runtime/linux/rootfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mountapi.h"
#include "runtime/linux/mounts.h"

int
rootfs_prepare (const struct oci_config *c, const char *rootfs, struct sbx_error *err)
{
  /* Private by default: nothing mounted in the container reaches the host, and the
   * host's later mounts do not appear inside. rootfsPropagation "slave" keeps the
   * host -> container direction (Kubernetes' HostToContainer); "shared" gets a new
   * peer group after the pivot (config-linux.md: not shared with the host). */
  unsigned long prop = c->linux_.rootfs_propagation_flags == MS_SLAVE ? MS_SLAVE : MS_PRIVATE;
  int fd;
  if (mount (NULL, "/", NULL, MS_REC | prop, NULL) < 0)
    return sbx_error_set (err, errno, "make / %s", prop == MS_SLAVE ? "rslave" : "rprivate");
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return sbx_error_set (err, errno, "bind the rootfs %s onto itself", rootfs);
  /* Opened after the bind, so lookups through it see the new mount and what is
   * mounted on top of it later. */
  fd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sbx_error_set (err, errno, "open rootfs %s", rootfs);
  return fd;
}

/* --no-pivot: chroot leaves the host's mount tree in the container's mount namespace,
 * hidden but present, and a fully visible host /proc there lets a nested user
 * namespace mount a fresh, unmasked procfs (runc#2647). So every mount outside the
 * rootfs is detached first, deepest first; only "/" (which the rootfs then covers)
 * remains. Only this flag pays for reading mountinfo. */
static int
detach_outside (int rootfd, struct sbx_error *err)
{
  _cleanup_free_ char *root = fs_fd_path (rootfd);
  FILE *f;
  char line[4096];
  char **points = NULL;
  size_t n = 0, rlen;
  if (!root)
    return sbx_error_set (err, errno, "--no-pivot: resolve the rootfs path");
  rlen = strlen (root);
  f = fopen ("/proc/self/mountinfo", "re");
  if (!f)
    return sbx_error_set (err, errno, "--no-pivot: read /proc/self/mountinfo");
  while (fgets (line, sizeof line, f))
    {
      char mp[4096];
      /* id parent major:minor root mount-point ... */
      if (sscanf (line, "%*s %*s %*s %*s %4095s", mp) != 1 || strcmp (mp, "/") == 0)
        continue;
      if (strncmp (mp, root, rlen) == 0 && (mp[rlen] == '/' || mp[rlen] == '\0'))
        continue; /* the rootfs and the container's own mounts */
      if (strncmp (root, mp, strlen (mp)) == 0 && root[strlen (mp)] == '/')
        continue; /* holds the rootfs: detaching it would take the rootfs along */
      points = xrealloc (points, (n + 1) * sizeof (char *));
      points[n++] = xstrdup (mp); /* octal escapes (\040) stay: such a path just fails */
    }
  fclose (f);
  /* Later lines are mounted later, so on top of (or below) earlier ones: reverse. */
  for (size_t i = n; i-- > 0;)
    {
      (void) umount2 (points[i], MNT_DETACH);
      free (points[i]);
    }
  free (points);
  return 0;
}

int
rootfs_pivot (int rootfd, bool no_pivot, struct sbx_error *err)
{
  if (fchdir (rootfd) < 0)
    return sbx_error_set (err, errno, "chdir to the rootfs");
  if (no_pivot)
    {
      if (detach_outside (rootfd, err) < 0)
        return -1;
      if (mount (".", "/", NULL, MS_MOVE, NULL) < 0)
        return sbx_error_set (err, errno, "move the rootfs to /");
      if (chroot (".") < 0)
        return sbx_error_set (err, errno, "chroot");
    }
  else
    {
      /* pivot_root(".", ".") stacks the old root on top of the new one; detaching it
       * leaves no way back to the host tree (no put_old directory needed). */
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return sbx_error_set (err, errno, "pivot_root");
      if (umount2 (".", MNT_DETACH) < 0)
        return sbx_error_set (err, errno, "detach the old root");
    }
  if (chdir ("/") < 0)
    return sbx_error_set (err, errno, "chdir /");
  return 0;
}

static int
open_checked_null (int rootfd, struct sbx_error *err)
{
  struct stat st;
  int fd = sys_openat2 (rootfd, "dev/null", O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  if (fd < 0)
    return sbx_error_set (err, errno, "maskedPaths: open /dev/null");
  /* The mask must be the null device, not whatever the rootfs put at /dev/null
   * (CVE-2025-31133: a symlink to core_pattern turned masks into writable binds). */
  if (fstat (fd, &st) < 0 || !S_ISCHR (st.st_mode) || major (st.st_rdev) != 1 || minor (st.st_rdev) != 3)
    {
      close (fd);
      return sbx_error_set (err, 0, "maskedPaths: /dev/null in the container is not the null device (1:3)");
    }
  return fd;
}

/* Masked and read-only paths in /proc and /sys follow no symlink at all: after
 * check_special_mounts those trees are the kernel's, where the paths to mask have
 * none, and a symlink there would mean the tree is not what we mounted. */
static uint64_t
path_resolve_flags (const char *path)
{
  while (*path == '/')
    path++;
  if ((strncmp (path, "proc", 4) == 0 && (path[4] == '/' || !path[4]))
      || (strncmp (path, "sys", 3) == 0 && (path[3] == '/' || !path[3])))
    return RESOLVE_ROOT_FLAGS | RESOLVE_NO_SYMLINKS;
  return RESOLVE_ROOT_FLAGS;
}

/* The first masked directory gets an empty read-only tmpfs; the others a clone of
 * that mount (same flags, same empty superblock): one superblock per container
 * instead of one per path. */
static int
mask_dir (int targetfd, int *empty, struct sbx_error *err)
{
  _cleanup_close_ int fsfd = -1;
  _cleanup_close_ int mnt = -1;
  if (*empty >= 0)
    {
      mnt = sys_open_tree (*empty, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (mnt < 0 || attach_mount (mnt, targetfd) < 0)
        return sbx_error_set (err, errno, "mount empty tmpfs");
      return 0;
    }
  fsfd = sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0 || sys_fsconfig (fsfd, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0
      || sys_fsconfig (fsfd, FSCONFIG_SET_STRING, "size", "4k", 0) < 0
      || sys_fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sbx_error_set (err, errno, "empty tmpfs");
  mnt = sys_fsmount (fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mnt < 0 || attach_mount (mnt, targetfd) < 0)
    return sbx_error_set (err, errno, "mount empty tmpfs");
  *empty = steal_fd (&mnt); /* attached now: the next masks clone it */
  return 0;
}

static int
mask_paths (int rootfd, const struct oci_linux *l, struct sbx_error *err)
{
  _cleanup_close_ int nullfd = -1;
  _cleanup_close_ int empty = -1;
  struct stat root_st;
  if (l->n_masked_paths == 0)
    return 0;
  nullfd = open_checked_null (rootfd, err);
  if (nullfd < 0)
    return -1;
  if (fstat (rootfd, &root_st) < 0)
    return sbx_error_set (err, errno, "linux.maskedPaths: stat the container root");
  for (size_t i = 0; i < l->n_masked_paths; i++)
    {
      const char *path = l->masked_paths[i];
      /* Symlinks are followed, inside the root: what the path names gets hidden. */
      _cleanup_close_ int target = sys_openat2 (rootfd, path + 1, O_PATH | O_CLOEXEC, 0, path_resolve_flags (path));
      struct stat st;
      if (target < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR)
            continue; /* nothing there to hide */
          return sbx_error_set (err, errno, "linux.maskedPaths[%zu]: open %s", i, path);
        }
      if (fstat (target, &st) < 0)
        return sbx_error_set (err, errno, "linux.maskedPaths[%zu]: stat %s", i, path);
      if (st.st_dev == root_st.st_dev && st.st_ino == root_st.st_ino)
        return sbx_error_set (err, 0, "linux.maskedPaths[%zu]: %s resolves to the container root", i, path);
      if (S_ISDIR (st.st_mode))
        {
          if (mask_dir (target, &empty, err) < 0)
            return sbx_error_wrap (err, "linux.maskedPaths[%zu]: %s", i, path);
        }
      else
        {
          _cleanup_close_ int tree = sys_open_tree (nullfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
          if (tree < 0 || attach_mount (tree, target) < 0)
            return sbx_error_set (err, errno, "linux.maskedPaths[%zu]: bind /dev/null over %s", i, path);
        }
    }
  return 0;
}

static int
readonly_paths (int rootfd, const struct oci_linux *l, struct sbx_error *err)
{
  struct stat root_st;
  if (l->n_readonly_paths && fstat (rootfd, &root_st) < 0)
    return sbx_error_set (err, errno, "linux.readonlyPaths: stat the container root");
  for (size_t i = 0; i < l->n_readonly_paths; i++)
    {
      const char *path = l->readonly_paths[i];
      _cleanup_close_ int target = sys_openat2 (rootfd, path + 1, O_PATH | O_CLOEXEC, 0, path_resolve_flags (path));
      _cleanup_close_ int tree = -1;
      struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
      if (target < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR)
            continue;
          return sbx_error_set (err, errno, "linux.readonlyPaths[%zu]: open %s", i, path);
        }
      if (fs_is_inode (target, &root_st))
        return sbx_error_set (err, 0, "linux.readonlyPaths[%zu]: %s resolves to the container root (use root.readonly)",
                              i, path);
      tree = sys_open_tree (target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
      if (tree < 0)
        return sbx_error_set (err, errno, "linux.readonlyPaths[%zu]: clone %s", i, path);
      if (sys_mount_setattr (tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro) < 0)
        return sbx_error_set (err, errno, "linux.readonlyPaths[%zu]: make %s read-only", i, path);
      if (attach_mount (tree, target) < 0)
        return sbx_error_set (err, errno, "linux.readonlyPaths[%zu]: mount over %s", i, path);
    }
  return 0;
}

/* "/proc" and "/sys" must still be the filesystems mounted there before pivot_root
 * (same root dev and inode, reached without a symlink): if the rootfs was swapped
 * under us, procfs may sit elsewhere, and masks applied by path would miss it. */
static int
check_special_mounts (int rootfd, const struct mounts_special *sp, struct sbx_error *err)
{
  static const char *const names[] = { "proc", "sys" };
  for (int i = 0; sp && i < 2; i++)
    {
      dev_t dev = i == 0 ? sp->proc_dev : sp->sys_dev;
      ino_t ino = i == 0 ? sp->proc_ino : sp->sys_ino;
      struct stat st;
      _cleanup_close_ int fd = -1;
      if (ino == 0)
        continue;
      fd = sys_openat2 (rootfd, names[i], O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                        RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
      if (fd < 0 || fstat (fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)
        return sbx_error_set (err, 0, "/%s in the container is no longer the filesystem mounted there (the rootfs "
                                      "changed during setup)", names[i]);
    }
  return 0;
}

int
rootfs_finalize (const struct oci_config *c, const struct mounts_special *sp, struct sbx_error *err)
{
  _cleanup_close_ int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return sbx_error_set (err, errno, "open /");
  if (check_special_mounts (rootfd, sp, err) < 0)
    return -1;
  if (mask_paths (rootfd, &c->linux_, err) < 0 || readonly_paths (rootfd, &c->linux_, err) < 0)
    return -1;
  if (c->root_readonly)
    {
      struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
      if (sys_mount_setattr (rootfd, "", AT_EMPTY_PATH, &ro) < 0)
        return sbx_error_set (err, errno, "root.readonly: make / read-only");
    }
  if (c->linux_.rootfs_propagation_flags && c->linux_.rootfs_propagation_flags != MS_SLAVE)
    {
      if (mount (NULL, "/", NULL, MS_REC | c->linux_.rootfs_propagation_flags, NULL) < 0)
        return sbx_error_set (err, errno, "linux.rootfsPropagation: %s", c->linux_.rootfs_propagation);
    }
  return 0;
}
