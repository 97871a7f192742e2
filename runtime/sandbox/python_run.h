/* One `sbx-oci python` run: python.c (the one-shot run: parse, prepare, run, report)
 * and what it shares (python_run.c) with the same run through `sbx-oci serve`, whose
 * warm half is the layer above's: runtime/serve/warm_run.c (the warm interpreter's
 * fork joins the sandbox, perhaps before the request is known) and cells.c (a
 * session's cells), reached from here only through struct python_warm_ops. */
#ifndef SBX_SANDBOX_PYTHON_RUN_H
#define SBX_SANDBOX_PYTHON_RUN_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "runtime/base/cli.h"
#include "runtime/container/container.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/sandbox/sandbox_exec_guard.h"
#include "runtime/sandbox/sandbox_output.h"
#include "runtime/sandbox/sandbox_result.h"

/* ------------------------------------------------------------ warm runs */

struct python_run;
struct sandbox_session; /* runtime/serve/warm_run.h */

/* The warm half of a run, as hooks. A run through `sbx-oci serve` is this one-shot
 * run with one difference: the container's init holds, and the warm interpreter's
 * fork joins it and runs the program (DEVELOPERS.md, "Warm runs"). That half is
 * runtime/serve/'s (warm_run.c), a layer above this one, which calls down into
 * python_command; were python.c to call it back by name, the two layers would call
 * each other. So the server's worker sets these pointers in struct sandbox_warm
 * before it calls python_command, and python.c calls only through them: serve/ knows
 * sandbox/, never the other way round. (The same goes for the command: whether
 * `python` runs here or through a server, --connect, is decided above both, in
 * runtime/serve/client.c.) */
struct python_warm_ops
{
  /* Before container_run: the watch's fds (5 of them), its callbacks and the run's
     clock; the program's pipes (write ends) go to the fork, not to the container's
     init. */
  void (*arm) (struct python_run *r, struct pollfd *fds, int out_w, int err_w);
  /* After container_run: the pipes' write ends given to the fork (or not needed any
     more) closed. */
  void (*release) (struct python_run *r);
  /* After container_run: the program's status, signal and rusage as its waiter saw
     them. */
  int (*outcome) (struct python_run *r, struct sbx_error *err);
  /* With the run: the warm half's fds closed. */
  void (*free) (struct python_run *r);
};

/* A run through `sbx-oci serve` (runtime/serve/server.c): the warm interpreter joins
 * the run's sandbox instead of a fresh one starting in it. python.c reads only ops
 * and python; the rest is the warm half's. */
struct sandbox_warm
{
  const struct python_warm_ops *ops; /* set by the worker (warm_run_python) */
  int zygote_fd;      /* the warm interpreter's socket (SOCK_SEQPACKET) */
  int client_fd;      /* the client's connection: its hangup ends the run (-1 while standing by) */
  const char *python; /* the warm interpreter, and so the sandbox's */
  /* Standing by (set): the sandbox is made and the warm fork has joined it before any
     client asks; then this waits for the server to hand one over (or for watch_fd, the
     fork's report, to say the fork is gone: an error). It takes the client's stdio,
     cwd and environment, sets client_fd and returns the client's python command line
     (its options and program, without the server's). */
  int (*await_request) (struct sandbox_warm *w, int watch_fd, char ***argv, size_t *argc, struct sbx_error *err);
  void *data;
  /* out: the request asked for a sandbox of its own (options beyond --timeout,
     --max-output and --result, a SCRIPT): the standby was given up without a word,
     for the caller to run the request from the start */
  bool fallback;
  /* out: the client has its status: the run's report was done as soon as the program
     had ended, before the sandbox was torn down */
  bool replied;
  /* called (if set) just before that reply is sent: the server may give the run's
     --max-runs slot, and its standby's replacement, to the next while this one's
     sandbox is torn down */
  void (*on_replied) (struct sandbox_warm *w);
  /* a session's sandbox (set): the joined fork is its state, the run its cells */
  struct sandbox_session *session;
  /* the server's idmap of its own user's directories (owner and group seen as the
     sandbox user), made once: a standby taking such a --workdir needs no new one;
     -1: none */
  int idmap_userns;
  uid_t idmap_owner;
  gid_t idmap_group;
  /* the worker's slot's cgroup, kept from one run's sandbox to the next
     (create_opts.kept_cgroup); NULL: a cgroup of the sandbox's own */
  const char *kept_cgroup;
};

/* ------------------------------------------------------------------ a run */

struct python_cli
{
  struct sandbox_policy p;
  uint64_t max_output;
  const char *result;
  const char *id;
  bool no_subprocess;
  bool show_value; /* --show-value: the last expression's value shown and reported */
  /* --die-with-parent: the run ends when the process that started the command exits
     (a warm run ends when its client hangs up, always); the parent as it was when
     the option was read, so one that exits before the run starts is seen to */
  bool die_with_parent;
  pid_t parent;
};

