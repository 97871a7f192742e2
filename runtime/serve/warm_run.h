/* A `sbx-oci python` run through the server: warm_run.c (the warm half of
 * runtime/sandbox/python.c's run, installed as its hooks) and cells.c (a session's
 * cells, in the sandbox a session's run made). */
#ifndef SBX_SERVE_WARM_RUN_H
#define SBX_SERVE_WARM_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/context.h"
#include "runtime/base/error.h"
#include "runtime/sandbox/python_run.h"

/* A session (session_route.c routes its calls, cells.c runs them). */
struct sandbox_session
{
  const char *name;
  int listen_fd;         /* the later calls come here (its clients, the server's workers) */
  const char *path;      /* that socket's: unlinked as soon as the session ends */
  unsigned idle_s;       /* ended after this long without a call (0: never) */
  char **sandbox_opts;   /* the first call's options that shaped the sandbox (--NAME=VALUE) */
  size_t n_sandbox_opts;
  char **first_argv;     /* the first call's command line: its first cell */
  size_t first_argc;
  int null_fd, log_fd;   /* the worker's stdio between cells */
  /* cells.c's */
  double timeout;        /* a cell's defaults: the server's */
  uint64_t max_output;
  bool ending;
};

/* warm_run.c: `sbx-oci python ARGV` as the server's worker runs it for a client
   (python_command with WARM's hooks set to the warm half's). Standing by, ARGV is the
   server's options and a placeholder program. */
int warm_run_python (struct sbx_ctx *ctx, int argc, char **argv, struct sandbox_warm *warm, struct sbx_error *err);

/* cells.c */
/* The options of a session's call. */
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
  /* a file call instead of a cell (session_files.c): PUT, GET, LS or RM, the option
     that asked for it, and the name */
  const char *file_op, *file_option, *file_name;
};
/* argv without "python" */
int session_options (int argc, char **argv, struct session_opts *o, struct sbx_error *err);
void session_options_free (struct session_opts *o);
/* A standby's run takes the client's --workdir (r->c->p.workdir): mounted over the
   standby's /work (standby_workdir.c). */
int standby_adopt_workdir (struct python_run *r, struct sbx_error *err);
/* A request's --rw that a standby can take: a directory bound at /tmp/NAME, where a
   mount point can be made in the sandbox's own /tmp (standby_workdir.c). */
bool standby_bind_fits (const struct sandbox_mount *m);
/* The request's --rw binds (r->c->p.mounts from FIRST on, each fitting) mounted in the
   standby's sandbox, held in r->rw as a one-shot run's are. */
int standby_adopt_binds (struct python_run *r, size_t first, struct sbx_error *err);
/* A session's file call (O's file_op) with the session's state on CHAN (between
   cells): the client's IN (PUT's content) and OUT (GET's and LS's). */
int session_file_call (int chan, const struct session_opts *o, int in, int out, struct sbx_error *err);
/* In a session's run (warm_run.c's on_started, the state joined on chan): its cells
   until it ends. */
int python_session_serve (struct python_run *r, int chan, struct sbx_error *err);

#endif
