/* The container state: the OCI state document (runtime.md "State") that `state`,
 * `list` and hooks see, and the file the runtime keeps in its state dir, which adds
 * private fields under "sbx" (how to recognise the init process, which cgroup to
 * clean up). */
#ifndef SBX_OCI_STATE_H
#define SBX_OCI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "runtime/base/error.h"

struct sbx_state
{
  char *id;
  char *bundle;
  char *rootfs;
  char *created; /* RFC 3339 with nanoseconds, UTC */
  char *owner;
  pid_t pid;
  yajl_val annotations; /* borrowed when writing, owned (inside tree) when parsed */

  /* private */
  uint64_t init_start_time; /* /proc/PID/stat field 22: detects pid reuse */
  char *cgroup_path;        /* resolved cgroup path, "" when the container has none */
  int cgroup_mode;          /* enum cgroup_mode of runtime/cgroup/cgroup.h */
  uint32_t cgroup_v1_mask;  /* v1 hierarchies joined (bit = enum cgroup_v1_ctrl) */
  char *systemd_unit;       /* the systemd scope that holds the cgroup (--systemd-cgroup); NULL: none */
  bool systemd_user;        /* and the user's manager runs it, not the system's */
  bool has_process;         /* config.json had a process (start needs one) */
  bool has_cgroupns;        /* the container has its own cgroup namespace */
  bool userns;              /* the container has its own user namespace */
  uint32_t hooks_mask;      /* bit k: config has hooks of enum sbx_hook_kind k (start/delete need the snapshot) */

  yajl_val tree; /* owns annotations when parsed */
};

/* The public document; `status` is computed by the caller. */
char *oci_state_public_json (const struct sbx_state *s, const char *status, bool pretty, size_t *len);
/* The state dir file (public fields + "sbx" private object). */
char *oci_state_file_json (const struct sbx_state *s, size_t *len);
int oci_state_parse (const char *buf, size_t len, struct sbx_state *s, struct sbx_error *err);
void oci_state_clear (struct sbx_state *s);

/* Emit the public fields into an open map (used by state, list and hooks). */
#include <yajl/yajl_gen.h>
int oci_state_gen_fields (yajl_gen g, const struct sbx_state *s, const char *status);

#endif
