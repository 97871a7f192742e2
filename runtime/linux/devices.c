#include "build-config.h"
#include "runtime/linux/devices.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mountapi.h"
#include "runtime/linux/mounts.h"
#include "runtime/linux/sync.h"

struct device_spec
{
  const char *path; /* inside the container */
  mode_t type;      /* S_IFCHR, S_IFBLK, S_IFIFO */
  unsigned major, minor;
  mode_t mode;
  bool has_owner;
  uid_t uid;
  gid_t gid;
  int index; /* in linux.devices; -1 for a default device */
};

/* Where a user namespace's nodes come from: the parent, on the sync socket, when it
   can make them (host root); -1: the host's own nodes are bound. */
struct node_source
{
  int sync_fd;
};

static const struct device_spec default_devices[] = {
  { "/dev/null", S_IFCHR, 1, 3, 0666, false, 0, 0, -1 },    { "/dev/zero", S_IFCHR, 1, 5, 0666, false, 0, 0, -1 },
  { "/dev/full", S_IFCHR, 1, 7, 0666, false, 0, 0, -1 },    { "/dev/random", S_IFCHR, 1, 8, 0666, false, 0, 0, -1 },
  { "/dev/urandom", S_IFCHR, 1, 9, 0666, false, 0, 0, -1 }, { "/dev/tty", S_IFCHR, 5, 0, 0666, false, 0, 0, -1 },
};

static bool
is_device (const struct stat *st, const struct device_spec *d)
{
  return (st->st_mode & S_IFMT) == d->type
         && (d->type == S_IFIFO || (major (st->st_rdev) == d->major && minor (st->st_rdev) == d->minor));
}

/* In a user namespace, where no node can be made that works: the node comes as a
 * detached mount. As host root, the parent makes it with the entry's owner and mode
 * (devices_host.h); otherwise it is the host's own node, checked to be that device.
 * SBX_NO_NODE: neither is possible (a default device the host lacks). */
