/* Device nodes for a container in a user namespace, made by the runtime as host root.
 *
 * The init cannot mknod once it is in its user namespace, and a node made in a file
 * system that namespace mounted could not be opened (such mounts are nodev). So for a
 * linux.devices entry the init asks the parent (SYNC_DEVICE_NODE, devices.c), which
 * makes the node on a private tmpfs of its own, with the entry's type, numbers, mode
 * and owner (the container's uid and gid mapped to the host's), and sends a detached
 * bind mount of it back: the node works in the container as the host's own would. */
#ifndef SBX_DEVICES_HOST_H
#define SBX_DEVICES_HOST_H

#include <stddef.h>

#include "oci/config.h"
#include "runtime/base/error.h"

/* The detached mount of linux.devices[i]'s node (O_CLOEXEC), or -1 and `err`. */
int devices_host_make_node (const struct oci_config *c, size_t i, struct sbx_error *err);

#endif
