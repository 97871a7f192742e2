/* Warm runs: `sbx-oci python` as the worker of `sbx-oci serve` runs it (server.c):
 * runtime/sandbox/python.c's run, with this file's hooks (struct python_warm_ops).
 *
 * The container's own program only holds the run's namespaces, cgroup and mounts
 * (run.sbx-oci.init: hold). Once it runs, the warm interpreter (runtime/warm/zygote.py)
 * is asked to fork; the fork joins the container through libsbx-warm.so as pid 2, with
 * the program's stdout and stderr, a run channel on its fd 3 and, outside, a waiter
 * that reports on the status pipe how the program ended. Once joined, the fork reads
 * the program from the run channel: a sealed memfd (its arguments and environment)
 * and its stdin. The zygote itself only ever sees a state root, a container id and fds.
 *
 * Standing by (sandbox_warm.await_request), all of that but the program is done before
 * any client asks: the request is then adopted into the run already made (its stdio,
 * cwd, environment, program, and the per-run options --timeout, --max-output and
 * --result), and the joined fork is sent its program at once. A request that asks
 * for more (a sandbox option of its own, a SCRIPT, an --id) needs a sandbox of its
 * own: the standby is given up (sandbox_warm.fallback) and the request run afresh. */
#include "build-config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/load.h"
#include "runtime/container/foreground.h"
#include "runtime/linux/fs.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/serve/commands.h"
#include "runtime/serve/warm_run.h"
#include "runtime/serve/wire.h"

extern char **environ;

/* The pipes' write ends given to the fork (or not needed any more) closed. */
static void
release_pipes (struct python_run *r)
{
  if (r->warm_out_w >= 0)
    close (r->warm_out_w);
  if (r->warm_err_w >= 0)
    close (r->warm_err_w);
  r->warm_out_w = r->warm_err_w = -1;
}

/* After container_run: the program's status, signal and rusage as its waiter saw
   them. */
static int
take_outcome (struct python_run *r, struct sbx_error *err)
{
  if (r->watch.timed_out)
    {
      /* whatever the fork said: everything was killed at the deadline */
      r->status = 128 + SIGKILL;
      r->watch.fg.term_signal = SIGKILL;
      if (r->warm_status >= 0)
        r->watch.fg.rusage = r->warm_rusage;
      return 0;
    }
  if (r->warm_status >= 0)
    {
      r->status = r->warm_status;
      r->watch.fg.term_signal = r->warm_signal;
      r->watch.fg.rusage = r->warm_rusage;
      return 0;
    }
  if (r->client_gone)
    return sbx_error_set (err, 0, "the client hung up: the run was ended");
  /* the server's failure, not the program's: 125, as a sandbox that could not be set up */
  sbx_error_set (err, 0, "the warm interpreter did not run the program: %s", r->warm_error ? r->warm_error : "no report");
  err->exit_hint = SBX_EXIT_SETUP;
  return -1;
}

/* A client that went away while its request waited (in the queue, or for a standby)
   gets no run: its program is never sent. The watch's poll would see the hangup too,
   but only once the program may already have done something. */