static int
device_tree (const struct device_spec *d, const struct node_source *src, struct sbx_error *err)
{
  struct stat st;
  int tree;
  if (src->sync_fd >= 0 && d->index >= 0)
    {
      uint32_t idx = (uint32_t) d->index;
      size_t n = 1;
      tree = -1;
      if (sync_send (src->sync_fd, SYNC_DEVICE_NODE, &idx, sizeof idx, err) < 0
          || sync_expect_fds (src->sync_fd, SYNC_DEVICE_NODE_FD, &tree, &n, err) < 0)
        return -1;
      if (n != 1)
        return sbx_error_set (err, EPROTO, "sync: no node for %s", d->path);
      return tree;
    }
  tree = sys_open_tree (AT_FDCWD, d->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
  if (tree < 0)
    return sbx_error_set (err, errno, "the host has no %s to bind into the user namespace", d->path);
  if (fstat (tree, &st) < 0 || !is_device (&st, d))
    {
      close (tree);
      return sbx_error_set (err, 0, "host %s is not device %u:%u", d->path, d->major, d->minor);
    }
  return tree;
}

/* Binds the node onto `name` in `dirfd` (created here unless it is there already).
 * The target is named relative to the /dev this init just mounted, which nothing else
 * can reach yet, so it needs no fd of its own (four syscalls a node fewer than an
 * open + reopen). */
static int
bind_device (int dirfd, const char *name, const struct device_spec *d, const struct node_source *src, bool create,
             struct sbx_error *err)
{
  _cleanup_close_ int tree = device_tree (d, src, err);
  if (tree < 0)
    return -1;
  if (create)
    {
      int created = FS_CREATE (openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (created < 0)
        return sbx_error_set (err, errno, "create %s", d->path);
      close (created);
    }
  /* A device node needs neither: nothing is executed from it, and nosuid keeps the
     bind from carrying anything of the host's mount it came from (as crun does). */
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH, &(struct mount_attr){ .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC })
      < 0)
    return sbx_error_set (err, errno, "bind %s: nosuid,noexec", d->path);
  if (sys_move_mount (tree, "", dirfd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return sbx_error_set (err, errno, "bind %s", d->path);
  return 0;
}

/* The directory of the last node made, kept open for the next one: the default
 * devices all live in /dev, a tmpfs this same init mounted a moment ago, where no
 * other process can have swapped a component since (six path walks saved). */
struct device_dir
{
  char *path; /* container path of the directory; NULL when it may not be reused */
  int fd;
};

static int
device_dir_open (int rootfd, const char *path, struct device_dir *dd, char **name, struct sbx_error *err)
{
  const char *slash = strrchr (path, '/');
  size_t len = slash ? (size_t) (slash - path) : 0;
  _cleanup_close_ int parent = -1;
  if (!slash || !slash[1])
    len = (size_t) -1; /* "/dev/x/" and the like: no reuse, the full walk sorts them out */
  if (dd->fd >= 0 && dd->path && len != (size_t) -1 && strlen (dd->path) == len && strncmp (dd->path, path, len) == 0)
    {
      *name = xstrdup (slash + 1);
      return dd->fd;
    }
  parent = fs_open_parent_in_root (rootfd, path, name, true, err);
  if (parent < 0)
    return -1;
  if (dd->fd >= 0)
    close (dd->fd);
  free (dd->path);
  dd->path = len != (size_t) -1 ? xasprintf ("%.*s", (int) len, path) : NULL;
  dd->fd = openat (parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dd->fd < 0)
    return sbx_error_set (err, errno, "open the parent of %s", path);
  return dd->fd;
}

/* mknod honoured the umask, or a default ACL of the directory instead: the config's
 * mode is exact. */
static int
finish_node (int dir, const char *name, const struct device_spec *d, struct sbx_error *err)
{
  if (fchmodat (dir, name, d->mode & 07777, 0) < 0)
    return sbx_error_set (err, errno, "chmod %s", d->path);
  if (d->has_owner && fchownat (dir, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return sbx_error_set (err, errno, "chown %s", d->path);
  return 0;
}

static int
make_device (int rootfd, const struct device_spec *d, bool userns, const struct node_source *src,
             struct device_dir *dd, struct sbx_error *err)
{
  _cleanup_free_ char *name = NULL;
  int dir = device_dir_open (rootfd, d->path, dd, &name, err);
  struct stat st;
  if (dir < 0)
    return -1;
  /* The common case first: nothing there yet, and we may mknod (or, in a user
     namespace, create the file to bind the host's node onto). */
  if (!userns || d->type == S_IFIFO)
    {
      if (FS_CREATE (mknodat (dir, name, d->type | (d->mode & 07777), makedev (d->major, d->minor))) == 0)
        return finish_node (dir, name, d, err);
      if (errno != EEXIST)
        return sbx_error_set (err, errno, "mknod %s", d->path);
    }
  else
    {
      int created = FS_CREATE (openat (dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (created >= 0)
        {
          close (created);
          return bind_device (dir, name, d, src, false, err);
        }
      if (errno != EEXIST)
        return sbx_error_set (err, errno, "create %s", d->path);
    }
  if (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (is_device (&st, d))
        return 0;
      if (S_ISREG (st.st_mode) && st.st_size == 0 && userns && d->type != S_IFIFO)
        {
          /* An empty placeholder (left by an image build): bind over it. */
          if (unlinkat (dir, name, 0) < 0)
            return sbx_error_set (err, errno, "replace placeholder %s", d->path);
          return bind_device (dir, name, d, src, true, err);
        }
      return sbx_error_set (err, 0, "%s exists in the container and is not device %c %u:%u; refusing to use it",
                            d->path, d->type == S_IFBLK ? 'b' : d->type == S_IFIFO ? 'p' : 'c', d->major, d->minor);
    }
  if (errno != ENOENT)
    return sbx_error_set (err, errno, "stat %s", d->path);
  return bind_device (dir, name, d, src, true, err);
}

static int
make_symlink (int devfd, const char *target, const char *name, struct sbx_error *err)
{
  if (FS_CREATE (symlinkat (target, devfd, name)) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "symlink /dev/%s", name);
  return 0;
}

static bool
proc_mounted (int rootfd)
{
  int fd = sys_openat2 (rootfd, "proc", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  bool yes = fd >= 0 && fs_is_procfs (fd);
  if (fd >= 0)
    close (fd);
  return yes;
}

int
devices_setup (int rootfd, const struct oci_config *c, bool userns, int host_nodes_fd, struct sbx_error *err)
{
  struct node_source src = { .sync_fd = host_nodes_fd };
  _cleanup_close_ int dev = -1, devdir = -1;
  struct device_dir dd = { .path = NULL, .fd = -1 };
  mode_t old_umask = umask (0);
  int ret = -1;

  if (mounts_check_special_dir (rootfd, "/dev", err) < 0)
    goto out;
  /* linux.devices first: an entry for a default device's path (say /dev/null with its
   * own mode or owner) replaces the default. */
  for (size_t i = 0; i < c->linux_.n_devices; i++)
    {
      const struct oci_device *od = &c->linux_.devices[i];
      struct device_spec d = {
        .path = od->path,
        .type = od->type == 'b' ? S_IFBLK : od->type == 'p' ? S_IFIFO : S_IFCHR,
        .major = (unsigned) od->major,
        .minor = (unsigned) od->minor,
        .mode = od->has_file_mode ? od->file_mode : 0666,
        .has_owner = od->has_uid || od->has_gid,
        .uid = od->has_uid ? od->uid : 0,
        .gid = od->has_gid ? od->gid : 0,
        .index = (int) i,
      };
      if (make_device (rootfd, &d, userns, &src, &dd, err) < 0)
        {
          sbx_error_wrap (err, "linux.devices[%zu]", i);
          goto out;
        }
    }
  for (size_t i = 0; i < ARRAY_SIZE (default_devices); i++)
    {
      bool configured = false;
      for (size_t j = 0; j < c->linux_.n_devices; j++)
        configured |= strcmp (c->linux_.devices[j].path, default_devices[i].path) == 0;
      if (!configured && make_device (rootfd, &default_devices[i], userns, &src, &dd, err) < 0)
        goto out;
    }

  dev = fs_mkdir_in_root (rootfd, "/dev", 0755, err);
  if (dev < 0)
    goto out;
  devdir = openat (dev, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (devdir < 0)
    {
      sbx_error_set (err, errno, "open /dev");
      goto out;
    }
  if (make_symlink (devdir, "pts/ptmx", "ptmx", err) < 0)
    goto out;
  /* runtime-linux.md: these exist only if their source exists after the mounts. */
  if (proc_mounted (rootfd))
    {
      if (make_symlink (devdir, "/proc/self/fd", "fd", err) < 0
          || make_symlink (devdir, "/proc/self/fd/0", "stdin", err) < 0
          || make_symlink (devdir, "/proc/self/fd/1", "stdout", err) < 0
          || make_symlink (devdir, "/proc/self/fd/2", "stderr", err) < 0)
        goto out;
    }
  ret = 0;
out:
  if (dd.fd >= 0)
    close (dd.fd);
  free (dd.path);
  umask (old_umask);
  return ret;
}
