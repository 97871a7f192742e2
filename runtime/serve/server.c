/* sbx-oci serve --socket PATH [--preload MOD,...] [--max-runs N] [--queue N] [python's sandbox options]
 *
 * Warm sandboxes: a foreground server that keeps one Python interpreter warm (started
 * once, the preload modules imported once: runtime/warm/zygote.py) and runs each
 * `sbx-oci python --connect PATH ...` in a fork of it that has joined a sandbox of its
 * own. Per run, a worker (a fork of this process) does exactly what a one-shot
 * `sbx-oci python` does, as the client would have (its argv, cwd and stdio come with
 * the request), except that the container's own program only holds the run's
 * namespaces, cgroup and mounts while the warm fork joins it (warm_run.c):
 * its own pid, net, ipc, uts and mount namespaces, cgroup and limits, /tmp and workdir,
 * user, capabilities, seccomp filter and Landlock rules, as one-shot.
 *
 * Who may connect: the user who started the server (the socket is made 0600 and each
 * peer's uid is checked). Load: --max-runs at once, --queue more waiting, and any
 * further connection is refused with a message. SIGTERM or SIGINT: no new runs, the
 * workers end theirs (their containers are deleted), the warm interpreter is ended,
 * the socket removed. Killed with SIGKILL: the workers and the interpreter die with
 * the server (parent-death signals), and a container a worker could not delete is an
 * orphan that the next server's start, or a one-shot run, sweeps (sandbox_janitor.c);
 * a worker killed alone is swept after by its server (sweep_orphans). */
#include "build-config.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/cli.h"
#include "runtime/base/util.h"
#include "runtime/linux/idmap.h"
#include "runtime/container/foreground.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/serve/commands.h"
#include "runtime/serve/server.h"
#include "runtime/serve/warm_run.h"
#include "runtime/serve/wire.h"

extern char **environ;

enum
{
  SV_SOCKET = 300,
  SV_PRELOAD,
  SV_MAX_RUNS,
  SV_QUEUE,
  SV_RECYCLE,
  SV_MAX_OUTPUT,
  SV_STANDBY,
  SV_SESSION_IDLE,
  SV_MAX_SESSIONS,
};

static const struct cli_opt serve_opts[] = {
  { "socket", SV_SOCKET, required_argument, "PATH", "listen here (made 0600: only this user may connect)" },
  { "preload", SV_PRELOAD, required_argument, "MOD,...", "modules the warm interpreter imports once, for every run" },
  { "max-runs", SV_MAX_RUNS, required_argument, "N", "runs at once (default 2 per CPU)" },
  { "queue", SV_QUEUE, required_argument, "N", "connections that wait for a run beyond those (default 64); more are refused" },
  { "standby", SV_STANDBY, required_argument, "N",
    "sandboxes made and joined by the warm interpreter before a request comes (default 2; 0: none)" },
  { "session-idle", SV_SESSION_IDLE, required_argument, "SECONDS",
    "a session without a call for this long ends (default 600; 0: never)" },
  { "max-sessions", SV_MAX_SESSIONS, required_argument, "N",
    "sessions held at once (default 1024); a new one beyond is refused" },
  { "recycle", SV_RECYCLE, required_argument, "N",
    "a new warm interpreter (a new address-space layout) every N runs (default 1000; 0: never)" },
  SANDBOX_CLI_OPT_INTERPRETER ("python"),
  SANDBOX_CLI_OPT_WORKDIR ("every run's workdir (default: a fresh one per run)"),
  SANDBOX_CLI_OPTS,
  SANDBOX_CLI_OPT_TIMEOUT ("each run's wall clock limit (default 300; 0: none)"),
  SANDBOX_CLI_OPT_ALLOW_DEGRADED ("run even if a limit cannot be enforced as asked"),
  { "max-output", SV_MAX_OUTPUT, required_argument, "SIZE", "each run's cap of stdout and stderr (default 1M)" },
  { NULL },
};


