/* What runs inside the new namespaces, from clone3 to exec (see init.c). */
#ifndef SBX_INIT_H
#define SBX_INIT_H

#include <stdbool.h>

#include "oci/config.h"
#include "oci/state.h"
#include "runtime/base/context.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/container/join_fds.h"
#include "runtime/linux/mounts.h"
#include "runtime/linux/namespaces.h"
#include "runtime/linux/seccomp.h"

struct init_args
{
  struct sbx_ctx *ctx;
  const struct oci_config *config;
  const struct mount_plan *mount_plans;
  const struct ns_plan *ns;
  struct cgroup *cg;             /* the child's copy: its fds are closed after setup */
  const struct sbx_state *state; /* for the hooks' stdin */
  const char *rootfs;            /* absolute host path */
  const char *bundle;            /* absolute host path */
  int bundle_fd;
  int sync_fd;         /* the child's end */
  int fifo_fd;         /* create: exec.fifo opened O_RDWR; run: -1 */
  bool foreground;     /* run: wait for SYNC_START instead of the fifo */
  bool unacked_start;  /* foreground: exec once ready, without waiting for SYNC_START */
  bool pdeathsig;      /* die with the runtime process while it is our parent */
  bool parent_hooks;   /* prestart/createRuntime hooks: stop after the mounts */
  int preserve_fds;
  bool no_pivot;
  bool no_new_keyring;
  bool as_root;        /* the runtime runs as root in the host user namespace */
  int *idmap_fds;      /* received from the parent */
  int console_fd;      /* --console-socket, connected by the parent; -1 without a terminal */
  const struct seccomp_program *seccomp; /* NULL without linux.seccomp */
  const struct landlock_plan *landlock;  /* run.sbx-oci.landlock.* (landlock.h) */
  int seccomp_listener_fd; /* listenerPath, connected by the parent; -1 if none */
  const char *seccomp_metadata;
  pid_t host_pid;      /* our pid as the runtime sees it (sent with START/COMMITTED; 0 if unacked_start) */
  int pty_slave;       /* the terminal's slave, once made */
  int stdio[3];        /* fds to become stdin/stdout/stderr; -1: keep ours */
  bool cgroup_self_join; /* join cg ourselves (cgroup_ops.enter_self) before anything */
  bool with_reaper;    /* run.sbx-oci.init: our own pid 1 (reaper.h) */
  bool reaper_hold;    /* and "hold": no program (reaper_hold) */
  struct join_fds join; /* with reaper_hold: our namespaces and root, sent after READY (join_fds.h) */
  int status_fd;       /* with_reaper, foreground: where the program's wait status goes; -1 */
  int trampoline_fd;   /* the last exec goes through this sealed memfd (exec_trampoline.h); -1 */
  struct mounts_special special; /* what was mounted at /proc and /sys (mounts.h) */
  int parent_fds[4];   /* the parent's own fds (state dir, state root): closed first */
};

void init_main (struct init_args *a) __attribute__ ((noreturn));

#endif
