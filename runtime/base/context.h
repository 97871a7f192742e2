/* The parsed global options, passed down explicitly (no global mutable state). */
#ifndef SBX_CONTEXT_H
#define SBX_CONTEXT_H

#include <stdbool.h>

#include "runtime/base/log.h"

enum cgroup_manager
{
  CGROUP_MANAGER_CGROUPFS,
  CGROUP_MANAGER_SYSTEMD, /* a transient scope per container, made by systemd (cgroup_systemd.c) */
  CGROUP_MANAGER_DISABLED,
};

struct sbx_ctx
{
  const char *root; /* state root: --root, /run/sbx-oci, or $XDG_RUNTIME_DIR/sbx-oci */
  struct sbx_log log;
  bool systemd_cgroup;
  enum cgroup_manager cgroup_manager;
  bool cgroup_manager_given; /* by --cgroup-manager or --systemd-cgroup, not the default */
  /* Where containers without a cgroupsPath get their cgroup: NULL, /sbx-oci; a
     server's own systemd scope (serve_scope.c). DELEGATED: that parent is this
     user's to manage, though not root (a scope of the user's own manager). */
  const char *cgroup_parent;
  bool cgroup_delegated;
  bool as_root;   /* geteuid() == 0 */
  bool host_root; /* and in the host's user namespace: the cgroups and devices are its to manage */
};

#endif
