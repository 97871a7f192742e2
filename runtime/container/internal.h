/* The parent's side of a container being created (create.c) and run in the
 * foreground (run.c): struct container, and the steps the two share. Only
 * those two files include this. */
#ifndef SBX_CONTAINER_INTERNAL_H
#define SBX_CONTAINER_INTERNAL_H

#include <signal.h>
#include <stdbool.h>

#include "hooks/hooks.h"
#include "oci/config.h"
#include "oci/resources.h"
#include "oci/seccomp_config.h"
#include "oci/state.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/container/container.h"
#include "runtime/container/init.h"
#include "runtime/linux/landlock.h"
#include "runtime/linux/mounts.h"
#include "runtime/linux/namespaces.h"
#include "runtime/linux/seccomp.h"
#include "runtime/container/spawn.h"
#include "runtime/container/tty_relay.h"

struct container
{
  struct sbx_ctx *ctx;
  const struct create_opts *o;
  char *bundle; /* absolute */
  char *rootfs; /* absolute */
  int bundle_fd;
  int root_fd;  /* the state root */
  int state_fd; /* ROOT/ID, once claimed */
  struct oci_config *config;
  struct mount_plan *mount_plans;
  struct ns_plan ns;
  struct oci_resources resources;
  struct oci_seccomp seccomp_config;
  struct seccomp_program seccomp;
  struct landlock_plan landlock;
  struct cgroup cg;
  bool cgroup_created;
  bool kept_cgroup; /* create_opts.kept_cgroup is this container's */
  char *own_cgroup; /* then: the cgroup it would have had (the kept one is stuck) */
  bool pid_file_written; /* an abort removes it: it names a container that is gone */
  struct sbx_state state;
  struct spawned child;
  int fifo_fd;
  struct init_args init;
  int listen_fds;        /* socket activation: fds 3..3+N-1 passed on (LISTEN_FDS) */
  char *listen_env;      /* "LISTEN_FDS=N" for the process's env */
  bool forward_signals;  /* foreground run: the forwarded signals are blocked throughout */
  bool one_shot;         /* foreground run deleted when it ends (not --keep) */
  bool watched;          /* foreground run whose caller reads the numbers (run_watch) */
  bool signals_blocked;
  sigset_t forwarded, saved_mask;
  struct run_watch *watch; /* a watched foreground run, once the program started */
  bool with_reaper;         /* run.sbx-oci.init (reaper.h) */
  bool reaper_hold;         /* its "hold": no program, a process joins */
  struct join_fds join;     /* with reaper_hold: the init's namespaces and root (join_fds.h) */
  int status_pipe[2];       /* foreground run with the reaper: the program's wait status */
  int trampoline_fd;        /* the init's last exec goes through it (exec_trampoline.h); -1 */
  bool unacked_start;       /* foreground run, nothing between ready and exec: see spawn() */
  int tty_sock;             /* foreground run with a terminal and no console socket: */
  struct tty_relay tty;     /* the pty master comes back on tty_sock and is relayed */
};

void container_init_struct (struct container *c, struct sbx_ctx *ctx, const struct create_opts *o);
void container_free (struct container *c);
/* The end of a container: its cgroup removed, or a kept one emptied. */
int container_end_cgroup (struct container *c, struct sbx_error *err);
/* Undo a partial create (errors are logged: the first one is the user's). */
void container_abort (struct container *c);
int container_run_hooks (struct container *c, enum sbx_hook_kind kind, const char *status, struct sbx_error *err);
/* Load, plan, claim the state dir, spawn the init and record it (runtime.md 1-9);
   FOREGROUND: a run, whose caller starts the program itself. */
int container_create_common (struct container *c, bool foreground, struct sbx_error *err);
/* create: the state is on disk; the init is handed over to whoever adopts it. */
int container_commit (struct container *c, struct sbx_error *err);

#endif
