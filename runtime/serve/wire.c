/* The wire between `sbx-oci python --connect SOCKET ...` (client.c) and `sbx-oci
 * serve` (wire.h): a request sent and read, a reply written. A session's worker
 * (cells.c) reads its calls, and a server's worker passes a call on to it
 * (session_route.c), in the same words. */
#include "build-config.h"
#include "runtime/serve/wire.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/base/util.h"

int
connect_read_full (int fd, void *buf, size_t len, int timeout_ms)
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

/* ------------------------------------------------------- the worker's side */

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
  if (connect_read_full (sock, r->buf, head[3], 10000) < 0)
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

bool
connect_is_interrupt (const char *buf, size_t len)
{
  /* what a client sends after its request is only this word, maybe split by reads:
     any part of it asks */
  for (size_t i = 0; i < len; i++)
    if (buf[i] == 'S' || buf[i] == 'B' || buf[i] == 'X' || buf[i] == 'I')
      return true;
  return false;
}

void
connect_send_interrupt (int sock)
{
  (void) !send (sock, CONNECT_INTERRUPT, 4, MSG_NOSIGNAL | MSG_DONTWAIT);
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

/* ------------------------------------------------------- the client's side */

extern char **environ;

int
connect_send_request (int sock, const int stdio[3], int argc, char **argv, struct sbx_error *err)
{
  uint32_t head[4];
  size_t len = 0, off = 0, envc = 0;
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fds[4] = { stdio[0], stdio[1], stdio[2], cwd };
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
