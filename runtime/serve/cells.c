/* Sessions: `sbx-oci python --connect SOCKET --session NAME ...` (session_route.c
 * routes the calls of one NAME to one worker, this one).
 *
 * The session's sandbox is made once, by its first call, and the warm interpreter's
 * fork that joins it (runtime/warm/zygote.py, run_session) is the session's state.
 * Each call is a cell: that state forks, the fork runs the cell's program in the
 * session's __main__, and if it ends (normally, by an exception or by SystemExit) it
 * is the session's state from then on; if it dies (a crash, os._exit, the OOM killer,
 * the cell's --timeout, its client hanging up) the state it was forked from stays,
 * as it was before the cell. A notebook kernel loses everything instead.
 *
 * Each cell is a run of its own to its client: its stdio, output caps, --timeout,
 * exit status and --result, in which `session` says whether the state was kept. The
 * sandbox (its limits, mounts, network) is the first call's: a later call may repeat
 * those options, not change them. The session ends on --end-session, after the
 * server's --session-idle without a call, when the server stops, or when its state
 * is gone (a cell killed it). */
#include "build-config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/foreground.h"
#include "runtime/linux/landlock.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/serve/warm_run.h"
#include "runtime/serve/wire.h"

extern char **environ;

/* -------------------------------------------------------------- options */

/* The operation a file option asks the session's state for (zygote.py's), or NULL. */
static const char *
file_op (const char *option)
{
  static const char *const ops[][2] = {
    { "put-file", "PUT" }, { "get-file", "GET" }, { "list-files", "LS" }, { "remove-file", "RM" }
  };
  for (size_t i = 0; i < ARRAY_SIZE (ops); i++)
    if (strcmp (option, ops[i][0]) == 0)
      return ops[i][1];
  return NULL;
}

/* The options of a call (argv: without "python"), split into the cell's own and
   those that shape the sandbox, the latter as --NAME=VALUE in their order. */
int
session_options (int argc, char **argv, struct session_opts *o, struct sbx_error *err)
{
  char **full = xmalloc0 ((size_t) (argc + 2) * sizeof *full);
  int i;
  memset (o, 0, sizeof *o);
  full[0] = "python";
  memcpy (full + 1, argv, (size_t) argc * sizeof *argv);
  o->program = python_program_start (argc + 1, full) - 1;
  free (full);
  for (i = 0; i < o->program; i++)
    {
      const char *a = argv[i], *eq, *value = NULL;
      const struct cli_opt *opt = NULL;
      size_t n;
      if (strncmp (a, "--", 2) != 0)
        return cli_usage_error (err, "--session: '%s' is not an option of a call", a);
      eq = strchr (a, '=');
      n = eq ? (size_t) (eq - a - 2) : strlen (a + 2);
      for (const struct cli_opt *c = python_cli_opts; c->name; c++)
        if (strlen (c->name) == n && strncmp (c->name, a + 2, n) == 0)
          opt = c;
      if (!opt)
        return cli_usage_error (err, "unknown option %.*s (see sbx-oci python --help)", (int) n + 2, a);
      if (opt->has_arg == required_argument)
        {
          if (eq)
            value = eq + 1;
          else if (i + 1 < o->program)
            value = argv[++i];
          else
            return cli_usage_error (err, "--%s needs a value", opt->name);
        }
      if (strcmp (opt->name, "session") == 0)
        o->name = value;
      else if (file_op (opt->name))
        {
          if (o->file_op)
            return cli_usage_error (err, "--%s and --%s: one file call at a time", o->file_option, opt->name);
          o->file_op = file_op (opt->name);
          o->file_option = opt->name;
          o->file_name = value;
        }
      else if (strcmp (opt->name, "show-value") == 0)
        ; /* a session's cells show their values anyway */
      else if (strcmp (opt->name, "end-session") == 0)
        o->end = true;
      else if (strcmp (opt->name, "timeout") == 0 || strcmp (opt->name, "max-output") == 0
               || strcmp (opt->name, "result") == 0)
        {
          if (o->n_cell == ARRAY_SIZE (o->cell_key))
            return cli_usage_error (err, "--%s: given too often", opt->name);
          o->cell_key[o->n_cell] = opt->key;
          o->cell_value[o->n_cell++] = value;
        }
      else
        {
          o->sandbox = xrealloc (o->sandbox, (o->n_sandbox + 1) * sizeof *o->sandbox);
          o->sandbox[o->n_sandbox++] = value ? xasprintf ("--%s=%s", opt->name, value) : xasprintf ("--%s", opt->name);
        }
    }
  return 0;
}

