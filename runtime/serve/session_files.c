/* A session's files: `--put-file NAME` (stdin to /work/NAME), `--get-file NAME`
 * (/work/NAME to stdout), `--list-files DIR` (JSON lines), `--remove-file NAME`.
 *
 * Between cells the session's state, inside the sandbox and as the sandbox user, does
 * each on /work itself (runtime/warm/zygote.py, file_op: the name relative, no "..",
 * no link followed on the way). The worker never resolves a name on the host: it only
 * moves bytes, from the client's stdin into a sealed memfd it hands over, or from the
 * fd the state hands back (a regular file, or the listing) to the client's stdout,
 * bounded by SESSION_FILE_MAX either way. */
#include "build-config.h"
#include "runtime/serve/warm_run.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"

#define SESSION_FILE_MAX (64u << 20)
#define ANSWER_TIMEOUT_MS 60000

/* Up to SESSION_FILE_MAX bytes of FD into a new sealed memfd; -1 past that. */
static int
memfd_from (int fd, const char *what, struct sbx_error *err)
{
  int mfd = memfd_create ("sbx-put", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  char buf[1 << 16];
  uint64_t total = 0;
  if (mfd < 0)
    return sbx_error_set (err, errno, "%s: memfd", what);
  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sbx_error_set (err, errno, "%s: read stdin", what);
          break;
        }
      if (n == 0)
        {
          (void) fcntl (mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
          return mfd;
        }
      total += (uint64_t) n;
      if (total > SESSION_FILE_MAX)
        {
          sbx_error_set (err, EFBIG, "%s: more than %u MiB on stdin", what, SESSION_FILE_MAX >> 20);
          break;
        }
      if (write (mfd, buf, (size_t) n) != n)
        {
          sbx_error_set (err, errno, "%s: memfd", what);
          break;
        }
    }
  close (mfd);
  return -1;
}

/* The state's answer to OP: OK (with *fd, or -1) or ERR, which becomes ERR's text. */
static int
answer (int chan, const char *what, int *fd, struct sbx_error *err)
{
  char buf[4096];
  struct pollfd pfd = { .fd = chan, .events = POLLIN };
  ssize_t n;
  *fd = -1;
  if (poll (&pfd, 1, ANSWER_TIMEOUT_MS) <= 0)
    return sbx_error_set (err, ETIMEDOUT, "%s: the session's state did not answer", what);
  n = fd_recv_with_fd (chan, buf, sizeof buf - 1, fd);
  if (n <= 0)
    return sbx_error_set (err, n < 0 ? errno : EPIPE, "%s: the session's state is gone", what);
  buf[n] = '\0';
  if (n == 2 && memcmp (buf, "OK", 2) == 0)
    return 0;
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
  return sbx_error_set (err, 0, "%s: %s", what, n > 4 && memcmp (buf, "ERR", 4) == 0 ? buf + 4 : "refused");
}

/* FD (from the sandbox) to OUT, SESSION_FILE_MAX bytes at most: a regular file or a
   memfd, read once. */
static int
copy_out (int fd, int out, const char *what, struct sbx_error *err)
{
  struct stat st;
  char buf[1 << 16];
  uint64_t total = 0;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return sbx_error_set (err, 0, "%s: not a regular file", what);
  if ((uint64_t) st.st_size > SESSION_FILE_MAX)
    return sbx_error_set (err, EFBIG, "%s: %lld bytes, more than %u MiB", what, (long long) st.st_size,
                          SESSION_FILE_MAX >> 20);
  for (off_t off = 0;; )
    {
      ssize_t n = pread (fd, buf, sizeof buf, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sbx_error_set (err, errno, "%s: read", what);
      if (n == 0)
        return 0;
      total += (uint64_t) n;
      if (total > SESSION_FILE_MAX)
        return sbx_error_set (err, EFBIG, "%s: grew past %u MiB while read", what, SESSION_FILE_MAX >> 20);
      fd_write_all (out, buf, (size_t) n);
      off += n;
    }
}

int
session_file_call (int chan, const struct session_opts *o, int in, int out, struct sbx_error *err)
{
  char msg[4200], what[4200];
  int content = -1, got = -1, ret;
  size_t len = strlen (o->file_name);
  snprintf (what, sizeof what, "--%s %s", o->file_option, o->file_name);
  if (len == 0 || len > 4096)
    return cli_usage_error (err, "--%s: a name of 1 to 4096 bytes", o->file_option);
  /* OP NUL NAME: the name may hold any byte but NUL */
  memcpy (msg, o->file_op, strlen (o->file_op) + 1);
  memcpy (msg + strlen (o->file_op) + 1, o->file_name, len);
  len += strlen (o->file_op) + 1;
  if (strcmp (o->file_op, "PUT") == 0 && (content = memfd_from (in, what, err)) < 0)
    return -1;
  if ((content >= 0 ? fd_send_with_fds (chan, msg, len, &content, 1) : send (chan, msg, len, MSG_NOSIGNAL)) < 0)
    ret = sbx_error_set (err, errno, "%s: the session's state is gone", what);
  else
    ret = answer (chan, what, &got, err);
  if (content >= 0)
    close (content);
  if (ret == 0 && got >= 0)
    ret = copy_out (got, out, what, err);
  if (got >= 0)
    close (got);
  return ret;
}
