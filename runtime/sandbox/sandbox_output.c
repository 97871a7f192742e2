/* The program's stdout and stderr, relayed while it runs with a cap per stream. Past
 * the cap the output is read and dropped, never left in the pipe: a program blocked
 * on a full pipe would otherwise hang until the timeout, and buffering it all would
 * let the sandbox spend the runtime's memory. */
#include "build-config.h"
#include "runtime/sandbox/sandbox_output.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"

#define CHUNK 65536

/* Past the cap: the rest goes to /dev/null by splice, pages moved rather than copied
 * (a program printing a gigabyte is drained ten times faster than through read). */
static bool
discard_once (struct output_stream *s)
{
  ssize_t n;
  if (s->null_fd < 0)
    s->null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  n = s->null_fd >= 0 ? splice (s->fd, NULL, s->null_fd, NULL, 1 << 20, SPLICE_F_MOVE | SPLICE_F_NONBLOCK) : -1;
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n < 0 && s->null_fd >= 0)
    {
      close (s->null_fd);
      s->null_fd = -2; /* no splice here: read and drop */
      return true;
    }
  if (n <= 0)
    return n < 0 ? true : false;
  s->total += (uint64_t) n;
  return true;
}

/* Looks for s->watch in buf, and in the bytes that straddle the previous read. */
static void
watch_scan (struct output_stream *s, const char *buf, size_t n)
{
  size_t w = s->watch ? strlen (s->watch) : 0, keep;
  char joint[2 * sizeof s->tail];
  if (!w || s->found || w > sizeof s->tail)
    return;
  /* the previous read's last w-1 bytes followed by this one's first w-1 */
  keep = n < w - 1 ? n : w - 1;
  memcpy (joint, s->tail, s->tail_len);
  memcpy (joint + s->tail_len, buf, keep);
  if (memmem (joint, s->tail_len + keep, s->watch, w) || memmem (buf, n, s->watch, w))
    {
      s->found = true;
      return;
    }
  if (n >= w - 1)
    {
      memcpy (s->tail, buf + n - (w - 1), w - 1);
      s->tail_len = w - 1;
    }
  else
    {
      /* a short read: what was kept before, then all of it, the last w-1 bytes */
      size_t total = s->tail_len + n, drop = total > w - 1 ? total - (w - 1) : 0;
      memmove (joint, joint + drop, total - drop);
      memcpy (s->tail, joint, total - drop);
      s->tail_len = total - drop;
    }
}

/* One read; false at EOF or on error (the stream is then done). */
static bool
read_once (struct output_stream *s)
{
  char buf[CHUNK];
  ssize_t n;
  size_t keep;
  if (s->truncated && s->null_fd != -2)
    return discard_once (s);
  n = read (s->fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    return false;
  s->total += (uint64_t) n;
  watch_scan (s, buf, (size_t) n);
  keep = s->passed >= s->cap ? 0 : (size_t) (s->cap - s->passed < (uint64_t) n ? s->cap - s->passed : (uint64_t) n);
  if (keep < (size_t) n)
    s->truncated = true;
  if (keep == 0)
    return true;
  s->passed += keep;
  if (s->out_fd >= 0)
    fd_write_all (s->out_fd, buf, keep);
  else
    {
      s->buf = xrealloc (s->buf, s->len + keep + 1);
      memcpy (s->buf + s->len, buf, keep);
      s->len += keep;
      s->buf[s->len] = '\0';
    }
  return true;
}

static void
finish (struct output_stream *s)
{
  close (s->fd);
  s->fd = -1;
}

void
output_on_ready (void *data, struct pollfd *fds, size_t n)
{
  struct output_stream *streams = data;
  for (size_t i = 0; i < n; i++)
    {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      if (!read_once (&streams[i]))
        {
          finish (&streams[i]);
          fds[i].fd = -1; /* poll ignores it from now on */
        }
    }
}

void
output_drain (struct output_stream *streams, size_t n, int timeout_ms)
{
  for (size_t i = 0; i < n; i++)
    {
      struct output_stream *s = &streams[i];
      while (s->fd >= 0)
        {
          struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
          int r = poll (&pfd, 1, timeout_ms);
          if (r < 0 && errno == EINTR)
            continue;
          if (r <= 0 || !read_once (s))
            finish (s);
        }
    }
}

void
output_drain_now (struct output_stream *streams, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      struct output_stream *s = &streams[i];
      int avail = 0;
      /* bounded by what the pipe held when we looked */
      if (s->fd >= 0 && ioctl (s->fd, FIONREAD, &avail) == 0)
        while (avail > 0 && s->fd >= 0)
          {
            uint64_t before = s->total;
            if (!read_once (s))
              break;
            if (s->total == before)
              break; /* nothing came (EAGAIN, EINTR) */
            avail -= (int) (s->total - before);
          }
      if (s->fd >= 0)
        finish (s);
    }
}

void
output_stream_free (struct output_stream *s)
{
  if (s->fd >= 0)
    close (s->fd);
  if (s->null_fd >= 0)
    close (s->null_fd);
  s->fd = s->null_fd = -1;
  free (s->buf);
  s->buf = NULL;
}
