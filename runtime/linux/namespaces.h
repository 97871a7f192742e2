/* Namespaces: which to create, which to join, and in what order.
 *
 * One stage (the common case, and the fast one): clone3 creates every new namespace
 * at once (user first by construction), and the child setns()es into any joined
 * non-user namespace it still has the privilege to enter.
 *
 * Two stages, when that order is impossible: a user namespace is joined, or a new
 * user namespace must come *after* joining namespaces the host owns (a new userns
 * would no longer have the privilege to enter them). Then the child is cloned with
 * no new namespaces, joins by path, unshares the user namespace (the parent writes its
 * maps), unshares the rest and, for a new pid namespace, forks the real init.
 *
 * Joined pid namespaces are entered by the parent right before clone3 (setns of a pid
 * namespace only affects children); a time namespace with offsets is created by the
 * parent the same way, so the offsets can be written before any process is inside. */
#ifndef SBX_NAMESPACES_H
#define SBX_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci/config.h"
#include "runtime/base/error.h"

struct ns_plan
{
  int clone_flags;   /* one stage: CLONE_NEW* for clone3 */
  int unshare_flags; /* two stages: created by the child after the joins */
  int join_fd[SBX_NS_COUNT];
  bool two_stage;
  bool userns;            /* the container has a user namespace of its own (new) */
  bool userns_joined;
  bool pidns_new;
  bool cgroupns_new;
  bool cgroupns_late;     /* unshare the cgroup ns after the parent moved the child */
  bool timens_in_parent;  /* offsets: the parent unshares CLONE_NEWTIME before clone */
  bool mountns_joined;    /* no rootfs setup: the joined namespace has its own root */
};

/* Parent, before clone: open joined namespaces and check each one's type. */
int ns_plan_build (const struct oci_config *c, bool clone_into_cgroup, struct ns_plan *p, struct sbx_error *err);
void ns_plan_close (struct ns_plan *p);
/* Child: join the namespaces given by path (not user, pid or time unless asked). */
int ns_join_paths (const struct ns_plan *p, bool two_stage, struct sbx_error *err);
/* Init, in a new network namespace: bring the loopback interface up, as runc and
 * crun do (a sandbox with "no network" still has a working 127.0.0.1). */
int ns_loopback_up (struct sbx_error *err);
/* Parent: write /proc/self/timens_offsets after unshare(CLONE_NEWTIME). */
int ns_write_time_offsets (const struct oci_config *c, struct sbx_error *err);

/* userns.c: the parent writes the child's uid/gid maps. */
int userns_write_maps (pid_t pid, const struct oci_config *c, bool as_root, struct sbx_error *err);
/* Is this process in the initial user namespace (its uid_map the identity)? */
bool userns_self_is_initial (void);
/* Is container id `id` mapped (so setresuid(id) can work)? */
bool userns_id_mapped (const struct oci_id_mapping *m, size_t n, uint32_t id);

#endif
