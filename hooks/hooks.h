/* OCI hooks (config.md "POSIX-platform Hooks"): each hook is run with the container
 * state on stdin, its own args and env, and an optional timeout after which it is
 * killed. The caller decides what a failure means (fatal for create-time hooks, a
 * warning for poststart/poststop). */
#ifndef SBX_HOOKS_H
#define SBX_HOOKS_H

#include <stddef.h>

#include "oci/config.h"
#include "runtime/base/error.h"

/* Run every hook of `list` in order; stops at the first failure. */
int hooks_run (const struct oci_hook_list *list, const char *kind, const char *state_json, size_t state_len,
               struct sbx_error *err);

#endif