static int
serve_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct serve *s = data;
  unsigned v;
  int r;
  switch (key)
    {
    case SV_SOCKET:
      s->socket_path = arg;
      return 0;
    case SV_PRELOAD:
      for (const char *c = arg; *c; c++)
        if (!(*c == ',' || *c == '.' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z')
              || (*c >= 'A' && *c <= 'Z')))
          return cli_usage_error (err, "--preload: '%s' is not a list of module names", arg);
      s->preload = arg;
      return 0;
    case SV_RECYCLE:
      return cli_parse_uint ("--recycle", arg, UINT32_MAX, &s->recycle, err);
    case SV_STANDBY:
      return cli_parse_uint ("--standby", arg, 64, &s->standby_max, err);
    case SV_SESSION_IDLE:
      return cli_parse_uint ("--session-idle", arg, 86400 * 365, &s->session_idle, err);
    case SV_MAX_SESSIONS:
      if (cli_parse_uint ("--max-sessions", arg, 65536, &s->max_sessions, err) < 0)
        return -1;
      return s->max_sessions > 0 ? 0 : cli_usage_error (err, "--max-sessions: 0 sessions leaves none to hold");
    case SV_MAX_RUNS:
    case SV_QUEUE:
      if (cli_parse_uint (key == SV_MAX_RUNS ? "--max-runs" : "--queue", arg, 4096, &v, err) < 0)
        return -1;
      if (key == SV_MAX_RUNS && v == 0)
        return cli_usage_error (err, "--max-runs: at least 1");
      *(key == SV_MAX_RUNS ? &s->max_runs : &s->queue_max) = v;
      return 0;
    default:
      break;
    }
  /* one of python's: checked here, and passed on to every run as written */
  if (key == SO_ROOTFS)
    return cli_usage_error (err, "--rootfs: serve runs the host's interpreter over its system paths");
  if (key == SV_MAX_OUTPUT)
    {
      int64_t bytes;
      if (cli_parse_bytes ("--max-output", arg, &bytes, err) < 0)
        return -1;
      if (bytes < 0)
        return cli_usage_error (err, "--max-output: '%s' is not a size", arg);
      r = 0;
    }
  else
    r = sandbox_cli_opt (&s->p, key, arg, err);
  if (r < 0)
    return -1;
  for (const struct cli_opt *o = serve_opts; o->name; o++)
    if (o->key == key)
      {
        s->defaults = xrealloc (s->defaults, (s->n_defaults + 1) * sizeof *s->defaults);
        s->defaults[s->n_defaults++] = arg ? xasprintf ("--%s=%s", o->name, arg) : xasprintf ("--%s", o->name);
        break;
      }
  return 0;
}

/* The server's own --workdir and --rw paths, checked once at start as every run would
   check them (a missing path, a system directory: sandbox_syspaths.c), so that a
   server that could run nothing does not start. */
static int
check_host_paths (struct serve *s, struct sbx_error *err)
{
  struct host_writable h;
  if (s->p.workdir)
    {
      if (host_writable_open (s->ctx, "--workdir", s->p.workdir, s->p.host_uid, &h, err) < 0)
        return -1;
      host_writable_close (&h);
    }
  for (size_t i = 0; i < s->p.n_mounts; i++)
    if (s->p.mounts[i].writable)
      {
        if (host_writable_open (s->ctx, "--rw", s->p.mounts[i].source, s->p.host_uid, &h, err) < 0)
          return -1;
        host_writable_close (&h);
      }
  return 0;
}

/* ------------------------------------------------------------- a run */

/* In a worker (a fork of the server): what of the server it must not hold. */
static void
worker_setup (struct serve *s)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  prctl (PR_SET_PDEATHSIG, SIGTERM);
  close (s->listen_fd);
  close (s->notify_fd[0]);
  for (unsigned i = 0; i < s->n_queue; i++)
    close (s->queue[i]);
  /* another standby's ctl held here would keep it from seeing the server's end */
  for (unsigned i = 0; i < s->n_standbys; i++)
    close (s->standbys[i].ctl);
}

/* sandbox_warm.on_replied of a worker: the server hears that this run's client has
   its reply (on_notify), before the teardown. */
static void
tell_replied (struct sandbox_warm *w)
{
  struct serve *s = w->data;
  char msg[32];
  snprintf (msg, sizeof msg, "E %d", (int) getpid ());
  (void) !send (s->notify_fd[1], msg, strlen (msg), MSG_NOSIGNAL);
}

