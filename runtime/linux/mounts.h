/* config.json "mounts": planned in the parent (options parsed and checked before
 * anything is created), applied in the container init with the new mount API:
 *   bind:   open_tree(OPEN_TREE_CLONE) -> mount_setattr -> move_mount onto the target
 *   others: fsopen -> fsconfig (each option) -> fsmount -> move_mount onto the target
 * Targets are resolved inside the rootfs by fd (fs.h), so a symlink in the rootfs
 * never sends a mount outside it. Mount syscalls are wrapped in mountapi.h.
 *
 * Sources are opened by path in the init's own mount namespace: open_tree() can only
 * clone mounts of the caller's namespace, so an fd the parent opened (in the host's
 * namespace) cannot serve as a bind source here. */
#ifndef SBX_MOUNTS_H
#define SBX_MOUNTS_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdint.h>

#include "oci/config.h"
#include "runtime/base/error.h"
#include "runtime/cgroup/cgroup.h"

struct mount_plan
{
  const struct oci_mount *m;
  bool bind, recursive;         /* bind / rbind */
  bool remount;
  bool tmpcopyup;
  bool idmap, recursive_idmap;
  bool cgroup;                  /* type cgroup/cgroup2: see mounts_cgroup.c */
  uint64_t attr_set, attr_clr;  /* MOUNT_ATTR_* on this mount */
  uint64_t rec_attr_set, rec_attr_clr; /* applied with AT_RECURSIVE */
  uint64_t propagation;         /* MS_SHARED/SLAVE/PRIVATE/UNBINDABLE, 0 = none */
  bool rec_propagation;
  const char **fs_options;      /* passed to the filesystem with fsconfig */
  size_t n_fs_options;
};

/* What the child needs besides the plan. */
struct mounts_env
{
  int rootfd;    /* the container root (self-bind of the rootfs) */
  const char *bundle; /* relative bind sources are relative to the bundle (absolute path) */
  const char *rootfs; /* the rootfs's real path: a recursive bind above it is cloned first */
  bool userns;   /* running in a new user namespace (affects devices) */
  const struct cgroup *cg; /* the container's cgroup, for "cgroup" mounts */
  bool cgroupns;
  const int *idmap_fds; /* per mount: a detached idmapped tree prepared by the parent, or -1 */
  int sync_fd;          /* to the parent: a bind source the user namespace cannot reach (-1: none) */
  struct mounts_special *special; /* out: what was mounted at /proc and /sys */
  struct stat root_st;  /* rootfd's, taken once by mounts_apply */
};

/* The filesystems mounted at exactly /proc and /sys, by the (dev, ino) of their root:
 * after pivot_root the masks are applied only if "/proc" is still that procfs, so a
 * rootfs swapped under us mid-setup cannot leave an unmasked procfs elsewhere. */
struct mounts_special
{
  dev_t proc_dev, sys_dev;
  ino_t proc_ino, sys_ino; /* 0: nothing mounted there */
};

int mounts_plan (const struct oci_config *c, struct mount_plan **out, struct sbx_error *err);
void mounts_plan_free (struct mount_plan *p, size_t n);
/* Refuse a path under /proc, /sys or /dev when that directory of the rootfs is a symlink. */
int mounts_check_special_dir (int rootfd, const char *path, struct sbx_error *err);
int mounts_apply (const struct oci_config *c, const struct mount_plan *plans, const struct mounts_env *env,
                  struct sbx_error *err);
/* mounts_attach.c. Mount one planned file system at an already-open target. With
 * mnt_out, returns an fd to the new mount's root (targetfd still sees what it covers). */
int mount_one_fs (const struct mount_plan *p, int targetfd, bool target_existed, int *mnt_out, struct sbx_error *err);
/* sysfs where it cannot be mounted (a user namespace sharing the host's network
 * namespace): the host's /sys bound recursively, with the entry's flags. */
int mount_sysfs_bind (const struct mount_plan *p, int targetfd, int *mnt_out, struct sbx_error *err);
/* The source of a bind mount, as a detached copy of its tree. */
int mount_open_bind_source (const struct mount_plan *p, const struct mounts_env *env, bool *is_tree,
                            struct sbx_error *err);
/* Attach source_fd at the destination: a tree already cloned (source_is_tree: idmapped
 * by the parent, or cloned first by mounts_apply) as it is, else an O_PATH fd of the
 * source, cloned now. */
int mount_bind (const struct mount_plan *p, const struct mounts_env *env, int source_fd, bool source_is_tree,
                struct sbx_error *err);
/* Change the attributes and propagation of what is mounted at the destination. */
int mount_remount (const struct mount_plan *p, const struct mounts_env *env, struct sbx_error *err);
/* mounts_cgroup.c */
int mount_cgroup (const struct mount_plan *p, int targetfd, const struct mounts_env *env, struct sbx_error *err);
/* mounts_copyup.c: copy the directory tree of `from` into `to` (tmpcopyup). */
int copy_tree (int from, int to, int depth, struct sbx_error *err);

#endif
