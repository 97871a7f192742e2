/* The container's root: mount propagation, the self-bind that makes the rootfs a
 * mount point, pivot_root (or MS_MOVE + chroot with --no-pivot), masked and
 * read-only paths, root.readonly and rootfsPropagation. */
#ifndef SBX_ROOTFS_H
#define SBX_ROOTFS_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"

/* Cut propagation with the host and bind the rootfs onto itself; returns an O_PATH
 * fd to the new root mount. */
int rootfs_prepare (const struct oci_config *c, const char *rootfs, struct sbx_error *err);
/* Make rootfd the root of the mount namespace and detach the old root. */
int rootfs_pivot (int rootfd, bool no_pivot, struct sbx_error *err);
/* After the pivot: masked paths, read-only paths, root.readonly, rootfsPropagation. */
struct mounts_special;
int rootfs_finalize (const struct oci_config *c, const struct mounts_special *sp, struct sbx_error *err);

#endif