/* The run of a request taken, from the start; its status for the client, or -1 if
   the client has it already. */
static int
run_request (struct serve *s, int client)
{
  struct sbx_error err = { 0 };
  struct sandbox_warm warm = { .zygote_fd = s->zygote_fd, .client_fd = client, .python = s->python,
                               .idmap_userns = s->idmap_userns, .idmap_owner = geteuid (), .idmap_group = getegid (),
                               .on_replied = tell_replied, .data = s, .kept_cgroup = s->kept_cgroup };
  int argc, status = serve_session (s, client);
  _cleanup_free_ char **argv = NULL;
  if (status != SERVE_NOT_A_SESSION)
    return status;
  argv = run_argv (s, s->req.argv, s->req.argc, &argc);
  status = warm_run_python (s->ctx, argc, argv, &warm, &err);
  if (warm.replied)
    return -1;
  if (status < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      sbx_log_write (&s->ctx->log, SBX_LOG_ERROR, "%s", msg ? msg : "unknown error");
      status = err.exit_hint ? err.exit_hint : 1;
    }
  return status;
}

static void __attribute__ ((noreturn))
worker_main (struct serve *s, int client)
{
  struct sbx_error err = { 0 };
  worker_setup (s);
  if (take_request (s, client, &err) < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      slog (s, "a request could not be read: %s", msg);
      _exit (1);
    }
  {
    int status = run_request (s, client);
    if (status >= 0)
      connect_reply_status (client, status);
  }
  _exit (0);
}

/* sandbox_warm.await_request of a standby: the server hands a client over on ctl
   (its end closed: the server is stopping); the fork's report on watch_fd while
   waiting means it is gone. */
static int
standby_await (struct sandbox_warm *w, int watch_fd, char ***argv, size_t *argc, struct sbx_error *err)
{
  struct serve *s = w->data;
  struct pollfd pfd[2] = { { .fd = s->ctl_fd, .events = POLLIN }, { .fd = watch_fd, .events = POLLIN } };
  char buf[8], cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *cm;
  int client = -1;
  ssize_t n;
  while (poll (pfd, 2, -1) < 0)
    if (errno != EINTR)
      return sbx_error_set (err, errno, "standby: poll");
  if (!(pfd[0].revents & POLLIN))
    {
      char why[512] = "";
      n = read (watch_fd, why, sizeof why - 1);
      why[n > 0 ? n : 0] = '\0';
      why[strcspn (why, "\n")] = '\0';
      return sbx_error_set (err, 0, "the warm interpreter's fork ended while standing by%s%s", *why ? ": " : "", why);
    }
  n = recvmsg (s->ctl_fd, &mh, MSG_CMSG_CLOEXEC);
  for (cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN (sizeof (int)))
      memcpy (&client, CMSG_DATA (cm), sizeof client);
  if (n <= 0 || client < 0)
    {
      s->stopping = true;
      return sbx_error_set (err, 0, "the server is stopping");
    }
  w->client_fd = client;
  /* a run now, which the server's death ends (worker_setup), unless it is dead already */
  prctl (PR_SET_PDEATHSIG, SIGTERM);
  if (getppid () != s->server_pid)
    {
      s->stopping = true;
      return sbx_error_set (err, 0, "the server is stopping");
    }
  if (take_request (s, client, err) < 0)
    return -1;
  *argv = s->req.argv;
  *argc = s->req.argc;
  return 0;
}

/* A standby: the sandbox of the server's options made, the warm fork joined, then
   the request of the client the server hands over. */
