/* Container lifecycle operations (runtime.md "Operations"), called by the thin
 * subcommand files. */
#ifndef SBX_CONTAINER_H
#define SBX_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/base/context.h"
#include "runtime/base/error.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/container/foreground.h"
#include "runtime/container/join_fds.h"
#include "runtime/linux/landlock.h"

struct create_opts
{
  const char *id;
  const char *bundle;      /* NULL: the current directory */
  const char *config_path; /* NULL: BUNDLE/config.json */
  const char *pid_file;
  const char *console_socket;
  int preserve_fds;
  bool no_pivot;
  bool no_new_keyring;
  /* `sbx-oci python`: the config as text instead of BUNDLE/config.json, and the
   * container's stdin/stdout/stderr instead of ours (has_stdio; fds >= 3, which
   * container_run closes once the init holds them, also on failure). */
  const char *config_json;
  size_t config_len;
  bool has_stdio;
  int stdio[3];
  /* a cgroup path kept from one container to the next (`serve`'s slots,
     cgroup_kept.c) instead of linux.cgroupsPath: recycled if found, emptied but left
     at the end. Only where the backend can recycle (else ignored: the usual path). */
  const char *kept_cgroup;
};

/* What a foreground run reports beyond its exit status (`sbx-oci python`). */
struct run_watch
{
  struct fg_watch fg;  /* in: output relay and wall-clock deadline; out: rusage, signal */
  bool started;        /* out: the program was exec'd; a later error is not a setup error */
  bool timed_out;      /* out: the deadline passed and everything in the container was killed */
  bool has_stats;      /* out: cgroup numbers, taken after the exit, before the cgroup goes */
  struct cgroup_stats stats;
  /* in: directories in the container (mount points) to hold once the program runs;
     out: an O_PATH fd of each (-1 if it could not be opened), which keeps its mount
     for fstatfs after the container is gone. The caller closes them. */
  const char *hold[2];
  int held[2];
  /* in: called with the cgroup's memory usage (bytes) every 200 ms while the
     program runs (NULL: not; nothing without a cgroup that counts memory) */
  void (*on_memory_usage) (void *data, uint64_t bytes);
  void *memory_data;
  /* in: called once the program runs (the container is started), with its id */
  int (*on_started) (void *data, const char *id, struct sbx_error *err);
  void *started_data;
  /* out, once the program runs: reads the cgroup's numbers now into stats (has_stats),
     for a caller that reports before the container is torn down (NULL: no cgroup) */
  void (*read_stats) (struct run_watch *w);
  void *container;
  /* out, once the program runs, for a container whose init holds: its namespaces and
     root (join_fds.h), the container's until it ends, for on_started to pass on */
  const struct join_fds *join;
};

int container_create (struct sbx_ctx *ctx, const struct create_opts *o, struct sbx_error *err);
/* Create and start in one process. In the foreground (detach false) it waits,
 * forwards signals, deletes the container (unless keep) and sets *exit_status to
 * the program's status (128+N when killed by signal N). */
int container_run (struct sbx_ctx *ctx, const struct create_opts *o, bool detach, bool keep,
                   struct run_watch *watch, int *exit_status, struct sbx_error *err);
int container_start (struct sbx_ctx *ctx, const char *id, struct sbx_error *err);
int container_kill (struct sbx_ctx *ctx, const char *id, int sig, bool all, struct sbx_error *err);
int container_delete (struct sbx_ctx *ctx, const char *id, bool force, struct sbx_error *err);
/* exec (exec.c): a new process in a running (or created) container. */
struct exec_opts
{
  const char *id;
  const char *process_path; /* --process: a process.json; otherwise the fields below */
  char **args;
  size_t n_args;
  const char *cwd;
  const char **env; /* KEY=VALUE, replacing the config's KEY */
  size_t n_env;
  bool has_user;
  uint32_t uid, gid;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  const char **caps; /* added to the bounding, effective and permitted sets */
  size_t n_caps;
  bool no_new_privs;
  bool tty;
  const char *console_socket;
  bool detach;
  const char *pid_file;
  int preserve_fds;
  const char *cgroup; /* --cgroup: a sub-cgroup to join (cgroup_descend) */
  const char *process_label, *apparmor;
  bool ignore_paused;
  /* No program: the calling process's own copy joins and becomes the process, and
     container_exec returns in it with *in_child set (the warm sandboxes of `serve`:
     a forked interpreter continues as the container's process). The parent side
     waits as in the foreground. Not with tty or detach. */
  bool in_process;
  bool *in_child; /* out, with in_process */
  /* with in_process, not NULL: the Landlock rules are not applied in the join but
     copied here, for the process to apply (landlock_apply) once it is ready: a warm
     standby whose /work may still have another mount put over it, and Landlock's
     rules hold to the directories that exist when they are made */
  struct landlock_plan *deferred_landlock;
  /* with in_process, not NULL: the parent side does not wait but returns once the
     copy has joined, with its pid and a pidfd of it here, for the caller to reap (a
     long-lived caller such as the zygote of `serve`, which forks each run's process
     straight into its sandbox: one copy of the interpreter per run, not two) */
  pid_t *spawned_pid;
  int *spawned_pidfd;
  /* with in_process, not NULL: four fds of the caller's that become the copy's 0 to 3
     (stdin, stdout, stderr, the warm run's channel) before it closes the rest */
  const int *child_fds;
  /* not NULL: the container's namespaces and root as fds (join_fds.h: a holding init
     sent them), joined instead of /proc/PID of the init, which a caller without
     CAP_SYS_PTRACE in the host's user namespace may not open */
  const int *join_fds;
  size_t n_join_fds;
  /* out, in the foreground when not NULL: the program's rusage (with what it
     waited for) and the signal that ended it (0 if it exited) */
  struct rusage *rusage;
  int *term_signal;
};
/* Detached: returns once the program runs. Foreground: waits, forwards signals and
 * sets *exit_status (128+N when killed by signal N). */
int container_exec (struct sbx_ctx *ctx, const struct exec_opts *o, int *exit_status, struct sbx_error *err);
/* cgroup_ops.c */
int container_update (struct sbx_ctx *ctx, const char *id, const struct oci_resources *r, struct sbx_error *err);
int container_pause (struct sbx_ctx *ctx, const char *id, bool pause, struct sbx_error *err);
int container_pids (struct sbx_ctx *ctx, const char *id, pid_t **pids, size_t *n, struct sbx_error *err);
int container_stats (struct sbx_ctx *ctx, const char *id, struct cgroup_stats *s, bool *running,
                     struct sbx_error *err);
/* The OCI state JSON of a container (malloc'd). */
char *container_state (struct sbx_ctx *ctx, const char *id, struct sbx_error *err);

#endif
