/* The `python` command's entry, and its client of `sbx-oci serve`.
 *
 * Without --connect, `sbx-oci python` is the one-shot run (runtime/sandbox/python.c).
 * With --connect SOCKET among its options it is a client: it sends its command line,
 * its stdio and its cwd (wire.h), and exits with the status the server's run reports.
 * Everything else (option checks, the workdir, --result FILE, the output and its caps)
 * is done by the server's worker as this user, from this cwd, on these fds: what a
 * one-shot `sbx-oci python` would have done here. The choice is made here, above
 * sandbox/, which never calls the server's side. */
#include "build-config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/base/cli.h"
#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/sandbox/sandbox_result.h"
#include "runtime/serve/client_relay.h"
#include "runtime/serve/commands.h"
#include "runtime/serve/wire.h"

/* `sbx-oci python --connect SOCKET ...`: what the client needs of its command line. */
struct client
{
  const char *socket;
  char **argv; /* python's command line without `python` and --connect */
  size_t argc;
  const char *result, *id; /* --result, --id: for the result of a run refused */
  const char *session;     /* --session: its calls go to SOCKET.sessions/NAME once it exists */
  bool die_with_parent;    /* --die-with-parent: end with PARENT, the process that started us */
  pid_t parent;
};

/* ^C while the run goes on: the first asks the server to interrupt the program
   (KeyboardInterrupt in Python, which may end the program or not); the second ends
   the client, and so the run (the server kills it on the hangup). That is a
   terminal's user's way out (the terminal's SIGINT is the kernel's, SI_KERNEL): a
   SIGINT sent by a program (kill(2): a Jupyter client interrupting a kernel, cell
   after cell) always interrupts, as a one-shot run passes on every one. */
static volatile int interrupt_sock = -1;
static volatile sig_atomic_t interrupts;

static void
on_interrupt (int sig, siginfo_t *si, void *uc)
{
  (void) uc;
  if ((interrupts++ == 0 || si->si_code != SI_KERNEL) && interrupt_sock >= 0)
    {
      connect_send_interrupt (interrupt_sock);
      return;
    }
  signal (sig, SIG_DFL);
  raise (sig);
}

/* From now on ^C interrupts the run on SOCK (its request is sent). */
static void
arm_interrupt (int sock)
{
  struct sigaction sa = { .sa_sigaction = on_interrupt, .sa_flags = SA_SIGINFO }; /* no SA_RESTART: the wait sees EINTR */
  interrupt_sock = sock;
  interrupts = 0;
  sigaction (SIGINT, &sa, NULL);
}

static int
connect_to (const char *path, struct sbx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;
  if (strlen (path) >= sizeof addr.sun_path)
    return cli_usage_error (err, "--connect: '%s' is too long for a unix socket", path);
  memcpy (addr.sun_path, path, strlen (path) + 1);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sbx_error_set (err, errno, "--connect: socket");
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      sbx_error_set (err, errno, "--connect %s: is `sbx-oci serve --socket %s` running?", path, path);
      close (fd);
      return -1;
    }
  return fd;
}

/* A run the server never took (unreachable, refused): the result a one-shot run
   writes when its sandbox could not be set up, with error set and no exit code. */
