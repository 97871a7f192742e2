/* The process's identity and privileges, applied last before exec: the bounding
 * set (caps_drop_bounding, before a seccomp filter is loaded), then groups -> gid ->
 * uid (capabilities kept across the uid change) -> effective/permitted/inheritable
 * -> ambient (caps_apply_user_and_caps). Capabilities that cannot be
 * granted are logged as warnings and dropped, as config.md requires. */
#ifndef SBX_CAPS_H
#define SBX_CAPS_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"

int caps_drop_bounding (const struct oci_process *p, struct sbx_error *err);
int caps_apply_user_and_caps (const struct oci_process *p, bool setgroups_allowed, bool keep_groups,
                              struct sbx_log *log,
                              struct sbx_error *err);

#endif
