/* The systemd driver's entry points in libsbx-warm.so, which is built without it.
 * The warm interpreter makes sandboxes only, each in a cgroup it writes itself inside
 * the server's own; it never asks systemd for a scope. Linking the driver there pulled
 * libdbus-1 and, through Debian's build of it, libsystemd, libgcrypt, liblz4, libzstd
 * and liblzma into every warm interpreter and every run forked from it: mappings
 * that each fork copies and each run faults in, for code no run calls. A container
 * that names the driver is refused there with one line. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

static int
absent (struct sbx_error *err)
{
  return sbx_error_set (err, 0, "--systemd-cgroup: the systemd cgroup driver is not part of libsbx-warm.so");
}

int
cgroup_systemd_plan (struct cgroup *cg, const char *cgroups_path, const char *id, bool user, struct sbx_error *err)
{
  (void) cg, (void) cgroups_path, (void) id, (void) user;
  return absent (err);
}

int
cgroup_systemd_start (struct cgroup *cg, pid_t pid, const char *id, const struct oci_resources *r,
                      yajl_val annotations, struct sbx_error *err)
{
  (void) cg, (void) pid, (void) id, (void) r, (void) annotations;
  return absent (err);
}

int
cgroup_systemd_end (struct cgroup *cg, struct sbx_error *err)
{
  (void) cg;
  return absent (err);
}

int
cgroup_systemd_adopt (struct cgroup *cg, struct sbx_error *err)
{
  (void) cg;
  return absent (err);
}

int
cgroup_systemd_update (const struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err)
{
  (void) cg, (void) r;
  return absent (err);
}
