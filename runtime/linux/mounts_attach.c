/* Attaching one planned mount (mounts.h) at its target: a new file-system instance
 * (fsopen -> fsconfig -> fsmount), a bind of a detached tree (open_tree), or a
 * remount's attributes (mount_setattr). mounts.c decides what goes where; the
 * cgroup mount (mounts_cgroup.c) is built from these too. */
#include "build-config.h"
#include "runtime/linux/mounts.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mountapi.h"

/* fsconfig/fsmount explain their failures in the fs context ("e Unknown parameter"). */
static void
wrap_fs_log (int fsfd, struct sbx_error *err)
{
  char buf[512];
  ssize_t n = read (fsfd, buf, sizeof buf - 1);
  if (n > 2)
    {
      buf[n] = '\0';
      buf[strcspn (buf, "\n")] = '\0';
      sbx_error_wrap (err, "%s", buf + 2);
    }
}

static int
set_attrs (int mntfd, uint64_t set, uint64_t clr, uint64_t propagation, bool recursive, struct sbx_error *err)
{
  struct mount_attr attr = { .attr_set = set, .attr_clr = clr, .propagation = propagation };
  if (!set && !clr && !propagation)
    return 0;
  if (sys_mount_setattr (mntfd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr) < 0)
    return sbx_error_set (err, errno, "mount_setattr");
  return 0;
}

static int
finish_mount (const struct mount_plan *p, int mntfd, bool set_plain_attrs, struct sbx_error *err)
{
  if (set_plain_attrs && set_attrs (mntfd, p->attr_set, p->attr_clr, 0, false, err) < 0)
    return -1;
  if (set_attrs (mntfd, p->rec_attr_set, p->rec_attr_clr, 0, true, err) < 0)
    return -1;
  return 0;
}

static bool
tmpfs_has_mode (const struct mount_plan *p)
{
  for (size_t i = 0; i < p->n_fs_options; i++)
    if (strncmp (p->fs_options[i], "mode=", 5) == 0)
      return true;
  return false;
}

/* A tmpfs given no mode= takes the mode of the directory it covers when the image had
 * that directory, as with runc (the kernel's default, 1777, would open a directory
 * the image kept private); on a directory made for it, the default stays. */