static void __attribute__ ((noreturn))
standby_main (struct serve *s, int ctl)
{
  struct sbx_error err = { 0 };
  struct sandbox_warm warm = { .zygote_fd = s->zygote_fd, .client_fd = -1, .python = s->python,
                               .idmap_userns = s->idmap_userns, .idmap_owner = geteuid (), .idmap_group = getegid (),
                               .await_request = standby_await, .on_replied = tell_replied, .data = s,
                               .kept_cgroup = s->kept_cgroup };
  static char *placeholder[] = { "-c", "pass" };
  int argc, status;
  _cleanup_free_ char **argv = run_argv (s, placeholder, 2, &argc);
  worker_setup (s);
  /* Standing by, it ends at its ctl's EOF, the server's death included, tearing its
     sandbox down (state dir, temporary workdir): a parent-death SIGTERM, pending
     while the run's signals are blocked, would kill it midway once they are not. */
  prctl (PR_SET_PDEATHSIG, 0);
  s->ctl_fd = ctl;
  status = warm_run_python (s->ctx, argc, argv, &warm, &err);
  if (warm.client_fd < 0)
    {
      /* no client: the server is stopping, or this sandbox could not be made */
      _cleanup_free_ char *msg = sbx_error_string (&err);
      if (s->stopping)
        _exit (0);
      slog (s, "a standby failed: %s", msg ? msg : "no reason given");
      _exit (1);
    }
  if (warm.fallback)
    {
      sbx_error_clear (&err);
      status = run_request (s, warm.client_fd);
    }
  else if (warm.replied)
    status = -1;
  else if (status < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      sbx_log_write (&s->ctx->log, SBX_LOG_ERROR, "%s", msg ? msg : "unknown error");
      status = err.exit_hint ? err.exit_hint : 1;
    }
  if (status >= 0)
    connect_reply_status (warm.client_fd, status);
  _exit (0);
}

static void
refuse (struct serve *s, int client, const char *why)
{
  connect_reply_error (client, why);
  close (client);
  slog (s, "refused a connection: %s", why);
}

static void
start_worker (struct serve *s, int client)
{
  pid_t pid;
  int slot;
  zygote_recycle (s);
  slot = kept_slot_take (s);
  pid = fork ();
  kept_slot_give (s, slot, pid);
  if (pid < 0)
    {
      refuse (s, client, "serve: fork failed");
      return;
    }
  if (pid == 0)
    {
      kept_slot_enter (s, slot);
      worker_main (s, client);
    }
  close (client);
  s->workers[s->n_workers++] = pid;
  s->runs++;
  s->zygote_runs++;
}

/* Up to --standby sandboxes made ahead, from the warm interpreter of now; not after
   three in a row ended without a client (they cannot be made: each run says why). */
static void
fill_standbys (struct serve *s)
{
  while (s->n_standbys < s->standby_max && s->zygote_fd >= 0 && s->standby_failures < 3)
    {
      int sv[2], slot;
      pid_t pid;
      zygote_recycle (s);
      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return;
      slot = kept_slot_take (s);
      s->server_pid = getpid (); /* the standby's parent, for standby_await */
      pid = fork ();
      kept_slot_give (s, slot, pid);
      if (pid < 0)
        {
          close (sv[0]);
          close (sv[1]);
          return;
        }
      if (pid == 0)
        {
          close (sv[0]);
          kept_slot_enter (s, slot);
          standby_main (s, sv[1]);
        }
      close (sv[1]);
      s->standbys[s->n_standbys++] = (struct standby) { .pid = pid, .ctl = sv[0] };
      s->zygote_runs++;
    }
}

/* The client to the oldest standby (the likeliest to be ready): true if one took it. */
static bool
hand_to_standby (struct serve *s, int client)
{
  while (s->n_standbys > 0)
    {
      struct standby sb = s->standbys[0];
      ssize_t sent;
      memmove (s->standbys, s->standbys + 1, --s->n_standbys * sizeof *s->standbys);
      sent = fd_send_with_fds (sb.ctl, "GO", 2, &client, 1);
      close (sb.ctl);
      if (sent < 0)
        continue; /* it ended: reap says why */
      close (client);
      s->workers[s->n_workers++] = sb.pid;
      s->runs++;
      /* its replacement is made when a run ends (reap): not beside this one */
      return true;
    }
  return false;
}

static void
take_client (struct serve *s, int client)
{
  if (!hand_to_standby (s, client))
    start_worker (s, client);
}

