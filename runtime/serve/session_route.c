/* Sessions through `sbx-oci serve` (cells.c runs them): which worker a call
 * of `--session NAME` goes to.
 *
 * Each session is one worker of the server, listening on SOCKET.sessions/NAME beside
 * the server's socket (a directory of the server's, 0700: sandboxes do not see it,
 * other users cannot reach it, and the session checks its peers' uid too). The client
 * (client.c) sends a call there itself once the session exists. A worker of
 * the server whose request names a session (its first call, or a client that could
 * not reach it) connects there and passes the call on as its client would have sent
 * it (stdio, cwd, environment, command line), then relays the reply; its client
 * hanging up ends the cell. If nobody listens, the worker becomes the session: it
 * tells the server (which then counts it as a session, not as a run), and its first
 * call is the session's first cell. */
#include "build-config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/serve/server.h"
#include "runtime/serve/warm_run.h"

/* A name that is also a file name: letters, digits, '.', '_', '-' (not first). */
static bool
valid_name (const char *n)
{
  size_t len = strlen (n);
  if (len == 0 || len > 64 || n[0] == '.' || n[0] == '-')
    return false;
  for (const char *c = n; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.'
          || *c == '_' || *c == '-'))
      return false;
  return true;
}

/* Whether the options of a request (before its program) name a session. */
static bool
names_session (char **argv, size_t argc)
{
  char **full = xmalloc0 ((argc + 2) * sizeof *full);
  int end;
  bool yes = false;
  full[0] = "python";
  memcpy (full + 1, argv, argc * sizeof *argv);
  end = python_program_start ((int) argc + 1, full);
  for (int i = 1; i < end; i++)
    yes |= strcmp (full[i], "--session") == 0 || strncmp (full[i], "--session=", 10) == 0
           || strcmp (full[i], "--end-session") == 0;
  free (full);
  return yes;
}

/* The sessions held now: their sockets in the server's sessions directory. Counted
   by each worker that would begin one, so that workers starting at once may go a
   few past --max-sessions, never more than the runs at once. */
static unsigned
sessions_held (struct serve *s)
{
  DIR *d = opendir (s->session_dir);
  struct dirent *e;
  unsigned n = 0;
  if (!d)
    return 0;
  while ((e = readdir (d)))
    n += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
  closedir (d);
  return n;
}

/* A new session beyond --max-sessions: the client is told why as a server's refusal
   (it exits 125, its --result says so), and the log says so; -1: the client has it. */
static int
refuse_session (struct serve *s, int client, const char *name)
{
  char why[256];
  snprintf (why, sizeof why,
            "--session %s: the server holds %u sessions, as many as it may (serve --max-sessions); "
            "end one (--end-session) or let one idle out",
            name, s->max_sessions);
  slog (s, "refused a session: %s", why);
  connect_reply_error (client, why);
  return -1;
}

static int
session_address (struct serve *s, const char *name, struct sockaddr_un *addr, struct sbx_error *err)
{
  int n;
  memset (addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  n = snprintf (addr->sun_path, sizeof addr->sun_path, "%s/%s", s->session_dir, name);
  if (n < 0 || (size_t) n >= sizeof addr->sun_path)
    return sbx_error_set (err, ENAMETOOLONG, "--session %s: the server's state root is too long for its socket",
                          name);
  return 0;
}

/* The call to the session's worker, and its reply back: -1 (the client has it), or
   the status of a call that could not be passed on. */
static int
pass_on (int sock, struct serve *s, int client)
{
  struct sbx_error err = { 0 };
  char buf[1024];
  static const int stdio[3] = { 0, 1, 2 };
  if (connect_send_request (sock, stdio, (int) s->req.argc, s->req.argv, &err) < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      sbx_log_write (&s->ctx->log, SBX_LOG_ERROR, "--session: %s", msg ? msg : "the session's worker is gone");
      return SBX_EXIT_SETUP;
    }
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = sock, .events = POLLIN }, { .fd = client, .events = POLLIN } };
      ssize_t n;
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      if (pfd[1].revents)
        {
          n = recv (client, buf, sizeof buf, MSG_DONTWAIT);
          if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return -1; /* hung up: closing ours ends the cell */
        }
      if (pfd[0].revents)
        {
          n = read (sock, buf, sizeof buf);
          if (n <= 0)
            return -1;
          (void) !send (client, buf, (size_t) n, MSG_NOSIGNAL);
        }
    }
}

/* This worker is the session NAME from now on (LISTEN_FD bound): its sandbox, made
   with the first call's options, and the cells until it ends. */
