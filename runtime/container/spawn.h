/* clone3 of the container init, and the parent's half of its setup (steps 1-2 of
 * the protocol in sync.h): cgroup, oom_score_adj, id maps, and the two-stage
 * namespace handshake. */
#ifndef SBX_SPAWN_H
#define SBX_SPAWN_H

#include <sys/types.h>

#include "runtime/container/init.h"

struct spawned
{
  pid_t pid;
  int pidfd;
  int sync_fd; /* the parent's end */
  bool in_cgroup; /* placed by CLONE_INTO_CGROUP */
};

/* Clone the init (which runs init_main(a)); returns with the child waiting for GO. */
int spawn_init (struct init_args *a, struct cgroup *cg, struct spawned *s, struct sbx_error *err);
/* Move the child into its cgroup, set oom_score_adj, write id maps, send GO; in the
 * two-stage case also map the later user namespace and adopt the real init. */
int spawn_setup_child (struct init_args *a, struct cgroup *cg, struct spawned *s, struct sbx_error *err);
/* Kill the child (if any) and reap it. */
void spawn_kill (struct spawned *s);

/* Enter a namespace (pid, time) for our future children only, saving ours in *saved
 * (fd -1: unshare a new one later, just save). spawn_restore_ns goes back. */
int spawn_enter_ns_for_children (const char *proc_name, int fd, int flag, int *saved, struct sbx_error *err);
void spawn_restore_ns (int *saved, int flag);
int spawn_write_oom_score_adj (pid_t pid, int value, struct sbx_error *err);

#endif
