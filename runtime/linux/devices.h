/* /dev in the container: the default devices of config-linux.md (null, zero, full,
 * random, urandom, tty, ptmx), the /dev/fd and std* symlinks of runtime-linux.md,
 * and linux.devices. Without a user namespace nodes are made with mknod; in one
 * (where mknod is refused, and a node would not open on its nodev mounts) a node is
 * bind-mounted: a linux.devices entry's is made by the parent as host root, with its
 * owner and mode (devices_host.h), when `host_nodes_fd` (the sync socket to that
 * parent) is not -1; otherwise, and for the default devices, the host's own node,
 * after checking it is the device it claims to be. An existing entry that is not the
 * expected device is an error, never followed (CVE-2025-31133, CVE-2026-41579). */
#ifndef SBX_DEVICES_H
#define SBX_DEVICES_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"

int devices_setup (int rootfd, const struct oci_config *c, bool userns, int host_nodes_fd, struct sbx_error *err);

#endif
