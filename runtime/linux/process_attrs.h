/* Per-process settings of config.md "process" other than user and capabilities:
 * rlimits, scheduler, I/O priority, personality, LSM exec labels, session keyring,
 * no_new_privs, sysctls. Each is a single syscall or write, applied by the init. */
#ifndef SBX_PROCESS_ATTRS_H
#define SBX_PROCESS_ATTRS_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"

int process_apply_rlimits (const struct oci_process *p, struct sbx_error *err);
/* At create: a hard limit the init could not set (above the runtime's own, without
   CAP_SYS_RESOURCE in the host's user namespace) is refused now, as runc and crun
   refuse it, not after start. */
int process_check_rlimits (const struct oci_process *p, struct sbx_error *err);
int process_apply_scheduling (const struct oci_process *p, struct sbx_error *err);
int process_apply_personality (const struct oci_linux *l, struct sbx_error *err);
/* linux.memoryPolicy: set_mempolicy(2), inherited by the program across exec. */
int process_apply_memory_policy (const struct oci_linux *l, struct sbx_error *err);
/* AppArmor profile / SELinux label for the next exec; must run while /proc is the
 * host's (before pivot_root), so a rootfs cannot fake the attr files. */
int process_apply_lsm_labels (const struct oci_config *c, struct sbx_error *err);
/* The process part alone (exec). */
int process_apply_process_labels (const struct oci_process *p, struct sbx_error *err);
int process_new_session_keyring (struct sbx_error *err);
int process_set_no_new_privs (struct sbx_error *err);
/* Write linux.sysctl through a private procfs instance (never the container's /proc,
 * which the rootfs or a mount could have replaced: CVE-2025-52881). */
int process_apply_sysctls (const struct oci_linux *l, struct sbx_error *err);

#endif