void
session_options_free (struct session_opts *o)
{
  for (size_t i = 0; i < o->n_sandbox; i++)
    free (o->sandbox[i]);
  free (o->sandbox);
  o->sandbox = NULL;
  o->n_sandbox = 0;
}

/* ---------------------------------------------------------------- a cell */

struct cell
{
  int fds[4]; /* the client's stdin, stdout, stderr and cwd */
  char **argv;
  size_t argc;
  char **env;
  int client;
};

struct cell_run
{
  struct python_run *r;
  struct sandbox_session *sess;
  struct cell *cell;
  int chan;               /* the session's state's run channel */
  int sfd;                /* the server's stop (a signalfd) */
  char **saved_env;       /* the worker's environment, the client's while the cell runs */
  struct session_opts o;  /* the call's options */
  int pipes[2][2];        /* the cell's stdout and stderr (our ends go to r->streams) */
  int program;            /* its memfd, until the state has it */
  struct cgroup_stats before, after; /* the sandbox's numbers across the cell */
  bool have_before;
  int pidfd;     /* the cell's process (from the session's state, FORKED) */
  bool ended;    /* DONE or LOST came */
  bool kept;     /* DONE: the cell's state is the session's now */
  bool lost;     /* the channel closed: the session's state is gone */
  bool client_gone;
  int status, signal;
};

/* The cell's report (INFO: its value, exception, figures), for its result. */
static void
take_report (struct python_run *r, int fd)
{
  struct sbx_error e = { 0 };
  sandbox_report_free (&r->report);
  if (sandbox_report_read (fd, &r->report, &e) < 0)
    {
      sbx_log_write (&r->ctx->log, SBX_LOG_WARNING, "%s: left out of the result", e.msg ? e.msg : "the report");
      sbx_error_clear (&e);
    }
  r->res.report = &r->report;
}

/* One message of the session's state on the channel. */
static void
on_channel (struct cell_run *cr, int chan)
{
  char buf[64], cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf - 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *cm;
  int fd = -1, a = 0, b = 0;
  ssize_t n = recvmsg (chan, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      cr->lost = cr->ended = true;
      return;
    }
  buf[n] = '\0';
  for (cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN (sizeof (int)))
      memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  if (strcmp (buf, "FORKED") == 0 && fd >= 0 && cr->pidfd < 0)
    {
      cr->pidfd = fd;
      return;
    }
  if (strcmp (buf, "INFO") == 0 && fd >= 0)
    {
      take_report (cr->r, fd);
      close (fd);
      return;
    }
  if (fd >= 0)
    close (fd);
  if (sscanf (buf, "DONE %d", &a) == 1)
    {
      cr->ended = cr->kept = true;
      cr->status = a & 0xff;
    }
  else if (sscanf (buf, "LOST %d %d", &a, &b) == 2)
    {
      cr->ended = true;
      cr->status = a;
      cr->signal = b;
    }
}

static void
kill_cell (struct cell_run *cr)
{
  if (cr->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, cr->pidfd, SIGKILL, NULL, 0);
}