static void
write_refused_result (const char *result, const char *id, const struct sbx_error *why)
{
  _cleanup_free_ char *msg = sbx_error_string (why);
  struct sandbox_result res = { .id = id ? id : "", .error = msg ? msg : "not run", .started = false };
  size_t len = 0;
  _cleanup_free_ char *json = sandbox_result_json (&res, &len);
  if (!json)
    return;
  if (strcmp (result, "-") == 0)
    {
      fwrite (json, 1, len, stdout);
      fputc ('\n', stdout);
      fflush (stdout);
    }
  else
    {
      const char *slash = strrchr (result, '/');
      _cleanup_free_ char *dir = slash ? strndup (result, (size_t) (slash - result)) : xstrdup (".");
      _cleanup_close_ int dirfd = open (*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      struct sbx_error e = { 0 };
      if (dirfd < 0 || fs_write_atomic (dirfd, slash ? slash + 1 : result, json, len, 0644, &e) < 0)
        sbx_error_clear (&e);
    }
}

/* A session that exists takes its calls itself, beside the server's socket
   (session_route.c): no worker of the server in between. 1: it took the call (*SOCK,
   HEAD the head of its reply); 0: no such session (the server's way); -1: it ended
   the call without a status (ERR; *SOCK still open). */
static int
call_session (const struct client *c, struct client_relay *relay, char head[8], int *sock, struct sbx_error *err)
{
  _cleanup_free_ char *at = xasprintf ("%s" SERVE_SESSIONS_SUFFIX "/%s", c->socket, c->session);
  struct sbx_error ignored = { 0 };
  int n = -2; /* not sent */
  *sock = connect_to (at, &ignored);
  sbx_error_clear (&ignored);
  if (*sock < 0)
    return 0;
  /* one that was ending as we came resets the connection it never took: nothing
     ran, so the server's way (which begins the session again) */
  if (connect_send_request (*sock, relay->stdio, (int) c->argc, c->argv, &ignored) == 0)
    {
      arm_interrupt (*sock);
      errno = 0;
      n = client_relay_until_reply (relay, *sock, head, -1);
    }
  if (n == 0)
    {
      sbx_error_clear (&ignored);
      return 1;
    }
  if (relay->parent_gone)
    return sbx_error_set (err, 0, "the process that started this one has exited: the cell was ended "
                                  "(--die-with-parent)");
  if (n == -2 || errno == ECONNRESET)
    {
      interrupt_sock = -1; /* (a ^C now must not write to whatever gets its number) */
      close (*sock);
      *sock = -1;
      sbx_error_clear (&ignored);
      return 0;
    }
  return sbx_error_set (err, 0, "--connect %s: session %s ended the call without a status", c->socket, c->session);
}

/* The call to the server's socket (*SOCK), and the head of its reply in HEAD. */
static int
call_server (const struct client *c, struct client_relay *relay, char head[8], int *sock, struct sbx_error *err)
{
  if ((*sock = connect_to (c->socket, err)) < 0)
    return -1;
  if (connect_send_request (*sock, relay->stdio, (int) c->argc, c->argv, err) < 0)
    {
      /* a server that refuses (busy, another user's) says why and hangs up before
         reading: its reply is the better message */
      if (connect_read_full (*sock, head, 8, 1000) == 0 && memcmp (head, "SBXE", 4) == 0)
        sbx_error_clear (err);
      else
        return -1;
    }
  /* the run's output goes to our stdout and stderr (relayed if they are pipes);
     here only the end */
  else if ((arm_interrupt (*sock), client_relay_until_reply (relay, *sock, head, -1)) < 0)
    {
      if (relay->parent_gone)
        return sbx_error_set (err, 0, "the process that started this one has exited: the run was ended "
                                      "(--die-with-parent)");
      return sbx_error_set (err, 0, "--connect %s: the server ended the run without a status", c->socket);
    }
  return 0;
}

/* The reply whose head is HEAD: the run's status, or -1 (ERR: why it did not run). */
static int
reply_status (const struct client *c, int sock, const char head[8], struct sbx_error *err)
{
  if (memcmp (head, "SBXX", 4) == 0)
    {
      int32_t st;
      memcpy (&st, head + 4, 4);
      return st;
    }
  if (memcmp (head, "SBXE", 4) == 0)
    {
      uint32_t len;
      char msg[512] = "";
      memcpy (&len, head + 4, 4);
      if (len < sizeof msg && connect_read_full (sock, msg, len, 5000) == 0)
        msg[len] = '\0';
      sbx_error_set (err, 0, "--connect %s: %s", c->socket, msg);
    }
  else
    sbx_error_set (err, EPROTO, "--connect %s: not a reply of this version of sbx-oci", c->socket);
  err->exit_hint = SBX_EXIT_SETUP;
  return -1;
}

/* The run through the server: its status, or -1 (ERR; with --result, the result of a
   run that never started written). */
static int
run_client (const struct client *c, struct sbx_error *err)
{
  char head[8];
  int sock = -1, status = -1, direct = 0;
  struct client_relay relay;
  if (client_relay_open (&relay, err) < 0)
    direct = -1;
  else if (c->die_with_parent && (relay.parent_pidfd = python_parent_pidfd (c->parent, err)) < 0)
    direct = -1;
  else if (c->session && !strchr (c->session, '/') && strcmp (c->session, "..") && strcmp (c->session, "."))
    direct = call_session (c, &relay, head, &sock, err);
  if (direct < 0 || (!direct && call_server (c, &relay, head, &sock, err) < 0))
    err->exit_hint = SBX_EXIT_SETUP;
  else
    status = reply_status (c, sock, head, err);
  client_relay_close (&relay);
  if (sock >= 0)
    close (sock);
  if (status < 0 && c->result)
    write_refused_result (c->result, c->id, err);
  return status;
}

/* --connect SOCKET among python's options (before argv[split], where the program
   begins): the run goes to `sbx-oci serve` with the rest of the command line;
   everything else is the server's to check. */
static int
run_connected (int argc, char **argv, int split, struct sbx_error *err)
{
  int ret;
  struct client c = { .argv = xmalloc0 ((size_t) argc * sizeof (char *)) };
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
      bool opt = i < split;
      if (opt && strcmp (a, "--connect") == 0 && v)
        {
          c.socket = v;
          i++;
          continue;
        }
      if (opt && strncmp (a, "--connect=", 10) == 0)
        {
          c.socket = a + 10;
          continue;
        }
      if (opt && v && strcmp (a, "--result") == 0)
        c.result = v;
      else if (opt && strncmp (a, "--result=", 9) == 0)
        c.result = a + 9;
      else if (opt && v && strcmp (a, "--id") == 0)
        c.id = v;
      else if (opt && strncmp (a, "--id=", 5) == 0)
        c.id = a + 5;
      else if (opt && v && strcmp (a, "--session") == 0)
        c.session = v;
      else if (opt && strncmp (a, "--session=", 10) == 0)
        c.session = a + 10;
      else if (opt && strcmp (a, "--die-with-parent") == 0)
        {
          c.die_with_parent = true;
          c.parent = getppid ();
        }
      c.argv[c.argc++] = argv[i];
    }
  if (!c.socket || !*c.socket)
    ret = cli_usage_error (err, "--connect: needs the server's SOCKET");
  else
    ret = run_client (&c, err);
  free (c.argv);
  return ret;
}

static int
run_python (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  for (int i = 1; i < python_program_start (argc, argv); i++)
    if (strcmp (argv[i], "--connect") == 0 || strncmp (argv[i], "--connect=", 10) == 0)
      return run_connected (argc, argv, python_program_start (argc, argv), err);
  return python_command (ctx, cmd, argc, argv, NULL, err);
}

const struct command cmd_python = {
  .name = "python",
  .args = "[OPTIONS] (-c CODE | -m MODULE | SCRIPT | -) [ARGS...]",
  .summary = "run untrusted Python once in a sandbox over the host's interpreter, and report how it ended",
  .opts = python_cli_opts,
  .run = run_python,
  .permute = false,
};
