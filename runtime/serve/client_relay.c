/* `sbx-oci python --connect`'s stdout and stderr, relayed when they are pipes.
 *
 * The server hands the client's stdio to the program in the sandbox, and replies as
 * soon as the program ends, before the sandbox's teardown (warm_run.c). A reader of
 * the client's stdout pipe (a shell's $(...), Node's child_process, Python's
 * subprocess with PIPE) waits for its EOF, and while the client's own pipe is in the
 * sandbox that EOF only comes with the teardown: a few ms after the client has its
 * answer. So a pipe or socket is not passed on: the program gets a pipe of ours, and
 * what comes on it is copied out until the reply, then what the pipe still holds
 * (the reply follows the program's last write, so that is all of it). The client's
 * stdout then ends when the client does. A tty or a file is passed as it is (the
 * program sees the tty; a file has no EOF to wait for), and so is stdin. */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/serve/client_relay.h"

/* Whether FD's readers would wait for an EOF: a pipe or a socket. */
static bool
waits_for_eof (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 && (S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode));
}

int
client_relay_open (struct client_relay *r, struct sbx_error *err)
{
  for (int fd = 0; fd <= 2; fd++)
    {
      r->stdio[fd] = fd;
      r->read_end[fd] = -1;
    }
  r->parent_pidfd = -1;
  r->parent_gone = false;
  for (int fd = 1; fd <= 2; fd++)
    {
      int p[2];
      if (!waits_for_eof (fd))
        continue;
      if (pipe2 (p, O_CLOEXEC) < 0)
        {
          client_relay_close (r);
          return sbx_error_set (err, errno, "--connect: a pipe for the output");
        }
      r->read_end[fd] = p[0];
      r->stdio[fd] = p[1];
    }
  /* a reader of ours that went away: the write fails (EPIPE), and the relay of that
     stream stops, so the program's next write fails as it would have */
  signal (SIGPIPE, SIG_IGN);
  return 0;
}

static void
close_write_ends (struct client_relay *r)
{
  for (int fd = 1; fd <= 2; fd++)
    if (r->stdio[fd] != fd)
      {
        close (r->stdio[fd]);
        r->stdio[fd] = fd;
      }
}

/* LEN bytes of BUF to FD (which may be non-blocking: another's pipe); false if its
   reader is gone. */
static bool
write_out (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        {
          struct pollfd pfd = { .fd = fd, .events = POLLOUT };
          if (errno == EAGAIN)
            poll (&pfd, 1, -1);
          continue;
        }
      if (n <= 0)
        return false;
      buf += n;
      len -= (size_t) n;
    }
  return true;
}

/* One read of stream FD copied out: 1 copied, 0 nothing there now, -1 the stream
   ended (at its end, or its reader gone: our end is closed). */
static int
copy_chunk (struct client_relay *r, int fd)
{
  char buf[65536];
  ssize_t n = read (r->read_end[fd], buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (n > 0 && write_out (fd, buf, (size_t) n))
    return 1;
  close (r->read_end[fd]);
  r->read_end[fd] = -1;
  return -1;
}

/* What the relayed pipes hold now, copied out without waiting for more. */
static void
drain (struct client_relay *r)
{
  for (int fd = 1; fd <= 2; fd++)
    if (r->read_end[fd] >= 0)
      {
        fcntl (r->read_end[fd], F_SETFL, fcntl (r->read_end[fd], F_GETFL) | O_NONBLOCK);
        while (r->read_end[fd] >= 0 && copy_chunk (r, fd) > 0)
          ;
      }
}

int
client_relay_until_reply (struct client_relay *r, int sock, char head[8], int timeout_ms)
{
  size_t got = 0;
  while (got < 8)
    {
      struct pollfd pfd[4] = { { .fd = sock, .events = POLLIN },
                               { .fd = r->read_end[1], .events = POLLIN },
                               { .fd = r->read_end[2], .events = POLLIN },
                               { .fd = r->parent_pidfd, .events = POLLIN } };
      ssize_t n;
      int ready = poll (pfd, 4, timeout_ms);
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0)
        return -1;
      for (int fd = 1; fd <= 2; fd++)
        if (pfd[fd].revents)
          copy_chunk (r, fd);
      if (pfd[3].revents && !pfd[0].revents)
        {
          r->parent_gone = true; /* our hangup ends the run (the server kills it) */
          return -1;
        }
      if (!pfd[0].revents)
        continue;
      n = read (sock, head + got, 8 - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      got += (size_t) n;
    }
  drain (r);
  return 0;
}

void
client_relay_close (struct client_relay *r)
{
  close_write_ends (r);
  if (r->parent_pidfd >= 0)
    close (r->parent_pidfd);
  r->parent_pidfd = -1;
  for (int fd = 1; fd <= 2; fd++)
    if (r->read_end[fd] >= 0)
      {
        close (r->read_end[fd]);
        r->read_end[fd] = -1;
      }
}