/* The client's interrupt (SBXI on its connection): SIGINT to the cell's process group,
   as a terminal's ^C reaches a foreground job, so that Python raises KeyboardInterrupt
   in the cell and what the cell started gets it too. The cell then ends as by any
   exception, and its state is the session's. */
static void
interrupt_cell (struct cell_run *cr)
{
  pid_t pid = pidfd_pid (cr->pidfd);
  if (pid > 0)
    kill (-pid, SIGINT);
}

/* The client's view, for its messages, --result and output: its stdio, cwd and
   environment become the worker's while the cell runs. */
static int
enter_client (struct cell_run *cr, struct sbx_error *err)
{
  struct cell *cell = cr->cell;
  if (dup2 (cell->fds[0], 0) < 0 || dup2 (cell->fds[1], 1) < 0 || dup2 (cell->fds[2], 2) < 0
      || fchdir (cell->fds[3]) < 0)
    return sbx_error_set (err, errno, "the client's stdio or cwd");
  environ = cell->env;
  return 0;
}

/* The call's options (cr->o): the cell's own (--timeout, --max-output, --result; by
   default the server's) taken, and a sandbox the same as the first call's. */
static int
take_cell_options (struct cell_run *cr, struct sbx_error *err)
{
  struct python_cli *c = cr->r->c;
  struct sandbox_session *sess = cr->sess;
  struct session_opts *o = &cr->o;
  bool same;
  c->result = NULL;
  c->max_output = sess->max_output;
  c->p.timeout = sess->timeout;
  if (session_options ((int) cr->cell->argc, cr->cell->argv, o, err) < 0)
    return -1;
  /* the sandbox is the first call's */
  same = o->n_sandbox == 0 || o->n_sandbox == sess->n_sandbox_opts;
  for (size_t i = 0; same && o->n_sandbox && i < o->n_sandbox; i++)
    same = strcmp (o->sandbox[i], sess->sandbox_opts[i]) == 0;
  if (!same)
    {
      sbx_error_set (err, 0, "--session %s: its sandbox is its first call's (%s%s): a later call may repeat those "
                             "options, not change them",
                     sess->name, sess->n_sandbox_opts ? "" : "the server's options",
                     sess->n_sandbox_opts ? sess->sandbox_opts[0] : "");
      err->exit_hint = SBX_EXIT_SETUP;
      return -1;
    }
  for (size_t i = 0; i < o->n_cell; i++)
    if (python_opt (c, o->cell_key[i], o->cell_value[i], err) < 0)
      return -1;
  return 0;
}

/* The cell's program and streams, as a one-shot run's would be: its arguments, its
   stdin, its output pipes (our ends in r->streams), --result's directory, and the
   program as the state reads it (cr->program). */
