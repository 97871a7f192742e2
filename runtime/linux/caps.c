#include "build-config.h"
#include "runtime/linux/caps.h"

#include <grp.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "oci/vocab.h"
#include "runtime/base/util.h"

/* libcap knows the kernel's capabilities (0..cap_max_bits()-1, probed once before
 * main), so no PR_CAPBSET_DROP is spent finding the end. */
static int
drop_bounding (uint64_t keep, struct sbx_error *err)
{
  char name[SBX_CAP_NAME_MAX];
  for (int cap = 0; cap < sbx_capability_count (); cap++)
    if (!(keep & (UINT64_C (1) << cap)) && cap_drop_bound ((cap_value_t) cap) < 0)
      return sbx_error_set (err, errno, "drop %s from the bounding set", sbx_capability_name (cap, name));
  return 0;
}

/* The process's three sets as bit masks, through libcap's cap_t: one capget
 * (cap_get_proc) and one capset (cap_set_proc), as the kernel needs. */
struct cap_sets
{
  uint64_t effective, permitted, inheritable;
};

static const cap_flag_t cap_flags[] = { CAP_EFFECTIVE, CAP_PERMITTED, CAP_INHERITABLE };

static uint64_t *
cap_sets_field (struct cap_sets *s, cap_flag_t f)
{
  return f == CAP_EFFECTIVE ? &s->effective : f == CAP_PERMITTED ? &s->permitted : &s->inheritable;
}

static int
cap_sets_get (struct cap_sets *s)
{
  cap_t c = cap_get_proc ();
  if (!c)
    return -1;
  *s = (struct cap_sets){ 0 };
  for (size_t f = 0; f < 3; f++)
    for (int cap = 0; cap < sbx_capability_count (); cap++)
      {
        cap_flag_value_t v = CAP_CLEAR;
        if (cap_get_flag (c, (cap_value_t) cap, cap_flags[f], &v) == 0 && v == CAP_SET)
          *cap_sets_field (s, cap_flags[f]) |= UINT64_C (1) << cap;
      }
  cap_free (c);
  return 0;
}

static int
cap_sets_set (struct cap_sets *s)
{
  cap_t c = cap_init ();
  int r = -1, saved;
  if (!c)
    return -1;
  for (size_t f = 0; f < 3; f++)
    for (int cap = 0; cap < sbx_capability_count (); cap++)
      if (*cap_sets_field (s, cap_flags[f]) >> cap & 1)
        {
          cap_value_t v = (cap_value_t) cap;
          if (cap_set_flag (c, cap_flags[f], 1, &v, CAP_SET) < 0)
            goto out;
        }
  r = cap_set_proc (c);
out:
  saved = errno;
  cap_free (c);
  errno = saved;
  return r;
}

static int
set_groups_and_ids (const struct oci_user *u, bool setgroups_allowed, bool keep_groups, struct sbx_error *err)
{
  if (keep_groups)
    ; /* the caller's supplementary groups, inherited (OCI_KEEP_GROUPS_ANNOTATION) */
  else if (setgroups_allowed)
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
  char name[SBX_CAP_NAME_MAX];
  for (int cap = 0; cap < 64; cap++)
    if (missing & (UINT64_C (1) << cap))
      sbx_log_write (log, SBX_LOG_WARNING, "process.capabilities.%s: %s cannot be granted here; dropped", set,
                     sbx_capability_name (cap, name));
}

static int
set_capabilities (const struct oci_capabilities *want, struct sbx_log *log, struct sbx_error *err)
{
  struct cap_sets cur, next;
  char name[SBX_CAP_NAME_MAX];
  int count = sbx_capability_count ();
  uint64_t known = count >= 64 ? ~UINT64_C (0) : (UINT64_C (1) << count) - 1;
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
  /* One prctl, not libcap's cap_reset_ambient(), which first asks about each
     capability. */
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return sbx_error_set (err, errno, "process.capabilities.ambient: clear");
  for (int cap = 0; cap < count; cap++)
    if ((want->ambient >> cap) & 1)
      {
        /* The kernel needs an ambient capability to be permitted and inheritable. */
        if (!((perm & inh) >> cap & 1) || cap_set_ambient ((cap_value_t) cap, CAP_SET) < 0)
          sbx_log_write (log, SBX_LOG_WARNING,
                         "process.capabilities.ambient: %s needs to be permitted and inheritable; dropped",
                         sbx_capability_name (cap, name));
      }
  return 0;
}

int
caps_drop_bounding (const struct oci_process *p, struct sbx_error *err)
{
  return drop_bounding (p->has_capabilities ? p->caps.bounding : 0, err);
}

int
caps_apply_user_and_caps (const struct oci_process *p, bool setgroups_allowed, bool keep_groups,
                          struct sbx_log *log, struct sbx_error *err)
{
  struct oci_capabilities none = { 0 };
  const struct oci_capabilities *caps = p->has_capabilities ? &p->caps : &none;
  /* Keep the permitted set across setuid: we drop to exactly what the config asks. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return sbx_error_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  if (set_groups_and_ids (&p->user, setgroups_allowed, keep_groups, err) < 0 || set_capabilities (caps, log, err) < 0)
    return -1;
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return sbx_error_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  return 0;
}
