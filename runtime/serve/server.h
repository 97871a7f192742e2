/* `sbx-oci serve`: the server (server.c), its warm interpreter (interpreter.c), what its workers do with a request
 * (worker.c) and the routing of sessions' calls (session_route.c). */
#ifndef SBX_SERVE_SERVER_H
#define SBX_SERVE_SERVER_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime/base/context.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/serve/wire.h"

struct serve
{
  struct sbx_ctx *ctx;
  const char *socket_path, *preload;
  unsigned max_runs, queue_max, recycle;
  struct sandbox_policy p;   /* the defaults, checked once here */
  char **defaults;           /* the same as options for each run's command line */
  size_t n_defaults;
  char *python;              /* the interpreter, the warm one's and the sandboxes' */
  char *lib;                 /* libsbx-warm.so */
  int listen_fd, log_fd;
  int zygote_fd;             /* our end of the warm interpreter's socket */
  int idmap_userns;          /* our user's directories seen as the sandbox user's (struct sandbox_warm); -1 */
  pid_t zygote_pid;
  unsigned zygote_runs;      /* runs forked from it so far */
  pid_t *workers;
  unsigned n_workers;
  /* workers whose client has its reply and whose sandbox is being torn down: no
     --max-runs slot (at most 4 per --max-runs place; more keep theirs) */
  pid_t *ending;
  unsigned n_ending;
  int *queue;
  unsigned n_queue;
  unsigned long runs;
  pid_t *retired; /* recycled interpreters, ending once their workers are done */
  size_t n_retired;
  /* standbys: workers whose sandbox is made and joined, waiting for a client (handed
     over on ctl) */
  unsigned standby_max;
  struct standby
  {
    pid_t pid;
    int ctl;
  } *standbys;
  unsigned n_standbys;
  unsigned standby_failures; /* standbys that ended without a client, in a row */
  /* in a worker */
  struct connect_request req; /* its client's */
  int ctl_fd;                 /* a standby's, from the server */
  bool stopping;              /* a standby's server closed ctl: it is stopping */
  pid_t server_pid;           /* a standby's: its parent, the server */
  /* sessions (session_route.c) */
  char *session_dir;          /* SOCKET.sessions: their sockets (0700) */
  unsigned session_idle;      /* --session-idle */
  unsigned max_sessions;      /* --max-sessions */
  int notify_fd[2];           /* a worker that becomes a session says so on [1] */
  pid_t *sessions;            /* those workers (not runs: no --max-runs slot) */
  unsigned n_sessions;
  /* kept cgroups (kept_cgroups.c): slot N's worker, 0 when free, -2 retired */
  pid_t *kept_by;
  unsigned n_kept;
  char *kept_prefix; /* this server's slots' paths but the number; NULL: none kept */
  char *kept_cgroup; /* in a worker: its slot's cgroup; NULL: none */
  char *cgroup_parent; /* the server's own systemd scope (serve_scope.c); NULL: /sbx-oci */
};

/* interpreter.c */
/* libsbx-warm.so: beside the binary (the build tree), else where make install puts it. */
char *warm_lib_find (struct sbx_error *err);
/* The warm interpreter started (ready once it has imported the preload). */
int zygote_start (struct serve *s, struct sbx_error *err);
void zygote_stop (struct serve *s);
/* A new one if the current one has made --recycle runs. */
void zygote_recycle (struct serve *s);

/* worker.c */
/* A line in the server's log. */
void slog (struct serve *s, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* In a worker: the client's request read; its stdio, cwd and environment are ours. */
int take_request (struct serve *s, int client, struct sbx_error *err);
/* python's command line in a worker: the server's options, then ARGV (malloc'd). */
char **run_argv (struct serve *s, char **argv, size_t argc, int *out);

/* kept_cgroups.c */
/* Starting: this server's slots named (its pid and start time). */
void kept_slots_init (struct serve *s);
/* serve_scope.c: where systemd is PID 1 (cgroup v2), the server in a scope of its own,
   made by systemd with Delegate=yes, its sandboxes' cgroups inside (ctx->cgroup_parent);
   elsewhere nothing is done. */
int serve_scope_enter (struct serve *s, struct sbx_error *err);
/* A free slot for the worker about to be forked, given to it with kept_slot_give once
   forked (PID 0: the fork failed, the slot is free again). */
int kept_slot_take (struct serve *s);
void kept_slot_give (struct serve *s, int slot, pid_t pid);
/* In the worker: the slot's cgroup is its sandboxes' (kept_cgroup). */
void kept_slot_enter (struct serve *s, int slot);
/* The slot of a worker that ended, or became a session, is free; retired if a signal
   killed the worker (its container's record, an orphan, names the slot's cgroup). */
void kept_slot_free_of (struct serve *s, pid_t pid, bool killed);
/* Stopping: every slot's cgroup emptied and removed. */
void kept_slots_remove (struct serve *s);
/* Starting: the kept cgroups of servers that are gone removed. */
void kept_slots_sweep (void);

/* session_route.c */
#define SERVE_NOT_A_SESSION (-3)
/* In a worker with its request taken: a call of a session goes to the session's worker
   (or this worker becomes it). The status for the client, -1 if the client has it,
   SERVE_NOT_A_SESSION if the request names none. */
int serve_session (struct serve *s, int client);
/* The server: its sessions' directory made, those of servers gone removed. */
int serve_sessions_init (struct serve *s, struct sbx_error *err);
void serve_sessions_remove_dir (struct serve *s);

#endif