static int
prepare_cell (struct cell_run *cr, struct sbx_error *err)
{
  struct python_run *r = cr->r;
  struct python_cli *c = r->c;
  int argc = (int) cr->cell->argc - cr->o.program;
  char **argv = cr->cell->argv + cr->o.program;
  if (argc <= 0 || !(strcmp (argv[0], "-c") == 0 || strcmp (argv[0], "-") == 0))
    return cli_usage_error (err, "--session: a cell is -c CODE or - (its text on stdin)");
  if (python_check_program_part (argc, argv, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_args; i++)
    free (r->args[i]);
  r->n_args = 0;
  if (python_program_args (r, r->interp.executable, argc, argv, err) < 0)
    return -1;
  for (int i = 0; i < 2; i++)
    output_stream_free (&r->streams[i]);
  if (r->stdin_fd >= 0)
    close (r->stdin_fd);
  r->stdin_fd = -1;
  if (r->result_dirfd >= 0)
    close (r->result_dirfd);
  r->result_dirfd = -1;
  if (python_open_streams (r, python_reads_stdin (argc, argv), err) < 0
      || (c->result && strcmp (c->result, "-") != 0 && python_result_open_dir (r, err) < 0))
    return -1;
  for (int i = 0; i < 2; i++)
    {
      if (pipe2 (cr->pipes[i], O_CLOEXEC) < 0)
        return sbx_error_set (err, errno, "pipe");
      (void) fcntl (cr->pipes[i][0], F_SETPIPE_SZ, 1 << 20);
      r->streams[i].fd = cr->pipes[i][0];
      cr->pipes[i][0] = -1;
    }
  cr->program = python_program_fd (r, err);
  return cr->program < 0 ? -1 : 0;
}

/* The cell to the session's state (CELL: the program, stdin, stdout, stderr), with
   the workdir and the sandbox's numbers taken first and the cell's clock started.
   -1: the state is gone. */
static int
send_cell (struct cell_run *cr, struct sbx_error *err)
{
  struct python_run *r = cr->r;
  workdir_snapshot_free (&r->before);
  workdir_snapshot_free (&r->after);
  workdir_snapshot_take (r->w.h.fd, &r->before);
  if (r->watch.read_stats)
    {
      r->watch.read_stats (&r->watch);
      cr->before = r->watch.stats;
      cr->have_before = r->watch.has_stats;
    }
  r->t0 = monotonic_ns ();
  {
    int fds[4] = { cr->program, r->stdin_fd, cr->pipes[0][1], cr->pipes[1][1] };
    /* a cell shows the value of its last expression, as a notebook does (zygote.py's
       controls) */
    if (fd_send_with_fds (cr->chan, "CELL value=1", 12, fds, 4) < 0)
      return sbx_error_set (err, errno, "--session %s: its state is gone", cr->sess->name);
  }
  close (cr->program);
  cr->program = -1;
  for (int i = 0; i < 2; i++)
    {
      close (cr->pipes[i][1]);
      cr->pipes[i][1] = -1;
    }
  close (r->stdin_fd);
  r->stdin_fd = -1;
  return 0;
}

/* Until the state says how the cell ended (or is gone): its output relayed, and the
   cell killed at its deadline, when its client hangs up or when the server stops. */
static void
wait_for_cell (struct cell_run *cr)
{
  struct python_run *r = cr->r;
  struct sandbox_session *sess = cr->sess;
  int64_t deadline = r->c->p.timeout > 0 ? r->t0 + (int64_t) (r->c->p.timeout * 1e9) : 0, give_up = 0;
  while (!cr->ended)
    {
      struct pollfd pfd[5] = { { .fd = r->streams[0].fd, .events = POLLIN },
                               { .fd = r->streams[1].fd, .events = POLLIN },
                               { .fd = cr->chan, .events = POLLIN },
                               { .fd = cr->client_gone ? -1 : cr->cell->client, .events = POLLIN },
                               { .fd = sess->ending ? -1 : cr->sfd, .events = POLLIN } };
      int64_t now = monotonic_ns (), until = give_up ? give_up : deadline;
      int timeout = until ? (until > now ? (int) ((until - now) / 1000000) + 1 : 0) : -1;
      if (poll (pfd, 5, timeout) < 0 && errno != EINTR)
        break;
      if (pfd[4].revents & POLLIN)
        {
          /* the server stops: the cell ends with the session */
          sess->ending = true;
          kill_cell (cr);
          give_up = monotonic_ns () + 5000000000LL;
        }
      output_on_ready (r->streams, pfd, 2);
      if (pfd[2].revents)
        on_channel (cr, cr->chan);
      if (pfd[3].revents & (POLLIN | POLLHUP | POLLERR))
        {
          char b[64];
          ssize_t got = recv (cr->cell->client, b, sizeof b, MSG_DONTWAIT);
          if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            {
              cr->client_gone = true;
              kill_cell (cr);
              give_up = monotonic_ns () + 5000000000LL;
            }
          else if (got > 0 && connect_is_interrupt (b, (size_t) got))
            interrupt_cell (cr);
        }
      now = monotonic_ns ();
      if (deadline && now >= deadline && !r->watch.timed_out)
        {
          r->watch.timed_out = true;
          kill_cell (cr);
          give_up = now + 5000000000LL;
        }
      if (give_up && now >= give_up && !cr->ended)
        {
          cr->lost = cr->ended = true; /* the state does not answer: the session is over */
          break;
        }
    }
}

/* The cell has ended: the last of its output, the sandbox's numbers after it and what
   it changed in the workdir. */
static void
drain_cell (struct cell_run *cr)
{
  struct python_run *r = cr->r;
  output_drain_now (r->streams, 2);
  if (r->watch.read_stats)
    {
      r->watch.read_stats (&r->watch);
      cr->after = r->watch.stats;
    }
  workdir_snapshot_take (r->w.h.fd, &r->after);
}

/* How the cell ended, as a one-shot run's result says it (its numbers are the
   sandbox's across the cell): its status, or -1 if --result could not be written. */
static int
report_cell (struct cell_run *cr, struct sbx_error *err)
{
  struct python_run *r = cr->r;
  struct python_cli *c = r->c;
  struct sandbox_result *res = &r->res;
  const struct cgroup_stats *before = &cr->before, *after = &cr->after;
  res->started = true;
  res->error = NULL;
  res->exit_code = r->watch.timed_out ? 128 + SIGKILL : cr->status;
  res->signal = r->watch.timed_out ? SIGKILL : cr->signal;
  res->timed_out = r->watch.timed_out;
  res->oom_killed = cr->have_before && after->has_oom && after->oom_kill > before->oom_kill;
  res->pids_limit_hit = cr->have_before && after->has_pids && after->pids_max_events > before->pids_max_events;
  res->fsize_reached = res->signal == SIGXFSZ;
  for (size_t i = 0; i < r->after.n && !res->fsize_reached; i++)
    res->fsize_reached = S_ISREG (r->after.e[i].mode) && r->after.e[i].size >= c->p.fsize;
  res->nofile_reported = r->streams[1].found;
  res->tmp_filled = false;
  res->cpu_time_exceeded = res->signal == SIGXCPU;
  res->wall_ms = (double) (monotonic_ns () - r->t0) / 1e6;
  if (cr->have_before && after->has_cpu)
    {
      res->cpu_user_ms = (double) (after->cpu_usage_ns - before->cpu_usage_ns) / 1e6;
      res->cpu_sys_ms = 0;
      res->cpu_scope = "cgroup";
    }
  else
    {
      res->cpu_user_ms = res->cpu_sys_ms = 0;
      res->cpu_scope = "waited";
    }
  res->peak_memory_bytes = after->has_memory ? after->memory_peak : 0;
  res->peak_memory_scope = "cgroup";
  res->include_output = c->result && strcmp (c->result, "-") == 0;
  res->session = cr->sess->name;
  res->session_kept = cr->kept;
  r->status = res->exit_code;
  python_report (r);
  if (python_write_result (r, err) < 0)
    return -1;
  return res->exit_code;
}

/* The client hears STATUS (-2: it hung up, nothing), or, with ERR set, why its cell
   did not run (in the log too). */
static void
answer_client (struct cell_run *cr, int status, struct sbx_error *err)
{
  if (sbx_error_is_set (err))
    {
      _cleanup_free_ char *msg = sbx_error_string (err);
      sbx_log_write (&cr->r->ctx->log, SBX_LOG_ERROR, "%s", msg ? msg : "unknown error");
      status = err->exit_hint ? err->exit_hint : 1;
      sbx_error_clear (err);
    }
  if (status != -2)
    connect_reply_status (cr->cell->client, status);
}

/* Nothing of the cell kept: its fds closed, the run's result as the next cell
   begins it, and the worker's own stdio and environment back. */
static void
end_cell (struct cell_run *cr)
{
  struct python_run *r = cr->r;
  struct python_cli *c = r->c;
  struct sandbox_session *sess = cr->sess;
  if (cr->pidfd >= 0)
    close (cr->pidfd);
  if (cr->program >= 0)
    close (cr->program);
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++)
      if (cr->pipes[i][k] >= 0)
        close (cr->pipes[i][k]);
  for (int i = 0; i < 2; i++)
    output_stream_free (&r->streams[i]);
  if (r->stdin_fd >= 0)
    close (r->stdin_fd);
  r->stdin_fd = -1;
  r->watch.timed_out = false;
  sandbox_report_free (&r->report);
  memset (&r->res, 0, sizeof r->res);
  r->res.id = r->id;
  r->res.policy = &c->p;
  r->res.limits = &r->limits;
  r->res.out = &r->streams[0];
  r->res.err = &r->streams[1];
  r->res.before = &r->before;
  r->res.after = &r->after;
  r->res.landlock_abi = landlock_abi ();
  environ = cr->saved_env;
  c->result = NULL; /* the cell's, in its request's memory */
  /* nothing of the client's kept open here: a reader of its stdout waits for EOF */
  dup2 (sess->null_fd, 0);
  dup2 (sess->log_fd, 1);
  dup2 (sess->log_fd, 2);
  session_options_free (&cr->o);
}

