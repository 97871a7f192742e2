#include "build-config.h"
#include "runtime/linux/devices_host.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/mountapi.h"

/* The host id that container id `id` maps to; false when no mapping covers it. */
static bool
to_host (const struct oci_id_mapping *m, size_t n, uint32_t id, uint32_t *out)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && (uint64_t) id < (uint64_t) m[i].container_id + m[i].size)
      {
        *out = m[i].host_id + (id - m[i].container_id);
        return true;
      }
  return false;
}

/* The node's host owner: the entry's uid and gid (default: the container's root)
   through the container's mappings. An id the entry names but no mapping covers is an
   error; an unmapped default leaves host root's, which the container sees as nobody. */
static int
host_owner (const struct oci_config *c, const struct oci_device *d, size_t i, uid_t *uid, gid_t *gid,
            struct sbx_error *err)
{
  const struct oci_linux *l = &c->linux_;
  uint32_t u = 0, g = 0;
  if (!to_host (l->uid_mappings, l->n_uid_mappings, d->has_uid ? d->uid : 0, &u) && d->has_uid)
    return sbx_error_set (err, 0, "linux.devices[%zu].uid %u is not mapped by linux.uidMappings", i, d->uid);
  if (!to_host (l->gid_mappings, l->n_gid_mappings, d->has_gid ? d->gid : 0, &g) && d->has_gid)
    return sbx_error_set (err, 0, "linux.devices[%zu].gid %u is not mapped by linux.gidMappings", i, d->gid);
  *uid = u;
  *gid = g;
  return 0;
}

/* A tmpfs of the host's (not of the container's user namespace, so not nodev),
   detached: only the clone of the node made in it is ever attached anywhere. */
static int
private_tmpfs (struct sbx_error *err)
{
  _cleanup_close_ int fs = sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  int mnt;
  if (fs < 0 || sys_fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0
      || sys_fsconfig (fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0
      || sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sbx_error_set (err, errno, "a tmpfs for the device node");
  mnt = sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  if (mnt < 0)
    return sbx_error_set (err, errno, "a tmpfs for the device node: fsmount");
  return mnt;
}

int
devices_host_make_node (const struct oci_config *c, size_t i, struct sbx_error *err)
{
  const struct oci_device *d = &c->linux_.devices[i];
  mode_t type = d->type == 'b' ? S_IFBLK : S_IFCHR;
  mode_t mode = d->has_file_mode ? d->file_mode & 07777 : 0666;
  _cleanup_close_ int mnt = -1;
  uid_t uid = 0;
  gid_t gid = 0;
  int tree;
  if (host_owner (c, d, i, &uid, &gid, err) < 0)
    return -1;
  mnt = private_tmpfs (err);
  if (mnt < 0)
    return -1;
  /* mknod honours the umask: the mode is set exactly afterwards. */
  if (mknodat (mnt, "node", type | 0600, makedev ((unsigned) d->major, (unsigned) d->minor)) < 0
      || fchownat (mnt, "node", uid, gid, AT_SYMLINK_NOFOLLOW) < 0 || fchmodat (mnt, "node", mode, 0) < 0)
    return sbx_error_set (err, errno, "linux.devices[%zu] (%s): make the node", i, d->path);
  tree = sys_open_tree (mnt, "node", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
  if (tree < 0)
    return sbx_error_set (err, errno, "linux.devices[%zu] (%s): clone the node", i, d->path);
  return tree;
}