struct python_run
{
  struct sandbox_warm *warm;  /* through `serve` (python --connect), or NULL */
  int warm_status_fd;         /* the warm fork's report: "OK STATUS" or "ERR MESSAGE" */
  int warm_status;            /* the program's status as reported; -1: none yet */
  int warm_signal;            /* the signal that ended it, 0 if it exited */
  struct rusage warm_rusage;  /* its CPU time and largest RSS, as its waiter saw them */
  char *warm_error;           /* the join failed: why */
  bool client_gone;           /* the --connect client hung up: the run was ended */
  struct pollfd *warm_fds;    /* the watch's: [2] the status pipe, [3] the client, once known */
  int warm_out_w, warm_err_w; /* the program's stdout and stderr pipes, write ends, for the fork */
  int warm_chan;              /* our end of the joined fork's run channel */
  int warm_pidfd;             /* the program's process (its PID word), for an interrupt; -1 */
  char *standby_workdir;      /* a standby that took the client's --workdir: its own, removed with the run */
  bool warm_exit_said;        /* the fork said EXIT: the status is its word's */
  struct python_cli *c;
  struct sbx_ctx *ctx;
  struct sandbox_limits limits;
  struct sandbox_interp interp;
  struct workdir w;
  struct host_writable *rw; /* the --rw paths, in the order of p->mounts (unused for --ro) */
  size_t n_rw;
  char *workdir_source;
  struct exec_guard guard; /* --no-subprocess */
  int result_dirfd;        /* --result FILE's directory, opened before the run */
  char *result_name;
  char *bundle, *rootfs, *config, *id;
  size_t config_len;
  char **args;
  size_t n_args;
  char *script_source, *script_dest;
  char *meminfo;  /* bound over /proc/meminfo: the run's own, unlinked at the end */
  int meminfo_fd; /* open to rewrite it with the use (sandbox_meminfo_update) */
  int stdin_fd;
  struct output_stream streams[2];
  int parent_pidfd;   /* --die-with-parent: the starting process, polled as fds[2]; -1 */
  bool parent_exited; /* it exited: the run was ended */
  struct workdir_snapshot before, after;
  struct run_watch watch;
  struct sandbox_result res;
  struct sandbox_report report; /* what a warm run's program reported (value, exception, figures) */
  int64_t t0; /* CLOCK_MONOTONIC: when the run began (a standby's: when its request came) */
  /* a standby's cgroup CPU time when its request came (the join's, not the program's) */
  uint64_t cpu_base_ns, cpu_base_user_ns, cpu_base_system_ns;
  int status;
  /* python_finish ran (a warm run's as soon as the program had ended, before the
     teardown): its return and error */
  bool finished;
  int finish_ret;
  struct sbx_error finish_err;
};

/* python_run.c: what the command, warm runs and cells share */
#define DEFAULT_MAX_OUTPUT (1u << 20)
extern const struct cli_opt python_cli_opts[]; /* python's options (and a request's) */
int python_opt (void *data, int key, const char *arg, struct sbx_error *err);
/* argv[0] is the command's name: the index of the program part (-c, -m, -, SCRIPT, --) */
int python_program_start (int argc, char **argv);
/* --die-with-parent: a pidfd of PARENT while it is still our parent (python_run.c). */
int python_parent_pidfd (pid_t parent, struct sbx_error *err);
const char *python_option_name (int key);
int python_check_program_part (int argc, char **argv, struct sbx_error *err);
int python_program_args (struct python_run *r, const char *python, int argc, char **argv, struct sbx_error *err);
int python_open_streams (struct python_run *r, bool program_reads_stdin, struct sbx_error *err);
int python_result_open_dir (struct python_run *r, struct sbx_error *err);
/* argv from the program part on: whether the program reads our stdin */
bool python_reads_stdin (int argc, char **argv);
/* The program has ended and its output is drained: the result (python_run.c says how). */
int python_finish (struct python_run *r, struct sbx_error *err);
void python_report (struct python_run *r);
int python_write_result (struct python_run *r, struct sbx_error *err);
/* The program (r->args) and the environment a one-shot run would give it from ours:
   a sealed memfd for a warm fork to read. */
int python_program_fd (struct python_run *r, struct sbx_error *err);

/* python.c: `sbx-oci python ARGV` (argv[0] "python"), one-shot (WARM NULL), or as
   the server's worker runs it for a client with WARM's hooks (standing by, ARGV is
   the server's options and a placeholder program). The program's status, or -1. */
int python_command (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sandbox_warm *warm,
                    struct sbx_error *err);

#endif
