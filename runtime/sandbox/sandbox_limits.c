/* How each limit of the policy is enforced in the situation at hand, decided before
 * anything is built, so that a limit nobody would enforce is an error (fail closed)
 * unless the caller passed --allow-degraded, and then it is named.
 *
 *   root, cgroups mounted  memory and pids: the sandbox's cgroup (the whole sandbox)
 *   a systemd host         the same, the cgroup a scope that systemd makes (the systemd
 *                          driver), for root and, through the user's own manager, for
 *                          a user: nothing is written outside a unit with Delegate=yes
 *   otherwise (rootless)   pids: RLIMIT_NPROC, which the kernel counts per user per
 *                          user namespace, so it caps the sandbox's own tasks: the same
 *                          wall. memory: only RLIMIT_AS per process is left, which is
 *                          not the same (N processes may use N times it; address space
 *                          is not memory): degraded.
 * CPU time, open files and file size are per-process rlimits everywhere, as their
 * options say. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/systemd_bus.h"

/* systemd is PID 1 (sd_booted(3)) and runs a manager for this caller: the system's
   for root in the host's user namespace, the user's own (user@UID.service, its bus
   in XDG_RUNTIME_DIR) otherwise, which systemd delegates cgroup v2 controllers to.
   --cgroup-manager cgroupfs or disabled, given by the caller, is obeyed. */
bool
sandbox_systemd_host (const struct sbx_ctx *ctx)
{
  enum cgroup_mode mode;
  if (ctx->cgroup_manager_given && ctx->cgroup_manager != CGROUP_MANAGER_SYSTEMD)
    return false;
  if (access ("/run/systemd/system", F_OK) != 0 || !sd_manager_running (!ctx->host_root))
    return false;
  mode = cgroup_detect_mode ();
  return ctx->host_root ? mode != CGROUP_MODE_NONE : mode == CGROUP_MODE_UNIFIED;
}

int
sandbox_limits_plan (const struct sbx_ctx *ctx, const struct sandbox_policy *p, bool systemd_ok,
                     struct sandbox_limits *l, struct sbx_error *err)
{
  const char *why;
  memset (l, 0, sizeof *l);
  l->systemd = systemd_ok && !ctx->cgroup_parent && sandbox_systemd_host (ctx);
  l->cgroup = l->systemd || ctx->cgroup_delegated
              || (ctx->host_root && ctx->cgroup_manager != CGROUP_MANAGER_DISABLED
                  && cgroup_detect_mode () != CGROUP_MODE_NONE);
  if (l->cgroup)
    {
      l->memory = l->pids = LIMIT_CGROUP;
      return 0;
    }
  why = !ctx->host_root ? "not root in the host's user namespace, and no cgroup is delegated to this user"
        : ctx->cgroup_manager == CGROUP_MANAGER_DISABLED ? "--cgroup-manager is disabled"
                                                         : "no cgroup file system is mounted";
  l->pids = LIMIT_RLIMIT;
  if (!p->allow_degraded)
    return sbx_error_set (err, 0,
                          "--memory: cannot be enforced for the whole sandbox (%s); --allow-degraded runs with a "
                          "per-process RLIMIT_AS instead",
                          why);
  l->memory = LIMIT_RLIMIT_INSTEAD;
  l->degraded[l->n_degraded++] = xasprintf ("memory: RLIMIT_AS of %llu bytes per process instead of a cgroup limit "
                                            "(%s); no OOM kill or peak for the whole sandbox",
                                            (unsigned long long) p->memory, why);
  return 0;
}

void
sandbox_limits_free (struct sandbox_limits *l)
{
  for (size_t i = 0; i < l->n_degraded; i++)
    free (l->degraded[i]);
  l->n_degraded = 0;
}
