/* Sessions: `sbx-oci python --connect SOCKET --session NAME ...` (serve_session.c
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
#include "runtime/foreground.h"
#include "runtime/landlock.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/sandbox/sandbox_connect.h"

extern char **environ;

/* -------------------------------------------------------------- options */

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
  int pidfd;     /* the cell's process (from the session's state, FORKED) */
  bool ended;    /* DONE or LOST came */
  bool kept;     /* DONE: the cell's state is the session's now */
  bool lost;     /* the channel closed: the session's state is gone */
  bool client_gone;
  int status, signal;
};

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

/* The cell's program to its client as a one-shot run's would be: status, output,
   result. Returns -1 when the session is over (lost). */
static int
run_cell (struct python_run *r, struct sandbox_session *sess, int chan, int sfd, struct cell *cell)
{
  struct sbx_error err = { 0 };
  struct session_opts o = { 0 };
  struct cell_run cr = { .r = r, .sess = sess, .pidfd = -1, .status = -1 };
  struct python_cli *c = r->c;
  struct cgroup_stats before = { 0 }, after = { 0 };
  bool have_before = false, reads_stdin, same = true;
  int pipes[2][2] = { { -1, -1 }, { -1, -1 } }, program = -1, status = -1, lost = 0;
  char **saved_env = environ;
  int64_t deadline = 0, give_up = 0;

  /* the client's view, for its messages, --result and output */
  if (dup2 (cell->fds[0], 0) < 0 || dup2 (cell->fds[1], 1) < 0 || dup2 (cell->fds[2], 2) < 0
      || fchdir (cell->fds[3]) < 0)
    {
      sbx_error_set (&err, errno, "the client's stdio or cwd");
      goto done;
    }
  environ = cell->env;
  c->result = NULL;
  c->max_output = sess->max_output;
  c->p.timeout = sess->timeout;
  if (session_options ((int) cell->argc, cell->argv, &o, &err) < 0)
    goto done;
  /* the sandbox is the first call's */
  same = o.n_sandbox == 0 || o.n_sandbox == sess->n_sandbox_opts;
  for (size_t i = 0; same && o.n_sandbox && i < o.n_sandbox; i++)
    same = strcmp (o.sandbox[i], sess->sandbox_opts[i]) == 0;
  if (!same)
    {
      sbx_error_set (&err, 0, "--session %s: its sandbox is its first call's (%s%s): a later call may repeat those "
                              "options, not change them",
                     sess->name, sess->n_sandbox_opts ? "" : "the server's options",
                     sess->n_sandbox_opts ? sess->sandbox_opts[0] : "");
      err.exit_hint = SBX_EXIT_SETUP;
      goto done;
    }
  for (size_t i = 0; i < o.n_cell; i++)
    if (python_opt (c, o.cell_key[i], o.cell_value[i], &err) < 0)
      goto done;
  if (o.end)
    {
      sess->ending = true;
      status = 0;
      goto done;
    }
  if (o.program >= (int) cell->argc
      || !(strcmp (cell->argv[o.program], "-c") == 0 || strcmp (cell->argv[o.program], "-") == 0))
    {
      cli_usage_error (&err, "--session: a cell is -c CODE or - (its text on stdin)");
      goto done;
    }
  if (python_check_program_part ((int) cell->argc - o.program, cell->argv + o.program, &err) < 0)
    goto done;
  for (size_t i = 0; i < r->n_args; i++)
    free (r->args[i]);
  r->n_args = 0;
  if (python_program_args (r, r->interp.executable, (int) cell->argc - o.program, cell->argv + o.program, &err) < 0)
    goto done;
  reads_stdin = python_reads_stdin ((int) cell->argc - o.program, cell->argv + o.program);
  for (int i = 0; i < 2; i++)
    output_stream_free (&r->streams[i]);
  if (r->stdin_fd >= 0)
    close (r->stdin_fd);
  r->stdin_fd = -1;
  if (r->result_dirfd >= 0)
    close (r->result_dirfd);
  r->result_dirfd = -1;
  if (python_open_streams (r, reads_stdin, &err) < 0
      || (c->result && strcmp (c->result, "-") != 0 && python_result_open_dir (r, &err) < 0))
    goto done;
  for (int i = 0; i < 2; i++)
    {
      if (pipe2 (pipes[i], O_CLOEXEC) < 0)
        {
          sbx_error_set (&err, errno, "pipe");
          goto done;
        }
      (void) fcntl (pipes[i][0], F_SETPIPE_SZ, 1 << 20);
      r->streams[i].fd = pipes[i][0];
      pipes[i][0] = -1;
    }
  program = python_program_fd (r, &err);
  if (program < 0)
    goto done;
  workdir_snapshot_free (&r->before);
  workdir_snapshot_free (&r->after);
  workdir_snapshot_take (r->w.h.fd, &r->before);
  if (r->watch.read_stats)
    {
      r->watch.read_stats (&r->watch);
      before = r->watch.stats;
      have_before = r->watch.has_stats;
    }
  r->t0 = monotonic_ns ();
  {
    int fds[4] = { program, r->stdin_fd, pipes[0][1], pipes[1][1] };
    if (fd_send_with_fds (chan, "CELL", 4, fds, 4) < 0)
      {
        lost = 1;
        sbx_error_set (&err, errno, "--session %s: its state is gone", sess->name);
        goto done;
      }
  }
  close (program);
  program = -1;
  for (int i = 0; i < 2; i++)
    {
      close (pipes[i][1]);
      pipes[i][1] = -1;
    }
  close (r->stdin_fd);
  r->stdin_fd = -1;
  deadline = c->p.timeout > 0 ? r->t0 + (int64_t) (c->p.timeout * 1e9) : 0;

  /* until the state says how the cell ended (or is gone) */
  while (!cr.ended)
    {
      struct pollfd pfd[5] = { { .fd = r->streams[0].fd, .events = POLLIN },
                               { .fd = r->streams[1].fd, .events = POLLIN },
                               { .fd = chan, .events = POLLIN },
                               { .fd = cr.client_gone ? -1 : cell->client, .events = POLLIN },
                               { .fd = sess->ending ? -1 : sfd, .events = POLLIN } };
      int64_t now = monotonic_ns (), until = give_up ? give_up : deadline;
      int timeout = until ? (until > now ? (int) ((until - now) / 1000000) + 1 : 0) : -1;
      if (poll (pfd, 5, timeout) < 0 && errno != EINTR)
        break;
      if (pfd[4].revents & POLLIN)
        {
          /* the server stops: the cell ends with the session */
          sess->ending = true;
          kill_cell (&cr);
          give_up = monotonic_ns () + 5000000000LL;
        }
      output_on_ready (r->streams, pfd, 2);
      if (pfd[2].revents)
        on_channel (&cr, chan);
      if (pfd[3].revents & (POLLIN | POLLHUP | POLLERR))
        {
          char b[64];
          ssize_t got = recv (cell->client, b, sizeof b, MSG_DONTWAIT);
          if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            {
              cr.client_gone = true;
              kill_cell (&cr);
              give_up = monotonic_ns () + 5000000000LL;
            }
        }
      now = monotonic_ns ();
      if (deadline && now >= deadline && !r->watch.timed_out)
        {
          r->watch.timed_out = true;
          kill_cell (&cr);
          give_up = now + 5000000000LL;
        }
      if (give_up && now >= give_up && !cr.ended)
        {
          cr.lost = cr.ended = true; /* the state does not answer: the session is over */
          break;
        }
    }
  if (cr.lost)
    {
      lost = 1;
      sbx_error_set (&err, 0, "--session %s: its state is gone (a cell killed it, or it died): the session ended",
                     sess->name);
      goto done;
    }
  output_drain_now (r->streams, 2);
  if (r->watch.read_stats)
    {
      r->watch.read_stats (&r->watch);
      after = r->watch.stats;
    }
  workdir_snapshot_take (r->w.h.fd, &r->after);
  if (cr.client_gone)
    {
      status = -2;
      goto done;
    }
  {
    struct sandbox_result *res = &r->res;
    res->started = true;
    res->error = NULL;
    res->exit_code = r->watch.timed_out ? 128 + SIGKILL : cr.status;
    res->signal = r->watch.timed_out ? SIGKILL : cr.signal;
    res->timed_out = r->watch.timed_out;
    res->oom_killed = have_before && after.has_oom && after.oom_kill > before.oom_kill;
    res->pids_limit_hit = have_before && after.has_pids && after.pids_max_events > before.pids_max_events;
    res->fsize_reached = res->signal == SIGXFSZ;
    for (size_t i = 0; i < r->after.n && !res->fsize_reached; i++)
      res->fsize_reached = S_ISREG (r->after.e[i].mode) && r->after.e[i].size >= c->p.fsize;
    res->nofile_reported = r->streams[1].found;
    res->tmp_filled = false;
    res->cpu_time_exceeded = res->signal == SIGXCPU;
    res->wall_ms = (double) (monotonic_ns () - r->t0) / 1e6;
    if (have_before && after.has_cpu)
      {
        res->cpu_user_ms = (double) (after.cpu_usage_ns - before.cpu_usage_ns) / 1e6;
        res->cpu_sys_ms = 0;
        res->cpu_scope = "cgroup";
      }
    else
      {
        res->cpu_user_ms = res->cpu_sys_ms = 0;
        res->cpu_scope = "waited";
      }
    res->peak_memory_bytes = after.has_memory ? after.memory_peak : 0;
    res->peak_memory_scope = "cgroup";
    res->include_output = c->result && strcmp (c->result, "-") == 0;
    res->session = sess->name;
    res->session_kept = cr.kept;
    r->status = res->exit_code;
    status = res->exit_code;
    python_report (r);
    if (python_write_result (r, &err) < 0)
      status = -1;
  }

done:
  if (sbx_error_is_set (&err))
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      sbx_log_write (&r->ctx->log, SBX_LOG_ERROR, "%s", msg ? msg : "unknown error");
      status = err.exit_hint ? err.exit_hint : 1;
      sbx_error_clear (&err);
    }
  if (status != -2)
    connect_reply_status (cell->client, status);
  if (cr.pidfd >= 0)
    close (cr.pidfd);
  if (program >= 0)
    close (program);
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++)
      if (pipes[i][k] >= 0)
        close (pipes[i][k]);
  for (int i = 0; i < 2; i++)
    output_stream_free (&r->streams[i]);
  if (r->stdin_fd >= 0)
    close (r->stdin_fd);
  r->stdin_fd = -1;
  r->watch.timed_out = false;
  memset (&r->res, 0, sizeof r->res);
  r->res.id = r->id;
  r->res.policy = &c->p;
  r->res.limits = &r->limits;
  r->res.out = &r->streams[0];
  r->res.err = &r->streams[1];
  r->res.before = &r->before;
  r->res.after = &r->after;
  r->res.landlock_abi = landlock_abi ();
  environ = saved_env;
  c->result = NULL; /* the cell's, in its request's memory */
  /* nothing of the client's kept open here: a reader of its stdout waits for EOF */
  dup2 (sess->null_fd, 0);
  dup2 (sess->log_fd, 1);
  dup2 (sess->log_fd, 2);
  session_options_free (&o);
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
      struct pollfd pfd[3] = { { .fd = sess->listen_fd, .events = POLLIN },
                               { .fd = sfd, .events = POLLIN },
                               { .fd = chan, .events = POLLIN } };
      struct connect_request req = { 0 };
      struct cell cell = { .fds = { -1, -1, -1, -1 }, .client = -1 };
      struct ucred cred;
      socklen_t len = sizeof cred;
      int n = poll (pfd, 3, sess->idle_s ? (int) sess->idle_s * 1000 : -1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        {
          sbx_log_write (&r->ctx->log, SBX_LOG_WARNING, "session %s: no call for %u s: ended", sess->name,
                         sess->idle_s);
          break;
        }
      if (n < 0 || pfd[1].revents || (pfd[2].revents & (POLLHUP | POLLERR)))
        break; /* the server stops, or the state is gone */
      if (!(pfd[0].revents & POLLIN))
        continue;
      cell.client = accept4 (sess->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      if (cell.client < 0)
        continue;
      /* only the server's workers (this uid) reach this socket (a 0700 directory) */
      if (getsockopt (cell.client, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid ()
          || connect_request_read (cell.client, &req, err) < 0)
        {
          sbx_error_clear (err);
          close (cell.client);
          continue;
        }
      memcpy (cell.fds, req.fds, sizeof cell.fds);
      for (int i = 0; i < 4; i++)
        req.fds[i] = -1; /* the cell's now */
      cell.argv = req.argv;
      cell.argc = req.argc;
      cell.env = req.env;
      if (run_cell (r, sess, chan, sfd, &cell) < 0)
        sess->ending = true;
      cell_free (&cell);
      connect_request_free (&req);
    }
  close (sfd);
  /* no call is taken from now on: one that comes goes to the server, which begins
     the session again */
  unlink (sess->path);
  close (sess->listen_fd);
  sess->listen_fd = -1;
  /* done: the container goes (its teardown is the run's), with no report of its own */
  r->finished = true;
  r->finish_ret = 0;
  r->warm->replied = true;
  r->watch.fg.stop = true;
  return 0;
}