static bool
client_hung_up (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLRDHUP };
  return fd >= 0 && poll (&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The program and its stdin, to the joined fork on the run channel. */
static int
send_program (struct python_run *r, int chan, struct sbx_error *err)
{
  int program = python_program_fd (r, err), ret = -1;
  if (program < 0)
    return -1;
  {
    int fds[2] = { program, r->stdin_fd };
    /* the words after PROG are the report's controls (zygote.py, controls()) */
    const char *msg = r->c->show_value ? "PROG value=1" : "PROG";
    if (fd_send_with_fds (chan, msg, strlen (msg), fds, 2) < 0)
      sbx_error_set (err, errno, "the warm fork is gone (send the program)");
    else
      ret = 0;
  }
  close (program);
  close (r->stdin_fd); /* the fork's now: EOF must reach the program */
  r->stdin_fd = -1;
  return ret;
}

/* A request's command line is python's */
static const struct command request_cmd = { .name = "python", .opts = python_cli_opts };

/* Options a standby's run takes: they do not change the sandbox (--env: the program's
   environment comes with the program), or (--workdir, --rw at /tmp/NAME) the standby
   changes it as it was made to (standby_workdir.c), or (--memory, --network)
   adopt_request checks that they ask for what the standby was made with, as a client
   that names the server's limits (the MCP server reaching another's) does.
   (--die-with-parent: a warm run ends when its client hangs up, and the client, which
   the parent started, ends with the parent: runtime/serve/client.c.) */
static bool
per_run_option (const char *arg, bool *takes_value)
{
  static const char *const names[] = { "timeout", "max-output",      "result", "show-value", "workdir",
                                       "die-with-parent", "memory", "network", "env",        "rw" };
  size_t n;
  if (strncmp (arg, "--", 2) != 0)
    return false;
  arg += 2;
  n = strcspn (arg, "=");
  for (size_t i = 0; i < ARRAY_SIZE (names); i++)
    if (strlen (names[i]) == n && strncmp (arg, names[i], n) == 0)
      {
        *takes_value = arg[n] != '=' && strcmp (names[i], "show-value") != 0 && strcmp (names[i], "die-with-parent") != 0;
        return true;
      }
  return false;
}

/* Whether a client's command line (argv[0] "python") fits a standby's sandbox: only
   per-run options, and a program that needs no mount (-c, -m, -). */
static bool
request_fits (int argc, char **argv, int split)
{
  int i;
  for (i = 1; i < split; i++)
    {
      bool value;
      if (!per_run_option (argv[i], &value))
        return false;
      if (value)
        i++;
    }
  if (split < argc && strcmp (argv[split], "--") == 0)
    split++;
  return split < argc
         && (strcmp (argv[split], "-c") == 0 || strcmp (argv[split], "-m") == 0 || strcmp (argv[split], "-") == 0);
}

/* Two values of an environment variable, either unset, are the same. */
static bool
same_value (const char *a, const char *b)
{
  return a == b || (a && b && strcmp (a, b) == 0);
}

/* The request's options (argv[1..split)) become this run's: the per-run ones, a
   --result FILE's directory opened (from here on a failure is written there), and a
   --workdir of the client's taken into the standby. -1 with fallback set: the request
   needs a sandbox of its own. */
/* Whether the request's --rw (the policy's mounts from FIRST on) can be taken by the
   standby: each at /tmp/NAME (standby_bind_fits), on a point no other mount of the
   sandbox has or is above (the server's --ro and --rw, another of the request's, the
   interpreter's own binds), as root. Else a sandbox made for the request stacks them. */
static bool
request_binds_fit (const struct python_run *r, size_t first)
{
  const struct sandbox_policy *p = &r->c->p;
  if (p->n_mounts > first && !r->ctx->as_root)
    return false;
  for (size_t i = first; i < p->n_mounts; i++)
    {
      const char *dest = p->mounts[i].dest;
      if (!standby_bind_fits (&p->mounts[i]))
        return false;
      for (size_t j = 0; j < i; j++)
        if (path_is_under (dest, p->mounts[j].dest) || path_is_under (p->mounts[j].dest, dest))
          return false;
      for (size_t j = 0; j < r->interp.n_binds; j++)
        if (path_is_under (dest, r->interp.binds[j]) || path_is_under (r->interp.binds[j], dest))
          return false;
    }
  return true;
}

static int
adopt_options (struct python_run *r, int argc, char **argv, int split, struct sbx_error *err)
{
  struct python_cli *c = r->c;
  /* the server's own --workdir, if it has one, is not the standby's to give up */
  const char *server_workdir = c->p.workdir;
  uint64_t memory = c->p.memory;
  enum sandbox_network network = c->p.network;
  size_t server_mounts = c->p.n_mounts;
  int first = cli_parse (&request_cmd, split, argv, python_opt, c, err);
  if (first < 0 || python_check_program_part (argc - split, argv + split, err) < 0)
    return -1;
  if (c->p.memory != memory || c->p.network != network || !request_binds_fit (r, server_mounts)
      || (c->p.workdir != server_workdir && (!r->ctx->as_root || !r->w.temporary)))
    {
      r->warm->fallback = true;
      return sbx_error_set (err, 0, "the request needs a sandbox of its own");
    }
  if (c->result && strcmp (c->result, "-") != 0 && python_result_open_dir (r, err) < 0)
    return -1;
  if ((c->p.workdir != server_workdir && standby_adopt_workdir (r, err) < 0)
      || (c->p.n_mounts > server_mounts && standby_adopt_binds (r, server_mounts, err) < 0))
    {
      if (!err->exit_hint)
        err->exit_hint = SBX_EXIT_SETUP;
      return -1;
    }
  return 0;
}

/* A standby's request: the client's program and per-run options become this run's. */
static int
adopt_request (struct python_run *r, struct sbx_error *err)
{
  struct python_cli *c = r->c;
  char **req = NULL, **argv;
  size_t n = 0;
  int argc, split;
  _cleanup_free_ char **owned = NULL;
  /* the temporary workdir was made in the server's TMPDIR: one-shot makes it in the
     client's, so a client with another one needs a sandbox of its own */
  _cleanup_free_ char *tmpdir = getenv ("TMPDIR") ? xstrdup (getenv ("TMPDIR")) : NULL;
  if (r->warm->await_request (r->warm, r->warm_status_fd, &req, &n, err) < 0)
    return -1;
  owned = argv = xmalloc0 ((n + 2) * sizeof *argv);
  argv[0] = "python";
  memcpy (argv + 1, req, n * sizeof *argv);
  argc = (int) n + 1;
  split = python_program_start (argc, argv);
  if (!request_fits (argc, argv, split) || !same_value (tmpdir, getenv ("TMPDIR")))
    {
      r->warm->fallback = true;
      return sbx_error_set (err, 0, "the request needs a sandbox of its own");
    }
  /* from now on, this run is the client's: its clock, and its CPU time beyond what
     the join spent */
  r->t0 = monotonic_ns ();
  if (r->watch.read_stats)
    {
      r->watch.read_stats (&r->watch);
      r->cpu_base_ns = r->watch.stats.cpu_usage_ns;
      r->cpu_base_user_ns = r->watch.stats.cpu_user_ns;
      r->cpu_base_system_ns = r->watch.stats.cpu_system_ns;
      r->watch.has_stats = false;
    }
  if (adopt_options (r, argc, argv, split, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_args; i++)
    free (r->args[i]);
  r->n_args = 0;
  if (python_program_args (r, r->interp.executable, argc - split, argv + split, err) < 0)
    return -1;
  if (r->stdin_fd >= 0)
    close (r->stdin_fd);
  r->stdin_fd = -1;
  {
    int fds[2] = { r->streams[0].fd, r->streams[1].fd };
    if (python_open_streams (r, python_reads_stdin (argc - split, argv + split), err) < 0)
      return -1;
    r->streams[0].fd = fds[0];
    r->streams[1].fd = fds[1];
  }
  r->res.include_output = c->result && strcmp (c->result, "-") == 0;
  r->watch.fg.deadline_ns = c->p.timeout > 0 ? r->t0 + (int64_t) (c->p.timeout * 1e9) : 0;
  r->warm_fds[3].fd = r->warm->client_fd;
  return 0;
}

/* run_watch.on_started: the holder runs; ask the warm interpreter to join it, and
   give the joined fork its program (standing by: once a client asks for it). */
static int
warm_on_started (void *data, const char *id, struct sbx_error *err)
{
  struct python_run *r = data;
  int status[2] = { -1, -1 }, chan[2] = { -1, -1 }, null = -1, ret = -1;
  size_t root_len = strlen (r->ctx->root), len = 4 + root_len + 1 + strlen (id) + 1;
  _cleanup_free_ char *msg = xmalloc0 (len);
  /* a deadline already past: nothing is started (the watch kills the holder at once) */
  if (!r->warm->await_request && r->watch.fg.deadline_ns && monotonic_ns () >= r->watch.fg.deadline_ns)
    {
      release_pipes (r);
      return 0;
    }
  if (pipe2 (status, O_CLOEXEC) < 0 || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0
      || (null = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    sbx_error_set (err, errno, "the warm run's pipes");
  else
    {
      /* the fork's 0-3: stdin is sent with the program; 3 is the run channel; then
         the sandbox's namespaces and root, which the fork joins (join_fds.h) */
      int fds[5 + JOIN_FDS_MAX] = { null, r->warm_out_w, r->warm_err_w, chan[1], status[1] };
      size_t n_fds = 5 + (r->watch.join ? join_fds_list (r->watch.join, fds + 5) : 0);
      /* a session's: its state, which forks its cells; a standby's: a sandbox of the
         server's options, whose config holds no client's data, which the warm
         interpreter may read itself (runtime/warm/warm_spawn.c) */
      memcpy (msg, r->warm->session ? "SES" : r->warm->await_request ? "STB" : "RUN", 4);
      memcpy (msg + 4, r->ctx->root, root_len + 1);
      memcpy (msg + 4 + root_len + 1, id, strlen (id) + 1);
      if (fd_send_with_fds (r->warm->zygote_fd, msg, len, fds, n_fds) < 0)
        sbx_error_set (err, errno, "the warm interpreter is gone (send)");
      else
        ret = 0;
    }
  /* the fork has its copies: ours would keep the pipes from reaching EOF */
  if (null >= 0)
    close (null);
  if (chan[1] >= 0)
    close (chan[1]);
  if (status[1] >= 0)
    close (status[1]);
  release_pipes (r);
  if (ret == 0)
    {
      r->warm_status_fd = status[0];
      r->warm_fds[2].fd = status[0];
      status[0] = -1;
      if (r->warm->session)
        ret = python_session_serve (r, chan[0], err);
      else if (r->warm->await_request && adopt_request (r, err) < 0)
        ret = -1;
      else if (r->watch.fg.deadline_ns && monotonic_ns () >= r->watch.fg.deadline_ns)
        ; /* a deadline already past: no program (the watch kills all at once) */
      else if (client_hung_up (r->warm->client_fd))
        {
          r->client_gone = true; /* no program: the watch ends the run at once */
          r->watch.fg.stop = true;
        }
      else if (send_program (r, chan[0], err) < 0)
        ret = -1;
      /* kept: the fork's word that the program has ended comes on it */
      r->warm_chan = chan[0];
      r->warm_fds[4].fd = chan[0];
      chan[0] = -1;
    }
  if (status[0] >= 0)
    close (status[0]);
  if (chan[0] >= 0)
    close (chan[0]);
  return ret;
}

/* The warm fork's one line: the program's status, or why it could not join. */
static void
warm_read_status (struct python_run *r)
{
  char buf[1100];
  ssize_t n = read (r->warm_status_fd, buf, sizeof buf - 1);
  if (n <= 0)
    {
      if (!r->warm_error && r->warm_status < 0)
        r->warm_error = xstrdup ("the warm interpreter's fork ended without a word");
      return;
    }
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  if (strncmp (buf, "OK ", 3) == 0)
    {
      long long v[5] = { -1, 0, 0, 0, 0 };
      sscanf (buf + 3, "%lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4]);
      /* after the fork's own word (EXIT) it was killed with the sandbox: its status
         is the word's, its rusage the waiter's */
      if (!r->warm_exit_said)
        {
          r->warm_status = (int) v[0];
          r->warm_signal = (int) v[1];
        }
      r->warm_rusage.ru_utime = (struct timeval) { .tv_sec = v[2] / 1000000, .tv_usec = v[2] % 1000000 };
      r->warm_rusage.ru_stime = (struct timeval) { .tv_sec = v[3] / 1000000, .tv_usec = v[3] % 1000000 };
      r->warm_rusage.ru_maxrss = v[4];
    }
  else
    r->warm_error = xstrdup (strncmp (buf, "ERR ", 4) == 0 ? buf + 4 : buf);
}

/* Before the client hears the end of a run on its own --workdir or --rw paths: the
   sandbox is told to die (SIGKILL to its pid namespace's init, which takes every
   process with it: nothing of the program runs user code again) and the paths' modes
   are put back, without waiting for the processes to be gone, which would cost the
   client the teardown of the interpreter; the teardown after the reply puts them
   back once more, for a write that was already under way. -1: not done (the usual
   way, after the teardown). */
static int
quiesce_client_paths (struct python_run *r)
{
  struct sbx_error e = { 0 };
  struct loaded l;
  int pidfd = -1, ret = -1;
  if (container_load (r->ctx, r->id, false, &l, &e) == 0 && (pidfd = container_open_init_pidfd (&l.state, &e)) >= 0
      && syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
    ret = 0;
  if (pidfd >= 0)
    close (pidfd);
  loaded_free (&l);
  sbx_error_clear (&e);
  for (size_t i = 0; ret == 0 && i <= r->n_rw; i++)
    {
      struct host_writable *h = i < r->n_rw ? &r->rw[i] : &r->w.h;
      if ((i < r->n_rw || !r->w.temporary) && host_writable_restore (i < r->n_rw ? "--rw" : "--workdir", h, &e) < 0)
        ret = -1;
    }
  sbx_error_clear (&e);
  return ret;
}

/* The program has ended and the output is drained: the client hears how it ended
   now, with the result, and the sandbox is torn down after. */
static void
finish_early (struct python_run *r)
{
  int status;
  if ((!r->w.temporary || r->n_rw) && quiesce_client_paths (r) < 0)
    return; /* the usual way, after the teardown */
  if (r->watch.read_stats)
    r->watch.read_stats (&r->watch);
  if (take_outcome (r, &r->finish_err) < 0)
    {
      sbx_error_clear (&r->finish_err);
      return; /* the usual way, after the teardown */
    }
  status = python_finish (r, &r->finish_err);
  if (status < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&r->finish_err);
      sbx_log_write (&r->ctx->log, SBX_LOG_ERROR, "%s", msg ? msg : "unknown error");
      status = r->finish_err.exit_hint ? r->finish_err.exit_hint : 1;
    }
  /* the server first: a client that has its reply may connect again at once, and
     should find this run's place free */
  if (r->warm->on_replied)
    r->warm->on_replied (r->warm);
  connect_reply_status (r->warm->client_fd, status);
  r->warm->replied = true;
}

/* The fork's own word on the run channel, "EXIT CODE", sent once the program has
   ended and its output is written: the run ends now, without waiting for the fork's
   exit and its waiter's report. What is in the pipes is read (all of the program's
   output: it was written before the word), the client hears the result, and then
   everything in the sandbox is killed (fg_watch.stop). Only with a cgroup, which
   counts the CPU time and memory that the waiter would have. Whatever sent it (it
   could be the program) can only end its own run, as an exit would. */
static void
on_channel (struct python_run *r, struct pollfd *fds)
{
  char buf[64];
  int report = -1, code, fields;
  ssize_t n = fd_recv_with_fd (fds[4].fd, buf, sizeof buf - 1, &report);
  long long usage[3] = { 0, 0, 0 };
  char extra;
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
    {
      fds[4].fd = -1; /* the fork has ended: its waiter reports */
      return;
    }
  if (n <= 0)
    return;
  buf[n] = '\0';
  /* PID: the program's process, as a pidfd, for the client's interrupts */
  if (strcmp (buf, "PID") == 0)
    {
      if (report >= 0 && r->warm_pidfd < 0)
        r->warm_pidfd = report;
      else if (report >= 0)
        close (report);
      return;
    }
  /* with the word, the program's report (value, exception, figures), if it has one */
  if (report >= 0)
    {
      struct sbx_error e = { 0 };
      sandbox_report_free (&r->report);
      if (sandbox_report_read (report, &r->report, &e) < 0)
        {
          sbx_log_write (&r->ctx->log, SBX_LOG_WARNING, "%s: left out of the result", e.msg ? e.msg : "the report");
          sbx_error_clear (&e);
        }
      r->res.report = &r->report;
      close (report);
    }
  /* EXIT CODE [USER_US SYSTEM_US MAXRSS_KB]: the CPU time since the program came */
  fields = sscanf (buf, "EXIT %d %lld %lld %lld%c", &code, &usage[0], &usage[1], &usage[2], &extra);
  if (r->finished || !r->watch.read_stats || (fields != 1 && fields != 4) || code < 0 || code > 255 || usage[0] < 0
      || usage[1] < 0 || usage[2] < 0)
    return;
  fds[4].fd = -1;
  r->warm_status = code;
  r->warm_signal = 0;
  r->warm_rusage.ru_utime = (struct timeval) { .tv_sec = usage[0] / 1000000, .tv_usec = usage[0] % 1000000 };
  r->warm_rusage.ru_stime = (struct timeval) { .tv_sec = usage[1] / 1000000, .tv_usec = usage[1] % 1000000 };
  r->warm_rusage.ru_maxrss = usage[2];
  r->warm_exit_said = true;
  r->watch.fg.stop = true;
  output_drain_now (r->streams, 2);
  fds[0].fd = fds[1].fd = -1;
}

/* fg_watch.on_fds of a warm run: fds are stdout, stderr, the status pipe, the
   client's connection and the run channel. The status (the waiter's or the fork's
   own), or the client hanging up, ends the run. */
static void
warm_on_fds (void *data, struct pollfd *fds, size_t n)
{
  struct python_run *r = data;
  output_on_ready (r->streams, fds, 2);
  if (n > 2 && fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR)))
    {
      if (!r->finished)
        warm_read_status (r);
      fds[2].fd = -1;
      r->watch.fg.stop = true;
    }
  if (n > 3 && fds[3].fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP | POLLERR)))
    {
      char buf[256];
      ssize_t got = recv (fds[3].fd, buf, sizeof buf, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR) || (fds[3].revents & (POLLHUP | POLLERR)))
        {
          r->client_gone = true;
          fds[3].fd = -1;
          r->watch.fg.stop = true;
        }
      else if (got > 0 && connect_is_interrupt (buf, (size_t) got) && r->warm_pidfd >= 0)
        /* the client's ^C: KeyboardInterrupt in the program, which may end as it will */
        syscall (SYS_pidfd_send_signal, r->warm_pidfd, SIGINT, NULL, 0);
    }
  if (n > 4 && fds[4].fd >= 0 && (fds[4].revents & (POLLIN | POLLHUP | POLLERR)))
    on_channel (r, fds);
  /* with a --workdir or --rw path of the client's, once nothing in the sandbox can
     touch it and its mode is back (finish_early) */
  if (r->warm_status >= 0 && fds[0].fd < 0 && fds[1].fd < 0 && !r->finished && !r->client_gone
      && r->warm->client_fd >= 0)
    finish_early (r);
}