/* No call reaches the session from now on: one that comes goes to the server, which
   begins the session again. Done before the reply that ends a session, so that its
   client's next call finds it gone and --max-sessions counts it no more (the server
   counts the sockets). */
static void
stop_listening (struct sandbox_session *sess)
{
  if (sess->listen_fd < 0)
    return;
  unlink (sess->path);
  close (sess->listen_fd);
  sess->listen_fd = -1;
}

/* The cell's program to its client as a one-shot run's would be: status, output,
   result. Returns -1 when the session is over (lost). */
static int
run_cell (struct python_run *r, struct sandbox_session *sess, int chan, int sfd, struct cell *cell)
{
  struct sbx_error err = { 0 };
  struct cell_run cr = { .r = r, .sess = sess, .cell = cell, .chan = chan, .sfd = sfd, .saved_env = environ,
                         .pipes = { { -1, -1 }, { -1, -1 } }, .program = -1, .pidfd = -1, .status = -1 };
  int status = -1;
  bool lost = false;

  if (enter_client (&cr, &err) < 0 || take_cell_options (&cr, &err) < 0)
    goto done;
  if (cr.o.end)
    {
      sess->ending = true;
      stop_listening (sess);
      status = 0;
      goto done;
    }
  if (cr.o.file_op)
    {
      if (cr.o.program < (int) cell->argc)
        cli_usage_error (&err, "--%s: a file call runs no program", cr.o.file_option);
      else
        status = session_file_call (chan, &cr.o, cell->fds[0], cell->fds[1], &err) < 0 ? -1 : 0;
      goto done;
    }
  if (prepare_cell (&cr, &err) < 0)
    goto done;
  if (send_cell (&cr, &err) < 0)
    {
      lost = true;
      stop_listening (sess);
      goto done;
    }
  wait_for_cell (&cr);
  if (cr.lost)
    {
      lost = true;
      stop_listening (sess);
      sbx_error_set (&err, 0, "--session %s: its state is gone (a cell killed it, or it died): the session ended",
                     sess->name);
      goto done;
    }
  drain_cell (&cr);
  status = cr.client_gone ? -2 : report_cell (&cr, &err);

done:
  answer_client (&cr, status, &err);
  end_cell (&cr);
  return lost ? -1 : 0;
}