static void
on_connection (struct serve *s)
{
  struct ucred cred;
  socklen_t len = sizeof cred;
  int client = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (client < 0)
    return;
  if (getsockopt (client, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid ())
    {
      char why[128];
      snprintf (why, sizeof why, "serve: this server runs sandboxes for uid %u only", (unsigned) geteuid ());
      refuse (s, client, why);
      return;
    }
  /* its last restart failed: one more try, else the client hears why now rather
     than waiting for an interpreter that may never come (a standby made before
     needs none, unless its client asks for a sandbox of its own) */
  if (s->zygote_fd < 0 && !(s->n_standbys > 0 && s->n_workers < s->max_runs))
    {
      struct sbx_error err = { 0 };
      if (zygote_start (s, &err) < 0)
        {
          _cleanup_free_ char *msg = sbx_error_string (&err);
          slog (s, "%s", msg);
          sbx_error_clear (&err);
          refuse (s, client, "serve: the warm interpreter could not be started (the server's log says why)");
          return;
        }
    }
  if (s->n_workers < s->max_runs)
    take_client (s, client);
  else if (s->n_queue < s->queue_max)
    s->queue[s->n_queue++] = client;
  else
    {
      char why[160];
      snprintf (why, sizeof why, "serve: busy: %u runs at once and %u waiting (--max-runs, --queue); try again",
                s->n_workers, s->n_queue);
      refuse (s, client, why);
    }
}

static void start_queued (struct serve *s);
static void run_queued (struct serve *s);

/* Runs torn down at once per --max-runs place, beyond which a run keeps its place
   until its teardown is done: a teardown takes a few runs' time back to back. */
#define ENDING_PER_RUN 4

/* Worker PID's place in the workers, or -1. */
static int
worker_index (struct serve *s, pid_t pid)
{
  for (unsigned i = 0; i < s->n_workers; i++)
    if (s->workers[i] == pid)
      return (int) i;
  return -1;
}

/* What a worker says on notify_fd: "S PID", it became a session (session_route.c);
   "E PID", its client is getting the reply and its sandbox will be torn down
   (tell_replied). Either way its --max-runs slot is the next run's. The standby that
   replaces a run's is still made once the run's worker has ended (reap): made now,
   it would take the CPU that the client's end and the teardown need (two cores),
   and a run with a pause before it would wait longer, not shorter. */
static void
on_notify (struct serve *s)
{
  char msg[32], what;
  ssize_t n = recv (s->notify_fd[0], msg, sizeof msg - 1, MSG_DONTWAIT);
  int pid, i;
  if (n <= 0)
    return;
  msg[n] = '\0';
  if (sscanf (msg, "%c %d", &what, &pid) != 2 || (i = worker_index (s, pid)) < 0)
    return;
  if (what == 'S')
    {
      kept_slot_free_of (s, pid, false); /* its sandbox stays: none to reuse */
      s->sessions = xrealloc (s->sessions, (s->n_sessions + 1) * sizeof *s->sessions);
      s->sessions[s->n_sessions++] = pid;
    }
  else if (what == 'E' && s->n_ending < ENDING_PER_RUN * s->max_runs)
    s->ending[s->n_ending++] = pid;
  else
    return;
  s->workers[i] = s->workers[--s->n_workers];
  if (what == 'S')
    start_queued (s);
  else
    run_queued (s);
}

/* What a worker killed by a signal (or a server killed with SIGKILL) leaves: the state
   dir and cgroups of a container whose init died with it (sandbox_janitor.c). The
   server sweeps when it starts and when it reaps a worker that a signal ended, not
   each run: a sweep reads every container's state, and with 1,500 sessions held it
   made each new session 4x slower (33 -> 132 ms). */
static void
sweep_orphans (struct serve *s)
{
  sandbox_sweep_orphans (s->ctx);
}

static void
reap (struct serve *s, struct sbx_error *err)
{
  int st;
  pid_t pid;
  bool killed = false;
  while ((pid = waitpid (-1, &st, WNOHANG)) > 0)
    {
      /* a worker killed by a signal could not delete its container (see sweep_orphans) */
      killed |= pid != s->zygote_pid && WIFSIGNALED (st);
      kept_slot_free_of (s, pid, WIFSIGNALED (st));
      if (pid == s->zygote_pid)
        {
          s->zygote_pid = -1;
          close (s->zygote_fd);
          s->zygote_fd = -1;
          slog (s, "the warm interpreter ended (%s %d): starting another", WIFSIGNALED (st) ? "signal" : "status",
                WIFSIGNALED (st) ? WTERMSIG (st) : WEXITSTATUS (st));
          if (zygote_start (s, err) < 0)
            {
              _cleanup_free_ char *msg = sbx_error_string (err);
              slog (s, "%s", msg);
              sbx_error_clear (err);
            }
          continue;
        }
      for (unsigned i = 0; i < s->n_workers; i++)
        if (s->workers[i] == pid)
          {
            s->workers[i] = s->workers[--s->n_workers];
            if (WIFEXITED (st) && WEXITSTATUS (st) == 0)
              s->standby_failures = 0;
            break;
          }
      for (unsigned i = 0; i < s->n_standbys; i++)
        if (s->standbys[i].pid == pid)
          {
            /* ended without a client: its log line says why */
            close (s->standbys[i].ctl);
            memmove (s->standbys + i, s->standbys + i + 1, (--s->n_standbys - i) * sizeof *s->standbys);
            s->standby_failures++;
            break;
          }
      for (unsigned i = 0; i < s->n_sessions; i++)
        if (s->sessions[i] == pid)
          s->sessions[i] = s->sessions[--s->n_sessions];
      for (unsigned i = 0; i < s->n_ending; i++)
        if (s->ending[i] == pid)
          s->ending[i] = s->ending[--s->n_ending];
      for (size_t i = 0; i < s->n_retired; i++)
        if (s->retired[i] == pid)
          s->retired[i] = s->retired[--s->n_retired];
    }
  if (killed)
    sweep_orphans (s);
  start_queued (s);
}

/* Runs for those waiting, as far as --max-runs lets. */
static void
run_queued (struct serve *s)
{
  while (s->n_queue > 0 && s->n_workers < s->max_runs && s->zygote_fd >= 0)
    {
      int client = s->queue[0];
      memmove (s->queue, s->queue + 1, --s->n_queue * sizeof *s->queue);
      take_client (s, client);
    }
}

/* Runs for those waiting; the standbys made again. */
static void
start_queued (struct serve *s)
{
  run_queued (s);
  fill_standbys (s);
}

static int
listen_on (struct serve *s, struct sbx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  struct stat st;
  mode_t old;
  int fd;
  if (strlen (s->socket_path) >= sizeof addr.sun_path)
    return cli_usage_error (err, "--socket: '%s' is too long for a unix socket", s->socket_path);
  memcpy (addr.sun_path, s->socket_path, strlen (s->socket_path) + 1);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sbx_error_set (err, errno, "--socket: socket");
  /* a socket nobody listens on is a server's that died: ours to replace */
  if (lstat (s->socket_path, &st) == 0)
    {
      if (!S_ISSOCK (st.st_mode))
        {
          close (fd);
          return sbx_error_set (err, EEXIST, "--socket %s: exists and is not a socket", s->socket_path);
        }
      if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0)
        {
          close (fd);
          return sbx_error_set (err, EADDRINUSE, "--socket %s: a server is listening there", s->socket_path);
        }
      close (fd);
      unlink (s->socket_path);
      fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        return sbx_error_set (err, errno, "--socket: socket");
    }
  old = umask (0177);
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      umask (old);
      close (fd);
      return sbx_error_set (err, errno, "--socket %s: bind", s->socket_path);
    }
  umask (old);
  if (listen (fd, 128) < 0)
    {
      close (fd);
      return sbx_error_set (err, errno, "--socket %s: listen", s->socket_path);
    }
  s->listen_fd = fd;
  return 0;
}

