/* Idmapped bind mounts (config.md "idmap"/"ridmap", mount_setattr(MOUNT_ATTR_IDMAP)).
 * Only a process privileged in the filesystem's user namespace (the host's) may idmap
 * a host mount, so the parent makes each one: a detached open_tree clone of the
 * source, idmapped with the mount's own uid/gid mappings (through a short-lived user
 * namespace holding them) or, without mappings, with the container's user namespace.
 * The init receives the detached mounts over the sync socket and attaches them. */
#ifndef SBX_IDMAP_H
#define SBX_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime/base/error.h"
#include "runtime/linux/mounts.h"

bool idmap_needed (const struct oci_config *c, const struct mount_plan *plans);
/* A user namespace with these mappings (an O_CLOEXEC fd of it), for
   mount_setattr(MOUNT_ATTR_IDMAP): the mappings of a mount. */
int idmap_userns (const struct oci_id_mapping *uid, size_t n_uid, const struct oci_id_mapping *gid, size_t n_gid,
                  struct sbx_error *err);
/* Parent: make the idmapped trees; fds[i] is -1 for mounts without idmap. */
int idmap_prepare (const struct oci_config *c, const struct mount_plan *plans, const char *bundle, pid_t init_pid,
                   int *fds, struct sbx_error *err);

#endif
