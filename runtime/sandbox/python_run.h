/* One `sbx-oci python` run: python.c (the command: parse, prepare, run, report),
 * python_warm.c (the same run through `sbx-oci serve`: the warm interpreter's fork
 * joins the sandbox, perhaps before the request is known), python_session.c (a
 * session's cells), and what they share (python_run.c). */
#ifndef SBX_SANDBOX_PYTHON_RUN_H
#define SBX_SANDBOX_PYTHON_RUN_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "runtime/base/cli.h"
#include "runtime/container.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/sandbox/sandbox_exec_guard.h"
#include "runtime/sandbox/sandbox_output.h"
#include "runtime/sandbox/sandbox_result.h"

struct python_cli
{
  struct sandbox_policy p;
  uint64_t max_output;
  const char *result;
  const char *id;
  bool no_subprocess;
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
  struct workdir_snapshot before, after;
  struct run_watch watch;
  struct sandbox_result res;
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

/* The options of a session's call (python_session.c). */
struct session_opts
{
  const char *name; /* --session */
  bool end;         /* --end-session */
  int program;      /* where the program begins in argv */
  int cell_key[8];  /* the cell's own options (--timeout, --max-output, --result) */
  const char *cell_value[8];
  size_t n_cell;
  char **sandbox; /* the others, --NAME=VALUE: they shape the sandbox */
  size_t n_sandbox;
};
/* argv without "python" */
int session_options (int argc, char **argv, struct session_opts *o, struct sbx_error *err);
void session_options_free (struct session_opts *o);
/* In a session's run (python_warm.c's on_started, the state joined on chan): its cells
   until it ends. */
int python_session_serve (struct python_run *r, int chan, struct sbx_error *err);

/* python_warm.c */
/* Before container_run: the watch's fds (5 of them) and callbacks for a warm run; the
   program's pipes (write ends) go to the fork, not to the container's init. */
void python_warm_arm (struct python_run *r, struct create_opts *o, struct pollfd *fds, int out_w, int err_w);
/* After container_run: the program's status, signal and rusage as its waiter saw them. */
int python_warm_outcome (struct python_run *r, struct sbx_error *err);
/* The pipes' write ends given to the fork (or not needed any more) closed. */
void python_warm_release (struct python_run *r);
void python_warm_free (struct python_run *r);

#endif