/* SIGTERM: the workers end their runs (deleting their containers), then the rest. */
static void
shut_down (struct serve *s)
{
  int64_t give_up = monotonic_ns () + 10 * 1000000000LL;
  for (unsigned i = 0; i < s->n_queue; i++)
    close (s->queue[i]);
  s->n_queue = 0;
  close (s->listen_fd);
  unlink (s->socket_path);
  /* sessions end their cell and their sandbox on SIGTERM, as runs do */
  s->workers = xrealloc (s->workers,
                         (s->n_workers + s->n_sessions + s->n_ending + s->n_standbys + 1) * sizeof *s->workers);
  for (unsigned i = 0; i < s->n_sessions; i++)
    s->workers[s->n_workers++] = s->sessions[i];
  s->n_sessions = 0;
  for (unsigned i = 0; i < s->n_workers; i++)
    kill (s->workers[i], SIGTERM);
  /* those ending (their clients have the reply) are waited for, not sent SIGTERM:
     it would end their teardown midway, its state dir and workdir left */
  for (unsigned i = 0; i < s->n_ending; i++)
    s->workers[s->n_workers++] = s->ending[i];
  s->n_ending = 0;
  /* a standby ends at its ctl's EOF, tearing its sandbox down (state dir, temporary
     workdir), and is waited for as a worker; not sent SIGTERM: standing by, it has
     not taken it over, and would die of it with all of that left */
  for (unsigned i = 0; i < s->n_standbys; i++)
    {
      close (s->standbys[i].ctl);
      s->workers[s->n_workers++] = s->standbys[i].pid;
    }
  s->n_standbys = 0;
  while (s->n_workers > 0 && monotonic_ns () < give_up)
    {
      int st;
      pid_t pid = waitpid (-1, &st, WNOHANG);
      if (pid < 0)
        break;
      if (pid == 0)
        {
          struct timespec tick = { .tv_nsec = 20 * 1000000 };
          nanosleep (&tick, NULL);
          continue;
        }
      for (unsigned i = 0; i < s->n_workers; i++)
        if (s->workers[i] == pid)
          s->workers[i] = s->workers[--s->n_workers];
    }
  for (unsigned i = 0; i < s->n_workers; i++)
    kill (s->workers[i], SIGKILL);
  for (size_t i = 0; i < s->n_retired; i++)
    kill (s->retired[i], SIGKILL);
  zygote_stop (s);
  while (waitpid (-1, NULL, WNOHANG) > 0)
    ;
  kept_slots_remove (s);
}