/* Before container_run: the watch's fds (5 of them) and callbacks for a warm run; the
   program's pipes (write ends) go to the fork, not to the container's init. */
static void
arm_watch (struct python_run *r, struct pollfd *fds, int out_w, int err_w)
{
  r->warm_out_w = out_w;
  r->warm_err_w = err_w;
  fds[2] = (struct pollfd) { .fd = -1, .events = POLLIN }; /* the status pipe, once started */
  fds[3] = (struct pollfd) { .fd = r->warm->client_fd, .events = POLLIN };
  fds[4] = (struct pollfd) { .fd = -1, .events = POLLIN }; /* the run channel, once started */
  r->watch.fg.n_fds = 5;
  r->watch.fg.on_fds = warm_on_fds;
  r->watch.fg.data = r;
  r->watch.on_started = warm_on_started;
  r->watch.started_data = r;
  r->warm_fds = fds;
  /* standing by, the clock starts with the request (adopt_request); a session's
     cells have a clock each (cells.c) */
  if (r->warm->await_request || r->warm->session)
    r->watch.fg.deadline_ns = 0;
}

/* With the run: what of the warm half is still open, closed. */
static void
close_fds (struct python_run *r)
{
  release_pipes (r);
  if (r->warm_chan >= 0)
    close (r->warm_chan);
  r->warm_chan = -1;
  if (r->warm_pidfd >= 0)
    close (r->warm_pidfd);
  r->warm_pidfd = -1;
  if (r->standby_workdir)
    fs_remove_tree (AT_FDCWD, r->standby_workdir); /* made by us (workdir_prepare), unmounted by now */
  free (r->standby_workdir);
  r->standby_workdir = NULL;
}

static const struct python_warm_ops warm_ops = {
  .arm = arm_watch,
  .release = release_pipes,
  .outcome = take_outcome,
  .free = close_fds,
};

/* The worker's way into runtime/sandbox/python.c's run: this file's hooks set, then
   `python`'s command as one-shot has it (its --help and messages too). */
int
warm_run_python (struct sbx_ctx *ctx, int argc, char **argv, struct sandbox_warm *warm, struct sbx_error *err)
{
  warm->ops = &warm_ops;
  return python_command (ctx, &cmd_python, argc, argv, warm, err);
}
