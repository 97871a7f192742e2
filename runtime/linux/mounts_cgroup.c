/* A mount of type "cgroup"/"cgroup2" (runc's default spec has one at /sys/fs/cgroup):
 * the container sees its own cgroup, never the host's tree.
 *   unified + cgroup namespace: a fresh cgroup2 mount (rooted at the container's cgroup)
 *   unified, no cgroup namespace: a bind of the container's cgroup directory
 *   v1 / hybrid: a tmpfs with one bind per joined hierarchy, each of the container's
 *   own cgroup directory (e.g. /sys/fs/cgroup/memory -> host .../memory/sbx-oci/ID)
 * Options (ro, nosuid, ...) apply to every mount made here. */
#include "build-config.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mounts.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/mountapi.h"

static const char *const v1_dir_names[CG1_COUNT] = {
  [CG1_FREEZER] = "freezer", [CG1_MEMORY] = "memory",   [CG1_PIDS] = "pids",         [CG1_CPU] = "cpu",
  [CG1_CPUACCT] = "cpuacct", [CG1_CPUSET] = "cpuset",   [CG1_BLKIO] = "blkio",       [CG1_DEVICES] = "devices",
  [CG1_NET_CLS] = "net_cls", [CG1_NET_PRIO] = "net_prio", [CG1_HUGETLB] = "hugetlb", [CG1_RDMA] = "rdma",
};

/* Bind src onto `name` in targetfd, or onto targetfd itself when name is NULL. */
static int
bind_dir (const char *src, int targetfd, const char *name, const struct mount_plan *p, struct sbx_error *err)
{
  _cleanup_close_ int tree = sys_open_tree (AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  struct mount_attr attr = { .attr_set = p->attr_set, .attr_clr = p->attr_clr };
  if (tree < 0)
    return sbx_error_set (err, errno, "open_tree of the container's cgroup");
  if ((attr.attr_set || attr.attr_clr) && sys_mount_setattr (tree, "", AT_EMPTY_PATH, &attr) < 0)
    return sbx_error_set (err, errno, "mount_setattr");
  if ((name ? sys_move_mount (tree, "", targetfd, name, MOVE_MOUNT_F_EMPTY_PATH) : attach_mount (tree, targetfd)) < 0)
    return sbx_error_set (err, errno, "move_mount");
  return 0;
}

static int
mount_v1 (const struct mount_plan *p, int targetfd, const struct cgroup *cg, struct sbx_error *err)
{
  struct oci_mount tmpfs = *p->m;
  struct mount_plan tp = *p;
  static const char *opts[] = { "mode=755", NULL };
  _cleanup_close_ int root = -1, mnt = -1;
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };

  tmpfs.type = "tmpfs";
  tmpfs.source = "cgroup";
  tp.m = &tmpfs;
  tp.fs_options = opts;
  tp.n_fs_options = 1;
  tp.attr_set &= ~(uint64_t) MOUNT_ATTR_RDONLY; /* made read-only after the binds */
  tp.propagation = 0;
  if (mount_one_fs (&tp, targetfd, true, &mnt, err) < 0)
    return -1;
  root = openat (mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return sbx_error_set (err, errno, "open the cgroup tmpfs");
  /* Each directory is made here, in the tmpfs just mounted that nothing else can
     reach yet: the bind goes onto its name, without an fd of its own. */
  for (int i = 0; cg && i < CG1_COUNT; i++)
    {
      _cleanup_free_ char *src = NULL;
      if (cg->v1_dirfd[i] < 0)
        continue;
      src = xasprintf ("/sys/fs/cgroup/%s%s", v1_dir_names[i], cg->path);
      if (FS_CREATE (mkdirat (root, v1_dir_names[i], 0755)) < 0)
        return sbx_error_set (err, errno, "mkdir %s", v1_dir_names[i]);
      if (bind_dir (src, root, v1_dir_names[i], p, err) < 0)
        return sbx_error_wrap (err, "%s", v1_dir_names[i]);
    }
  if ((p->attr_set & MOUNT_ATTR_RDONLY) && sys_mount_setattr (root, "", AT_EMPTY_PATH, &ro) < 0)
    return sbx_error_set (err, errno, "make the cgroup tmpfs read-only");
  return 0;
}

int
mount_cgroup (const struct mount_plan *p, int targetfd, const struct mounts_env *env, struct sbx_error *err)
{
  const struct cgroup *cg = env->cg;
  enum cgroup_mode mode = cg ? cg->mode : cgroup_detect_mode ();
  if (mode == CGROUP_MODE_UNIFIED)
    {
      if (env->cgroupns)
        {
          struct oci_mount m2 = *p->m;
          struct mount_plan p2 = *p;
          m2.type = "cgroup2";
          m2.source = "cgroup2";
          p2.m = &m2;
          return mount_one_fs (&p2, targetfd, true, NULL, err);
        }
      if (cg && cg->v2_dirfd >= 0)
        {
          _cleanup_free_ char *src = xasprintf ("/sys/fs/cgroup%s", cg->path);
          return bind_dir (src, targetfd, NULL, p, err);
        }
    }
  return mount_v1 (p, targetfd, cg && cg->mode != CGROUP_MODE_UNIFIED ? cg : NULL, err);
}
