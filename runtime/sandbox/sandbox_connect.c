/* The wire between `sbx-oci python --connect SOCKET ...` and `sbx-oci serve`
 * (sandbox_connect.h), and the client: it sends its command line, its stdio and its
 * cwd, and exits with the status the server's run reports. Everything else (option
 * checks, the workdir, --result FILE, the output and its caps) is done by the
 * server's worker as this user, from this cwd, on these fds: what a one-shot
 * `sbx-oci python` would have done here. */
#include "build-config.h"
#include "runtime/sandbox/sandbox_connect.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/base/cli.h"
#include "runtime/base/util.h"
#include "runtime/fs.h"
#include "runtime/sandbox/commands.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/sandbox/sandbox_result.h"

/* ------------------------------------------------------------ the server */

static int
read_full (int fd, void *buf, size_t len, int timeout_ms)
{
  size_t done = 0;
  while (done < len)
    {
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      ssize_t n;
      int r = poll (&pfd, 1, timeout_ms);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return -1;
      n = read (fd, (char *) buf + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      done += (size_t) n;
    }
  return 0;
}

int
connect_request_read (int sock, struct connect_request *r, struct sbx_error *err)
{
  uint32_t head[4];
  char cbuf[CMSG_SPACE (4 * sizeof (int))];
  struct iovec iov = { .iov_base = head, .iov_len = sizeof head };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *cm;
  struct pollfd pfd = { .fd = sock, .events = POLLIN };
  ssize_t n;
  size_t nfds = 0;
  for (int i = 0; i < 4; i++)
    r->fds[i] = -1;
  if (poll (&pfd, 1, 10000) <= 0)
    return sbx_error_set (err, ETIMEDOUT, "no request within 10 s");
  n = recvmsg (sock, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  for (cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      {
        nfds = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        memcpy (r->fds, CMSG_DATA (cm), (nfds > 4 ? 4 : nfds) * sizeof (int));
      }
  if (n != (ssize_t) sizeof head || memcmp (head, "SBX1", 4) != 0 || nfds != 4 || (mh.msg_flags & MSG_CTRUNC))
    return sbx_error_set (err, EPROTO, "not a request of this version of sbx-oci");
  if (head[3] > CONNECT_MAX_ARGV || (uint64_t) head[1] + head[2] > head[3])
    return sbx_error_set (err, E2BIG, "a command line and environment of %u bytes", head[3]);
  r->buf = xmalloc0 ((size_t) head[3] + 1);
  if (read_full (sock, r->buf, head[3], 10000) < 0)
    return sbx_error_set (err, EPROTO, "the command line was cut short");
  r->argv = xmalloc0 (((size_t) head[1] + 1) * sizeof *r->argv);
  r->env = xmalloc0 (((size_t) head[2] + 1) * sizeof *r->env);
  {
    size_t off = 0;
    for (; off < head[3] && r->argc < head[1]; r->argc++)
      {
        r->argv[r->argc] = r->buf + off;
        off += strlen (r->buf + off) + 1;
      }
    for (; off < head[3] && r->envc < head[2]; r->envc++)
      {
        r->env[r->envc] = r->buf + off;
        off += strlen (r->buf + off) + 1;
      }
  }
  if (r->argc != head[1] || r->envc != head[2] || (head[3] && r->buf[head[3] - 1] != '\0'))
    return sbx_error_set (err, EPROTO, "a malformed command line");
  return 0;
}

void
connect_request_free (struct connect_request *r)
{
  for (int i = 0; i < 4; i++)
    if (r->fds[i] >= 0)
      close (r->fds[i]);
  free (r->argv);
  free (r->env);
  free (r->buf);
}

void
connect_reply_status (int sock, int status)
{
  char msg[8];
  int32_t st = status;
  memcpy (msg, "SBXX", 4);
  memcpy (msg + 4, &st, 4);
  (void) !send (sock, msg, sizeof msg, MSG_NOSIGNAL);
}

void
connect_reply_error (int sock, const char *text)
{
  uint32_t len = (uint32_t) strlen (text);
  char *msg = xmalloc0 (8 + len);
  memcpy (msg, "SBXE", 4);
  memcpy (msg + 4, &len, 4);
  memcpy (msg + 8, text, len);
  (void) !send (sock, msg, 8 + len, MSG_NOSIGNAL);
  free (msg);
}

/* ------------------------------------------------------------ the client */

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

extern char **environ;

int
connect_send_request (int sock, int argc, char **argv, struct sbx_error *err)
{
  uint32_t head[4];
  size_t len = 0, off = 0, envc = 0;
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fds[4] = { 0, 1, 2, cwd };
  if (cwd < 0)
    return sbx_error_set (err, errno, "--connect: open the current directory");
  for (int i = 0; i < argc; i++)
    len += strlen (argv[i]) + 1;
  for (char **e = environ; e && *e; e++, envc++)
    len += strlen (*e) + 1;
  if (len > CONNECT_MAX_ARGV)
    return sbx_error_set (err, E2BIG, "--connect: the command line is longer than %u bytes", CONNECT_MAX_ARGV);
  buf = xmalloc0 (len + 1);
  for (int i = 0; i < argc; i++)
    {
      memcpy (buf + off, argv[i], strlen (argv[i]) + 1);
      off += strlen (argv[i]) + 1;
    }
  for (char **e = environ; e && *e; e++)
    {
      memcpy (buf + off, *e, strlen (*e) + 1);
      off += strlen (*e) + 1;
    }
  memcpy (head, "SBX1", 4);
  head[1] = (uint32_t) argc;
  head[2] = (uint32_t) envc;
  head[3] = (uint32_t) len;
  if (fd_send_with_fds (sock, head, sizeof head, fds, ARRAY_SIZE (fds)) != (ssize_t) sizeof head)
    return sbx_error_set (err, errno, "--connect: send the request");
  for (off = 0; off < len;)
    {
      ssize_t n = send (sock, buf + off, len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return sbx_error_set (err, errno, "--connect: send the command line");
      off += (size_t) n;
    }
  return 0;
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

int
sandbox_connect_run (const struct sandbox_connect *c, struct sbx_error *err)
{
  const char *path = c->socket;
  char head[8];
  int sock = -1, status = -1;
  bool direct = false;
  /* a session that exists takes its calls itself, beside the server's socket
     (serve_session.c): no worker of the server in between */
  if (c->session && !strchr (c->session, '/') && strcmp (c->session, "..") && strcmp (c->session, "."))
    {
      _cleanup_free_ char *at = xasprintf ("%s" SERVE_SESSIONS_SUFFIX "/%s", c->socket, c->session);
      struct sbx_error ignored = { 0 };
      sock = connect_to (at, &ignored);
      sbx_error_clear (&ignored);
      if (sock >= 0)
        {
          /* one that was ending as we came resets the connection it never took:
             nothing ran, so the server's way (which begins the session again) */
          ssize_t n = -2; /* not sent */
          if (connect_send_request (sock, (int) c->argc, c->argv, &ignored) == 0)
            do
              n = recv (sock, head, sizeof head, MSG_WAITALL);
            while (n < 0 && errno == EINTR);
          if (n == (ssize_t) sizeof head)
            direct = true;
          else if (n == -2 || (n < 0 && errno == ECONNRESET))
            {
              close (sock);
              sock = -1;
            }
          else
            {
              sbx_error_set (err, 0, "--connect %s: session %s ended the call without a status", path, c->session);
              err->exit_hint = SBX_EXIT_SETUP;
              goto out;
            }
          sbx_error_clear (&ignored);
        }
    }
  if (!direct && (sock = connect_to (path, err)) < 0)
    {
      err->exit_hint = SBX_EXIT_SETUP;
      goto out;
    }
  if (direct)
    ; /* sent, and the end read */
  else if (connect_send_request (sock, (int) c->argc, c->argv, err) < 0)
    {
      /* a server that refuses (busy, another user's) says why and hangs up before
         reading: its reply is the better message */
      if (read_full (sock, head, sizeof head, 1000) == 0 && memcmp (head, "SBXE", 4) == 0)
        sbx_error_clear (err);
      else
        {
          err->exit_hint = SBX_EXIT_SETUP;
          goto out;
        }
    }
  /* the run's output goes straight to our stdout and stderr; here only the end */
  else if (read_full (sock, head, sizeof head, -1) < 0)
    {
      sbx_error_set (err, 0, "--connect %s: the server ended the run without a status", path);
      err->exit_hint = SBX_EXIT_SETUP;
      goto out;
    }
  if (memcmp (head, "SBXX", 4) == 0)
    {
      int32_t st;
      memcpy (&st, head + 4, 4);
      status = st;
    }
  else if (memcmp (head, "SBXE", 4) == 0)
    {
      uint32_t len;
      char msg[512] = "";
      memcpy (&len, head + 4, 4);
      if (len < sizeof msg && read_full (sock, msg, len, 5000) == 0)
        msg[len] = '\0';
      sbx_error_set (err, 0, "--connect %s: %s", path, msg);
      err->exit_hint = SBX_EXIT_SETUP;
    }
  else
    {
      sbx_error_set (err, EPROTO, "--connect %s: not a reply of this version of sbx-oci", path);
      err->exit_hint = SBX_EXIT_SETUP;
    }
out:
  if (sock >= 0)
    close (sock);
  if (status < 0 && c->result)
    write_refused_result (c->result, c->id, err);
  return status;
}

/* ------------------------------------------------------------ the client */

/* --connect SOCKET among python's options (before argv[split], where the program
   begins): the run goes to `sbx-oci serve` with the rest of the command line;
   everything else is the server's to check. */
int
sandbox_connect_args (int argc, char **argv, int split, struct sbx_error *err)
{
  int ret;
  struct sandbox_connect c = { .argv = xmalloc0 ((size_t) argc * sizeof (char *)) };
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
      c.argv[c.argc++] = argv[i];
    }
  if (!c.socket || !*c.socket)
    ret = cli_usage_error (err, "--connect: needs the server's SOCKET");
  else
    ret = sandbox_connect_run (&c, err);
  free (c.argv);
  return ret;
}