static void
cell_free (struct cell *cell)
{
  for (int i = 0; i < 4; i++)
    if (cell->fds[i] >= 0)
      close (cell->fds[i]);
  if (cell->client >= 0)
    close (cell->client);
}

/* ------------------------------------------------------------ the session */

/* The next call on the session's socket, as a cell (CELL; its request in REQ): 1.
   0: none came (a wakeup, a peer not of this uid, a request that could not be read);
   -1: the session ends (no call for --session-idle, the server stops, the state is
   gone). */
static int
next_call (struct python_run *r, int chan, int sfd, struct cell *cell, struct connect_request *req,
           struct sbx_error *err)
{
  struct sandbox_session *sess = r->warm->session;
  struct pollfd pfd[3] = { { .fd = sess->listen_fd, .events = POLLIN },
                           { .fd = sfd, .events = POLLIN },
                           { .fd = chan, .events = POLLIN } };
  struct ucred cred;
  socklen_t len = sizeof cred;
  int n = poll (pfd, 3, sess->idle_s ? (int) sess->idle_s * 1000 : -1);
  if (n < 0 && errno == EINTR)
    return 0;
  if (n == 0)
    {
      sbx_log_write (&r->ctx->log, SBX_LOG_WARNING, "session %s: no call for %u s: ended", sess->name, sess->idle_s);
      return -1;
    }
  if (n < 0 || pfd[1].revents || (pfd[2].revents & (POLLHUP | POLLERR)))
    return -1; /* the server stops, or the state is gone */
  if (!(pfd[0].revents & POLLIN))
    return 0;
  cell->client = accept4 (sess->listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (cell->client < 0)
    return 0;
  /* only the server's workers (this uid) reach this socket (a 0700 directory) */
  if (getsockopt (cell->client, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid ()
      || connect_request_read (cell->client, req, err) < 0)
    {
      sbx_error_clear (err);
      close (cell->client);
      return 0;
    }
  memcpy (cell->fds, req->fds, sizeof cell->fds);
  for (int i = 0; i < 4; i++)
    req->fds[i] = -1; /* the cell's now */
  cell->argv = req->argv;
  cell->argc = req->argc;
  cell->env = req->env;
  return 1;
}

int
python_session_serve (struct python_run *r, int chan, struct sbx_error *err)
{
  struct sandbox_session *sess = r->warm->session;
  struct cell first = { .argv = sess->first_argv, .argc = sess->first_argc, .env = environ,
                        .client = r->warm->client_fd };
  sigset_t set;
  int sfd;
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGHUP);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0)
    return sbx_error_set (err, errno, "signalfd");
  r->res.id = r->id;
  r->res.landlock_abi = landlock_abi ();
  /* its cells are forks of its own state: the warm interpreter is not needed again
     (and a recycled one ends once nobody holds its socket) */
  if (r->warm->zygote_fd >= 0)
    close (r->warm->zygote_fd);
  r->warm->zygote_fd = -1;
  /* the first call: the worker's own stdio and cwd are its client's */
  first.fds[0] = dup (0);
  first.fds[1] = dup (1);
  first.fds[2] = dup (2);
  first.fds[3] = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  r->warm->client_fd = -1; /* the cells' now */
  sess->timeout = r->c->p.timeout; /* the cells' defaults: the server's */
  sess->max_output = r->c->max_output;
  if (run_cell (r, sess, chan, sfd, &first) < 0)
    sess->ending = true;
  cell_free (&first);
  while (!sess->ending)
    {
      struct connect_request req = { 0 };
      struct cell cell = { .fds = { -1, -1, -1, -1 }, .client = -1 };
      int got = next_call (r, chan, sfd, &cell, &req, err);
      if (got < 0)
        break;
      if (got == 0)
        continue;
      if (run_cell (r, sess, chan, sfd, &cell) < 0)
        sess->ending = true;
      cell_free (&cell);
      connect_request_free (&req);
    }
  close (sfd);
  stop_listening (sess);
  /* done: the container goes (its teardown is the run's), with no report of its own */
  r->finished = true;
  r->finish_ret = 0;
  r->warm->replied = true;
  r->watch.fg.stop = true;
  return 0;
}
