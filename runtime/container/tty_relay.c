/* The terminal of a foreground `run` or `exec` given no --console-socket: the
 * container's pty master comes back to the runtime, which relays between it and its
 * own stdio, as runc and crun do. Our stdin is put in raw mode while it is a terminal
 * (the pty does the line editing and signals), and restored at the end whatever
 * happened. The relay runs inside foreground_wait's loop (fg_watch.on_fds). */
#include "build-config.h"
#include "runtime/container/tty_relay.h"

#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "runtime/base/util.h"

/* Write all of buf to fd, which may be non-blocking: on EAGAIN wait for room a
 * little at a time (a program that never reads its terminal must not hang us, so
 * give up after ~2 s). */
static void
write_all (int fd, const char *buf, size_t len)
{
  int waits = 0;
  while (len > 0)
    {
      ssize_t w = write (fd, buf, len);
      if (w > 0)
        {
          buf += w;
          len -= (size_t) w;
          continue;
        }
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && errno == EAGAIN && waits++ < 200)
        {
          struct pollfd p = { .fd = fd, .events = POLLOUT };
          poll (&p, 1, 10);
          continue;
        }
      return;
    }
}

int
tty_relay_start (struct tty_relay *r, int master, bool size_from_stdin, struct sbx_error *err)
{
  memset (r, 0, sizeof *r);
  r->master = master;
  if (fcntl (master, F_SETFL, fcntl (master, F_GETFL) | O_NONBLOCK) < 0)
    return sbx_error_set (err, errno, "process.terminal: the pty master");
  if (isatty (STDIN_FILENO) && tcgetattr (STDIN_FILENO, &r->saved) == 0)
    {
      struct termios raw = r->saved;
      struct winsize ws;
      cfmakeraw (&raw);
      if (tcsetattr (STDIN_FILENO, TCSANOW, &raw) == 0)
        r->raw = true;
      if (size_from_stdin && ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
        ioctl (master, TIOCSWINSZ, &ws);
    }
  r->fds[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
  r->fds[1] = (struct pollfd){ .fd = master, .events = POLLIN };
  return 0;
}

static bool
copy_out (struct tty_relay *r)
{
  char buf[16384];
  ssize_t n = read (r->master, buf, sizeof buf);
  if (n > 0)
    {
      write_all (STDOUT_FILENO, buf, (size_t) n);
      return true;
    }
  return false; /* EAGAIN, or EIO once every slave is closed */
}

void
tty_relay_on_fds (void *data, struct pollfd *fds, size_t n)
{
  struct tty_relay *r = data;
  (void) n;
  if (fds[0].revents & POLLNVAL)
    fds[0].fd = -1; /* no stdin at all (closed by whoever started us) */
  else if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
    {
      char buf[4096];
      ssize_t got = read (STDIN_FILENO, buf, sizeof buf);
      if (got > 0)
        write_all (r->master, buf, (size_t) got);
      else if (got == 0 || (errno != EINTR && errno != EAGAIN))
        fds[0].fd = -1; /* our input ended: the program's stays open, as with runc */
    }
  if (fds[1].revents & POLLIN)
    copy_out (r);
  else if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))
    fds[1].fd = -1; /* no slave open: nothing more to read until the exit */
}

void
tty_relay_finish (struct tty_relay *r)
{
  if (r->master >= 0)
    {
      /* what the program wrote just before it exited */
      while (copy_out (r))
        ;
      close (r->master);
      r->master = -1;
    }
  if (r->raw)
    tcsetattr (STDIN_FILENO, TCSANOW, &r->saved);
  r->raw = false;
}
