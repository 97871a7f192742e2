/* What runs for `exec` between clone3 and the exec of the new program. The parent
 * (exec.c) already made it a member of the container's pid and time
 * namespaces (for children) and of its cgroup; the child joins the rest. (An
 * unprivileged caller's late join: the parent's copy entered the user, pid and time
 * namespaces and made this child: exec.c, late_join_split.) */
#ifndef SBX_EXEC_CHILD_H
#define SBX_EXEC_CHILD_H

#include <stdbool.h>

#include "oci/config.h"
#include "oci/state.h"
#include "runtime/base/context.h"

struct seccomp_program;
struct cgroup;

struct exec_child_args
{
  struct sbx_ctx *ctx;
  const struct oci_process *process;
  const struct sbx_state *state;
  int sync_fd;     /* the child's end */
  int init_pidfd;  /* the container's init: setns(init_pidfd, ns_flags) */
  int ns_flags;    /* CLONE_NEW* of the namespaces that differ from the runtime's */
  /* not NULL: those namespaces are joined by these fds (by SBX_NS_*: a holding init's,
     join_fds.h), the user namespace first, not by init_pidfd */
  const int *join_ns;
  int root_fd;     /* O_PATH of /proc/<init>/root: our root after the join */
  int console_fd;  /* --console-socket, connected; -1 without a terminal */
  const struct seccomp_program *seccomp;
  const struct landlock_plan *landlock;
  int seccomp_listener_fd;
  const char *seccomp_metadata;
  int preserve_fds;
  bool detach;     /* outlive the runtime: no parent-death signal at exec */
  bool as_root;
  bool keep_groups; /* the container's OCI_KEEP_GROUPS_ANNOTATION */
  struct landlock_plan *deferred_landlock; /* exec_opts' (in_process): landlock copied there, not applied */
  int parent_fds[4]; /* the parent's own fds: closed first */
  /* joins the container's cgroups itself (cgroup_ops.enter_self), first thing: the
     parent moving it would write-lock cgroup_threadgroup_rwsem (cgroup_v1.c); NULL:
     the parent did */
  struct cgroup *self_join;
};

void exec_child_main (struct exec_child_args *a) __attribute__ ((noreturn));
/* exec_opts.in_process: everything exec_child_main does but the exec. Returns 0 in
   the process that is now the container's (its parent saw success); exits on error. */
void exec_child_become_in_process (struct exec_child_args *a);

#endif
