#include "build-config.h"
#include "runtime/caps.h"

#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"

/* The kernel's capabilities are numbered 0..cap_last_cap without gaps: the first
 * PR_CAPBSET_DROP that says EINVAL is past the last one. */
static int
drop_bounding (uint64_t keep, struct sbx_error *err)
{
  for (int cap = 0; cap < 64; cap++)
    if (!(keep & (UINT64_C (1) << cap)) && prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
      {
        if (errno == EINVAL)
          break;
        return sbx_error_set (err, errno, "drop %s from the bounding set",
                              cap < (int) sbx_capability_count ? sbx_capability_names[cap] : "capability");
      }
  return 0;
}

/* capget/capset with the 64-bit interface (version 3: each set is two 32-bit words).
 * Called directly: libcap asked the kernel three times for what one capget says. */
struct cap_sets
{
  uint64_t effective, permitted, inheritable;
};

static int
cap_sets_get (struct cap_sets *s)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
  if (syscall (SYS_capget, &h, d) < 0)
    return -1;
  s->effective = d[0].effective | (uint64_t) d[1].effective << 32;
  s->permitted = d[0].permitted | (uint64_t) d[1].permitted << 32;
  s->inheritable = d[0].inheritable | (uint64_t) d[1].inheritable << 32;
  return 0;
}

static int
cap_sets_set (const struct cap_sets *s)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
    { (uint32_t) s->effective, (uint32_t) s->permitted, (uint32_t) s->inheritable },
    { (uint32_t) (s->effective >> 32), (uint32_t) (s->permitted >> 32), (uint32_t) (s->inheritable >> 32) },
  };
  return syscall (SYS_capset, &h, d) < 0 ? -1 : 0;
}

static int
set_groups_and_ids (const struct oci_user *u, bool setgroups_allowed, struct sbx_error *err)
{
  if (setgroups_allowed)
    {
      gid_t *gids = xmalloc0 ((u->n_additional_gids + 1) * sizeof (gid_t));
      int r;
      for (size_t i = 0; i < u->n_additional_gids; i++)
        gids[i] = u->additional_gids[i];
      r = setgroups (u->n_additional_gids, gids);
      free (gids);
      /* In a user namespace whose setgroups is "deny" (made by an unprivileged user)
       * the group list cannot change at all: fine when none is asked for. */
      if (r < 0 && !(errno == EPERM && u->n_additional_gids == 0))
        return sbx_error_set (err, errno, "process.user.additionalGids: setgroups");
    }
  else if (u->n_additional_gids > 0)
    return sbx_error_set (err, EPERM, "process.user.additionalGids: setgroups is denied in this user namespace "
                                      "(an unprivileged user cannot set supplementary groups)");
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return sbx_error_set (err, errno, "process.user.gid: setresgid(%u)", u->gid);
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return sbx_error_set (err, errno, "process.user.uid: setresuid(%u)", u->uid);
  return 0;
}

static void
warn_missing (struct sbx_log *log, const char *set, uint64_t missing)
{
  for (size_t cap = 0; cap < sbx_capability_count; cap++)
    if (missing & (UINT64_C (1) << cap))
      sbx_log_write (log, SBX_LOG_WARNING, "process.capabilities.%s: %s cannot be granted here; dropped", set,
                     sbx_capability_names[cap]);
}

static int
set_capabilities (const struct oci_capabilities *want, struct sbx_log *log, struct sbx_error *err)
{
  struct cap_sets cur, next;
  uint64_t known = sbx_capability_count >= 64 ? ~UINT64_C (0) : (UINT64_C (1) << sbx_capability_count) - 1;
  uint64_t have, eff, perm, inh;
  if (cap_sets_get (&cur) < 0)
    return sbx_error_set (err, errno, "process.capabilities: capget");
  have = cur.permitted & known;
  /* We can only keep what is permitted now (and, for inheritable, in the bounding
   * set); anything else is dropped with a warning. */
  perm = want->permitted & have;
  eff = want->effective & perm;
  inh = want->inheritable & (have | want->bounding) & want->bounding;
  warn_missing (log, "permitted", want->permitted & ~perm);
  warn_missing (log, "effective", want->effective & ~eff & ~(want->permitted & ~perm));
  next = (struct cap_sets){ .effective = eff & known, .permitted = perm & known, .inheritable = inh & known };
  if (cap_sets_set (&next) < 0)
    return sbx_error_set (err, errno, "process.capabilities: capset");
  /* One prctl: libcap's cap_reset_ambient() first asks about each capability. */
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return sbx_error_set (err, errno, "process.capabilities.ambient: clear");
  for (size_t cap = 0; cap < sbx_capability_count; cap++)
    if ((want->ambient >> cap) & 1)
      {
        /* The kernel needs an ambient capability to be permitted and inheritable. */
        if (!((perm & inh) >> cap & 1) || prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
          sbx_log_write (log, SBX_LOG_WARNING,
                         "process.capabilities.ambient: %s needs to be permitted and inheritable; dropped",
                         sbx_capability_names[cap]);
      }
  return 0;
}

int
caps_drop_bounding (const struct oci_process *p, struct sbx_error *err)
{
  return drop_bounding (p->has_capabilities ? p->caps.bounding : 0, err);
}

int
caps_apply_user_and_caps (const struct oci_process *p, bool setgroups_allowed, struct sbx_log *log,
                          struct sbx_error *err)
{
  struct oci_capabilities none = { 0 };
  const struct oci_capabilities *caps = p->has_capabilities ? &p->caps : &none;
  /* Keep the permitted set across setuid: we drop to exactly what the config asks. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return sbx_error_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  if (set_groups_and_ids (&p->user, setgroups_allowed, err) < 0 || set_capabilities (caps, log, err) < 0)
    return -1;
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return sbx_error_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  return 0;
}