static int
become_session (struct serve *s, int client, int listen_fd, const char *path, const char *name,
                struct session_opts *o)
{
  struct sbx_error err = { 0 };
  struct sandbox_session sess = { .name = name, .listen_fd = listen_fd, .path = path, .idle_s = s->session_idle,
                                  .sandbox_opts = o->sandbox, .n_sandbox_opts = o->n_sandbox,
                                  .first_argv = s->req.argv, .first_argc = s->req.argc, .log_fd = s->log_fd };
  struct sandbox_warm warm = { .zygote_fd = s->zygote_fd, .client_fd = client, .python = s->python,
                               .idmap_userns = s->idmap_userns, .idmap_owner = geteuid (), .idmap_group = getegid (),
                               .session = &sess };
  char **args = xmalloc0 ((o->n_sandbox + 3) * sizeof *args), msg[32];
  _cleanup_free_ char **argv = NULL;
  int argc, status;
  for (size_t i = 0; i < o->n_sandbox; i++)
    args[i] = o->sandbox[i];
  args[o->n_sandbox] = "-c";
  args[o->n_sandbox + 1] = "pass"; /* its cells come on the channel */
  argv = run_argv (s, args, o->n_sandbox + 2, &argc);
  free (args);
  sess.null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  /* a session, not a run: the server gives its --max-runs slot to the next */
  snprintf (msg, sizeof msg, "S %d", (int) getpid ());
  (void) !send (s->notify_fd[1], msg, strlen (msg), MSG_NOSIGNAL);
  slog (s, "session %s began", name);
  status = warm_run_python (s->ctx, argc, argv, &warm, &err);
  if (sess.listen_fd >= 0)
    {
      /* it never served (cells.c closes it once it has) */
      unlink (path);
      close (sess.listen_fd);
    }
  if (!warm.replied)
    {
      /* its sandbox could not be made: the first call hears why */
      _cleanup_free_ char *m = sbx_error_string (&err);
      sbx_log_write (&s->ctx->log, SBX_LOG_ERROR, "%s", m ? m : "unknown error");
      status = err.exit_hint ? err.exit_hint : 1;
      sbx_error_clear (&err);
    }
  else
    status = -1;
  slog (s, "session %s ended", name);
  if (sess.null_fd >= 0)
    close (sess.null_fd);
  return status;
}

int
serve_session (struct serve *s, int client)
{
  struct sbx_error err = { 0 };
  struct session_opts o = { 0 };
  struct sockaddr_un addr;
  int status = SBX_EXIT_SETUP;
  if (!names_session (s->req.argv, s->req.argc))
    return SERVE_NOT_A_SESSION;
  if (session_options ((int) s->req.argc, s->req.argv, &o, &err) < 0)
    {
      err.exit_hint = SBX_EXIT_USAGE;
      goto fail;
    }
  if (!o.name)
    {
      cli_usage_error (&err, "--end-session: give the session: --session NAME");
      goto fail;
    }
  if (!valid_name (o.name))
    {
      cli_usage_error (&err, "--session: '%s' is not a name (letters, digits, '.', '_', '-'; 64 at most)", o.name);
      goto fail;
    }
  if (session_address (s, o.name, &addr, &err) < 0)
    goto fail;
  for (int tries = 0; tries < 3; tries++)
    {
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        {
          sbx_error_set (&err, errno, "--session: socket");
          goto fail;
        }
      if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0)
        {
          status = pass_on (fd, s, client);
          close (fd);
          session_options_free (&o);
          return status;
        }
      if (o.end)
        {
          close (fd);
          sbx_error_set (&err, 0, "--session %s: no such session (it ended, or never began)", o.name);
          goto fail;
        }
      /* nobody there: this worker is the session (a socket left by one killed is
         replaced; one that another worker bound just now is connected to), unless
         the server holds as many as it may */
      if (tries == 0 && sessions_held (s) >= s->max_sessions)
        {
          close (fd);
          status = refuse_session (s, client, o.name);
          session_options_free (&o);
          return status;
        }
      if (errno == ECONNREFUSED)
        unlink (addr.sun_path);
      if (bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0 && listen (fd, 16) == 0)
        {
          status = become_session (s, client, fd, addr.sun_path, o.name, &o);
          session_options_free (&o);
          return status;
        }
      close (fd);
    }
  sbx_error_set (&err, 0, "--session %s: its socket could not be reached or made", o.name);
fail:
  {
    _cleanup_free_ char *msg = sbx_error_string (&err);
    sbx_log_write (&s->ctx->log, SBX_LOG_ERROR, "%s", msg ? msg : "--session failed");
    if (err.exit_hint)
      status = err.exit_hint;
  }
  session_options_free (&o);
  return status;
}

/* ---------------------------------------------------------- the server's */

/* Every file in DIR (sockets), then DIR. */
static void
remove_dir (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  if (d)
    {
      while ((e = readdir (d)))
        if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
          (void) unlinkat (dirfd (d), e->d_name, 0);
      closedir (d);
    }
  (void) rmdir (dir);
}

int
serve_sessions_init (struct serve *s, struct sbx_error *err)
{
  struct stat st;
  s->session_dir = xasprintf ("%s" SERVE_SESSIONS_SUFFIX, s->socket_path);
  /* one a killed server left at this socket: its sessions are gone */
  if (lstat (s->session_dir, &st) == 0)
    {
      if (!S_ISDIR (st.st_mode))
        return sbx_error_set (err, EEXIST, "serve: %s exists and is not a directory", s->session_dir);
      remove_dir (s->session_dir);
    }
  if (mkdir (s->session_dir, 0700) < 0)
    return sbx_error_set (err, errno, "serve: mkdir %s", s->session_dir);
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s->notify_fd) < 0)
    return sbx_error_set (err, errno, "serve: socketpair");
  return 0;
}

void
serve_sessions_remove_dir (struct serve *s)
{
  if (s->session_dir)
    remove_dir (s->session_dir);
}