/* serve's command line into S: 1 to go on, 0 after --help, -1 (ERR). */
static int
parse_command_line (struct serve *s, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  int first = cli_parse (cmd, argc, argv, serve_opt, s, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (first < argc)
    return cli_usage_error (err, "serve: unexpected argument '%s' (the program comes with each `python --connect`)",
                            argv[first]);
  if (!s->socket_path)
    return cli_usage_error (err, "serve: --socket PATH is required");
  return 1;
}

/* What the server needs before its first connection: its log, the interpreter and
   libsbx-warm.so, its tables, its signals (on *SFD), the warm interpreter, the socket
   and the sessions' directory. */
/* Our user's directories as the sandbox user's (an idmap's user namespace), made once
   for the standbys that take a --workdir of a client, who is this user (sandbox_warm's
   idmap_userns). Without it each such standby makes its own. */
static void
make_own_idmap (struct serve *s)
{
  struct sbx_error e = { 0 };
  struct oci_id_mapping uid = { .container_id = geteuid (), .host_id = s->p.host_uid, .size = 1 };
  struct oci_id_mapping gid = { .container_id = getegid (), .host_id = s->p.host_uid, .size = 1 };
  if (!s->ctx->as_root)
    return;
  s->idmap_userns = idmap_userns (&uid, 1, &gid, 1, &e);
  if (s->idmap_userns < 0)
    {
      slog (s, "no idmap of our own user's directories (%s): each standby that takes one makes its own",
            e.msg ? e.msg : "?");
      sbx_error_clear (&e);
    }
}

static int
start_server (struct serve *s, int *sfd, struct sbx_error *err)
{
  sigset_t set;
  s->log_fd = dup (2);
  s->python = s->p.python ? xstrdup (s->p.python) : sandbox_default_python (err);
  if (s->log_fd < 0 || !s->python || !(s->lib = warm_lib_find (err)) || check_host_paths (s, err) < 0)
    return -1;
  /* standbys become workers when stopping */
  s->workers = xmalloc0 ((s->max_runs + s->standby_max) * sizeof *s->workers);
  s->ending = xmalloc0 (ENDING_PER_RUN * s->max_runs * sizeof *s->ending);
  s->standbys = xmalloc0 ((s->standby_max + 1) * sizeof *s->standbys);
  s->queue = xmalloc0 ((s->queue_max + 1) * sizeof *s->queue);
  /* signals arrive on the signalfd; orphaned forks of the interpreter come to us */
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGCHLD);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_BLOCK, &set, NULL);
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  *sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (*sfd < 0)
    return sbx_error_set (err, errno, "serve: signalfd");
  sweep_orphans (s);
  kept_slots_sweep ();
  if (serve_scope_enter (s, err) < 0)
    return -1;
  kept_slots_init (s);
  if (zygote_start (s, err) < 0 || listen_on (s, err) < 0 || serve_sessions_init (s, err) < 0)
    return -1;
  make_own_idmap (s);
  slog (s, "listening on %s: %s with %s imported, up to %u runs at once, %u standing by", s->socket_path, s->python,
        s->preload ? s->preload : "nothing", s->max_runs, s->standby_max);
  return 0;
}