static int
set_tmpfs_mode_of (int fsfd, int targetfd, struct sbx_error *err)
{
  struct stat st;
  char mode[16];
  if (fstat (targetfd, &st) < 0)
    return sbx_error_set (err, errno, "stat the mount point");
  snprintf (mode, sizeof mode, "%o", (unsigned) (st.st_mode & 07777));
  if (sys_fsconfig (fsfd, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
    return sbx_error_set (err, errno, "option 'mode=%s' (the mount point's)", mode);
  return 0;
}

/* devpts's gid=N, a numeric group (the tty group, 5) */
static bool
is_devpts_gid (const struct oci_mount *m, const char *opt)
{
  return str_eq (m->type, "devpts") && strncmp (opt, "gid=", 4) == 0 && opt[4]
         && strspn (opt + 4, "0123456789") == strlen (opt + 4);
}

static int mount_one_fs_opts (const struct mount_plan *p, int targetfd, bool target_existed, bool devpts_no_gid,
                              int *mnt_out, struct sbx_error *err);

int
mount_one_fs (const struct mount_plan *p, int targetfd, bool target_existed, int *mnt_out, struct sbx_error *err)
{
  return mount_one_fs_opts (p, targetfd, target_existed, false, mnt_out, err);
}

/* devpts_no_gid: leave devpts's gid= out (see the option loop) */
static int
mount_one_fs_opts (const struct mount_plan *p, int targetfd, bool target_existed, bool devpts_no_gid, int *mnt_out,
                   struct sbx_error *err)
{
  const struct oci_mount *m = p->m;
  _cleanup_close_ int fsfd = sys_fsopen (m->type, FSOPEN_CLOEXEC);
  _cleanup_close_ int mntfd = -1, lower = -1;
  if (fsfd < 0)
    {
      if (errno == ENODEV)
        return sbx_error_set (err, 0, "unknown filesystem type '%s'", m->type);
      return sbx_error_set (err, errno, "fsopen %s", m->type);
    }
  if (m->source && *m->source && sys_fsconfig (fsfd, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
    {
      sbx_error_set (err, errno, "source '%s'", m->source);
      wrap_fs_log (fsfd, err);
      return -1;
    }
  if (target_existed && str_eq (m->type, "tmpfs") && !tmpfs_has_mode (p) && set_tmpfs_mode_of (fsfd, targetfd, err) < 0)
    return -1;
  for (size_t i = 0; i < p->n_fs_options; i++)
    {
      const char *opt = p->fs_options[i];
      const char *eq = strchr (opt, '=');
      int r;
      if (devpts_no_gid && is_devpts_gid (m, opt))
        continue;
      if (eq)
        {
          _cleanup_free_ char *key = strndup (opt, eq - opt);
          r = sys_fsconfig (fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0);
        }
      else
        r = sys_fsconfig (fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
      /* devpts's gid=5 (the tty group) names a group that a user namespace mapping
         only the caller lacks: the ptys then belong to the creator's group, as with
         crun. Any other refused option is an error. (Kernels before devpts took the
         new mount API's options one by one refuse it only at create: below.) */
      if (r < 0 && errno == EINVAL && is_devpts_gid (m, opt))
        continue;
      if (r < 0)
        {
          sbx_error_set (err, errno, "option '%s'", opt);
          wrap_fs_log (fsfd, err);
          return -1;
        }
    }
  if (sys_fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      bool had_gid = false;
      for (size_t i = 0; i < p->n_fs_options; i++)
        had_gid |= is_devpts_gid (m, p->fs_options[i]);
      if (errno == EINVAL && had_gid && !devpts_no_gid)
        return mount_one_fs_opts (p, targetfd, target_existed, true, mnt_out, err);
      sbx_error_set (err, errno, "create %s", m->type);
      wrap_fs_log (fsfd, err);
      return -1;
    }
  mntfd = sys_fsmount (fsfd, FSMOUNT_CLOEXEC, (unsigned int) p->attr_set);
  if (mntfd < 0)
    {
      sbx_error_set (err, errno, "fsmount %s", m->type);
      wrap_fs_log (fsfd, err);
      return -1;
    }
  if (p->tmpcopyup)
    {
      /* The fd taken before attaching still sees the directory being covered. */
      lower = openat (targetfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (lower < 0)
        return sbx_error_set (err, errno, "tmpcopyup: open the directory to copy");
    }
  if (finish_mount (p, mntfd, false, err) < 0)
    return -1;
  if (p->tmpcopyup)
    {
      _cleanup_close_ int upper = openat (mntfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (upper < 0 || copy_tree (lower, upper, 0, err) < 0)
        return upper < 0 ? sbx_error_set (err, errno, "tmpcopyup: open the new tmpfs") : -1;
    }
  if (attach_mount (mntfd, targetfd) < 0)
    return sbx_error_set (err, errno, "move_mount");
  if (p->propagation && set_attrs (mntfd, 0, 0, p->propagation, p->rec_propagation, err) < 0)
    return -1;
  if (mnt_out)
    *mnt_out = steal_fd (&mntfd);
  return 0;
}

/* sysfs refuses a mount from a user namespace that does not own the network
 * namespace (a rootless podman with --network=host): what /sys shows belongs to the
 * host's network namespace, which this one shares. Then, as runc and crun do, /sys
 * is the host's, bound recursively, with the entry's flags (ro, nosuid, ...) set on
 * every mount of it; the mounts it carries are locked to it (flags can be added, not
 * removed, and nothing under them can be uncovered). */
int
mount_sysfs_bind (const struct mount_plan *p, int targetfd, int *mnt_out, struct sbx_error *err)
{
  _cleanup_close_ int tree = sys_open_tree (AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return sbx_error_set (err, errno, "sysfs: bind /sys instead");
  if (set_attrs (tree, p->attr_set | p->rec_attr_set, 0, 0, true, err) < 0)
    return sbx_error_wrap (err, "sysfs: bind /sys instead");
  if (attach_mount (tree, targetfd) < 0)
    return sbx_error_set (err, errno, "sysfs: bind /sys instead: move_mount");
  if (mnt_out)
    *mnt_out = steal_fd (&tree);
  return 0;
}

/* The source of a bind mount, opened (O_PATH) but not yet cloned: every source is
 * opened before anything is created in the container (mounts_apply says why), and
 * cloned by mount_bind at its turn, so that the mounts' ids, and with them the order
 * of /proc/self/mountinfo (sorted by id since Linux 6.8), follow the config's order
 * as runtime-tools and crun's suite check. */
int
mount_open_bind_source (const struct mount_plan *p, const struct mounts_env *env, bool *is_tree,
                        struct sbx_error *err)
{
  const struct oci_mount *m = p->m;
  _cleanup_free_ char *src = m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", env->bundle, m->source);
  int fd;
  *is_tree = false;
  /* A recursive bind of a directory that holds the rootfs would, cloned later, carry
     the container's own /proc, /sys and /dev as they are before their masks: one above
     the rootfs is cloned now, while nothing is mounted there yet. */
  if (p->recursive && env->rootfs)
    {
      char real[PATH_MAX];
      if (realpath (src, real) && path_is_under (env->rootfs, real))
        {
          fd = sys_open_tree (AT_FDCWD, real, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
          if (fd < 0)
            return sbx_error_set (err, errno, "open_tree %s", m->source);
          *is_tree = true;
          return fd;
        }
    }
  fd = open (src, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return sbx_error_set (err, errno, "open %s", m->source);
  return fd;
}


int
mount_bind (const struct mount_plan *p, const struct mounts_env *env, int source_fd, bool source_is_tree,
            struct sbx_error *err)
{
  const struct oci_mount *m = p->m;
  _cleanup_close_ int treefd = -1, targetfd = -1;
  struct stat st;
  if (source_is_tree)
    treefd = fcntl (source_fd, F_DUPFD_CLOEXEC, 3);
  else
    treefd = sys_open_tree (source_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH
                                               | (p->recursive ? AT_RECURSIVE : 0));
  if (treefd < 0)
    return sbx_error_set (err, errno, "%s the tree of %s", source_is_tree ? "dup" : "open_tree", m->source);
  if (fstat (treefd, &st) < 0)
    return sbx_error_set (err, errno, "stat %s", m->source);
  targetfd = S_ISDIR (st.st_mode) ? fs_mkdir_in_root (env->rootfd, m->destination, 0755, err)
                                  : fs_mkfile_in_root (env->rootfd, m->destination, err);
  if (targetfd < 0)
    return -1;
  if (fs_is_inode (targetfd, &env->root_st))
    return sbx_error_set (err, 0, "the destination resolves to the container root");
  if (finish_mount (p, treefd, true, err) < 0)
    return -1;
  if (attach_mount (treefd, targetfd) < 0)
    {
      if (errno == ENOTDIR || errno == EISDIR)
        return sbx_error_set (err, errno, "move_mount (the source and the destination in the rootfs are "
                                          "not both directories or both files)");
      return sbx_error_set (err, errno, "move_mount");
    }
  if (p->propagation && set_attrs (treefd, 0, 0, p->propagation, p->rec_propagation, err) < 0)
    return -1;
  return 0;
}

int
mount_remount (const struct mount_plan *p, const struct mounts_env *env, struct sbx_error *err)
{
  _cleanup_close_ int targetfd = fs_open_in_root (env->rootfd, p->m->destination, O_PATH, err);
  if (targetfd < 0)
    return -1;
  if (set_attrs (targetfd, p->attr_set, p->attr_clr, p->propagation, p->rec_propagation, err) < 0)
    return -1;
  return set_attrs (targetfd, p->rec_attr_set, p->rec_attr_clr, 0, true, err);
}
