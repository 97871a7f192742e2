/* The device allow-list of a container's cgroup. The rules are the config's
 * linux.resources.devices (or "deny everything" when it has none), followed by allow
 * rules for the default devices and for linux.devices, so those always work; later
 * rules win. v1 writes them to devices.allow/devices.deny; v2 has no devices files,
 * so the same rules become a small eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE), built
 * here instruction by instruction (libbpf is not a dependency). */
#ifndef SBX_CGROUP_DEVICES_H
#define SBX_CGROUP_DEVICES_H

#include "oci/config.h"
#include "oci/resources.h"
#include "runtime/base/error.h"

struct cgroup_device_defaults
{
  const struct oci_device *devices; /* linux.devices */
  size_t n;
};

int cgroup_v1_devices_apply (int dirfd, const struct oci_resources *r, const struct cgroup_device_defaults *d,
                             struct sbx_error *err);
int cgroup_v2_devices_apply (int dirfd, const struct oci_resources *r, const struct cgroup_device_defaults *d,
                             struct sbx_error *err);
/* The device filters attached to a v2 cgroup (-1: they cannot be counted). */
int cgroup_v2_device_filters (int dirfd);

#endif