/* Connections, the workers' ends and the sessions' notes, until a signal (other than
   SIGCHLD) stops the server: 0, or -1 (ERR) if it could not wait. */
static int
serve_until_stopped (struct serve *s, int sfd, struct sbx_error *err)
{
  for (;;)
    {
      struct pollfd pfd[3] = { { .fd = sfd, .events = POLLIN },
                               { .fd = s->listen_fd, .events = POLLIN },
                               { .fd = s->notify_fd[0], .events = POLLIN } };
      struct signalfd_siginfo si;
      if (poll (pfd, 3, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return sbx_error_set (err, errno, "serve: poll");
        }
      if ((pfd[0].revents & POLLIN) && read (sfd, &si, sizeof si) == sizeof si)
        {
          if (si.ssi_signo == SIGCHLD)
            reap (s, err);
          else
            {
              slog (s, "signal %d: ending %u runs, then stopping (%lu runs served)", (int) si.ssi_signo, s->n_workers,
                    s->runs);
              shut_down (s);
              s->listen_fd = -1;
              return 0;
            }
        }
      if (pfd[2].revents & POLLIN)
        on_notify (s);
      if (pfd[1].revents & POLLIN)
        on_connection (s);
    }
}

/* Whatever the server still holds, let go. */
static void
close_server (struct serve *s, int sfd)
{
  if (s->listen_fd >= 0)
    {
      close (s->listen_fd);
      unlink (s->socket_path);
    }
  zygote_stop (s);
  serve_sessions_remove_dir (s);
  for (int i = 0; i < 2; i++)
    if (s->notify_fd[i] >= 0)
      close (s->notify_fd[i]);
  if (sfd >= 0)
    close (sfd);
  for (size_t i = 0; i < s->n_defaults; i++)
    free (s->defaults[i]);
  free (s->defaults);
  free (s->workers);
  free (s->standbys);
  free (s->kept_by);
  free (s->kept_prefix);
  free (s->cgroup_parent);
  free (s->ending);
  free (s->queue);
  free (s->retired);
  free (s->sessions);
  free (s->session_dir);
  free (s->python);
  free (s->lib);
  sandbox_policy_free (&s->p);
}

static int
run_serve (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct serve s = { .ctx = ctx, .listen_fd = -1, .zygote_fd = -1, .idmap_userns = -1, .zygote_pid = -1, .queue_max = 64, .recycle = 1000,
                     .standby_max = 2, .ctl_fd = -1, .session_idle = 600, .max_sessions = 1024, .notify_fd = { -1, -1 } };
  int sfd = -1, parsed, ret = -1;
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);

  s.max_runs = cpus > 0 ? (unsigned) cpus * 2 : 2;
  sandbox_policy_defaults (&s.p);
  parsed = parse_command_line (&s, cmd, argc, argv, err);
  if (parsed == 0)
    return 0;
  if (parsed > 0 && start_server (&s, &sfd, err) == 0)
    {
      fill_standbys (&s);
      ret = serve_until_stopped (&s, sfd, err);
    }
  close_server (&s, sfd);
  return ret;
}

const struct command cmd_serve = {
  .name = "serve",
  .args = "--socket PATH [--preload MOD,...] [OPTIONS]",
  .summary = "keep a warm Python interpreter and run each `python --connect` in a sandbox forked from it",
  .opts = serve_opts,
  .run = run_serve,
  .permute = false,
};
