#include "build-config.h"
#include "runtime/base/util.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Allocation failure in a short-lived CLI process has no useful recovery:
 * report and abort rather than thread ENOMEM through every caller. */
void
sbx_out_of_memory (void)
{
  static const char msg[] = "sbx-oci: out of memory\n";
  sigset_t abrt;
  (void) !write (2, msg, sizeof msg - 1);
  signal (SIGABRT, SIG_DFL);
  sigemptyset (&abrt);
  sigaddset (&abrt, SIGABRT);
  sigprocmask (SIG_UNBLOCK, &abrt, NULL);
  kill (getpid (), SIGABRT);
  _exit (134); /* a pid namespace's init does not die of its own signal */
}

void *
xmalloc0 (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  if (!p)
    sbx_out_of_memory ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  void *q = realloc (p, n ? n : 1);
  if (!q)
    sbx_out_of_memory ();
  return q;
}

/* A copy of n bytes, NUL-terminated (for text buffers). */
char *
xmemdup (const void *src, size_t n)
{
  char *p = xmalloc0 (n + 1);
  memcpy (p, src, n);
  return p;
}

char *
xstrdup (const char *s)
{
  char *p = strdup (s ? s : "");
  if (!p)
    sbx_out_of_memory ();
  return p;
}

char *
xasprintf (const char *fmt, ...)
{
  char *out;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&out, fmt, ap) < 0)
    sbx_out_of_memory ();
  va_end (ap);
  return out;
}

size_t
strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

void
fd_write_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      buf += n;
      len -= (size_t) n;
    }
}

bool
path_is_under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's
 * days_from_civil inverted). Done here rather than with gmtime_r, whose first call
 * loads /etc/localtime (tzset) even though UTC needs no zone: seven syscalls of a
 * one-shot run for nothing. */
static void
civil_from_days (long z, int *y, unsigned *m, unsigned *d)
{
  z += 719468;
  long era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned) (z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int) (yoe + era * 400 + (*m <= 2));
}

void
rfc3339_now (char *buf, size_t len)
{
  struct timespec ts;
  long days, secs;
  int y;
  unsigned m, d;
  clock_gettime (CLOCK_REALTIME, &ts);
  days = ts.tv_sec / 86400;
  secs = ts.tv_sec % 86400;
  if (secs < 0)
    {
      secs += 86400;
      days--;
    }
  civil_from_days (days, &y, &m, &d);
  snprintf (buf, len, "%04d-%02u-%02uT%02ld:%02ld:%02ld.%09ldZ", y, m, d, secs / 3600, secs / 60 % 60, secs % 60,
            ts.tv_nsec);
}

size_t
fmt_u64 (char *buf, uint64_t v)
{
  char tmp[20];
  size_t n = 0;
  do
    tmp[n++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; i++)
    buf[i] = tmp[n - 1 - i];
  return n;
}

ssize_t
fd_send_with_fds (int sock, const void *buf, size_t len, const int *fds, size_t n)
{
  char cbuf[CMSG_SPACE (16 * sizeof (int))];
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                       .msg_controllen = CMSG_SPACE (n * sizeof (int)) };
  struct cmsghdr *cm;
  if (n > 16)
    {
      errno = EINVAL;
      return -1;
    }
  memset (cbuf, 0, sizeof cbuf);
  cm = CMSG_FIRSTHDR (&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (n * sizeof (int));
  memcpy (CMSG_DATA (cm), fds, n * sizeof (int));
  return sendmsg (sock, &mh, MSG_NOSIGNAL);
}

pid_t
pidfd_pid (int pidfd)
{
  char path[64], line[128];
  long pid = -1;
  FILE *f;
  if (pidfd < 0)
    return -1;
  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  f = fopen (path, "re");
  if (!f)
    return -1;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "Pid: %ld", &pid) == 1)
      break;
  fclose (f);
  return pid > 0 ? (pid_t) pid : -1;
}

ssize_t
fd_recv_with_fd (int sock, void *buf, size_t len, int *fd)
{
  char cbuf[CMSG_SPACE (8 * sizeof (int))];
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  ssize_t n = recvmsg (sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  *fd = -1;
  if (n < 0)
    return n;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < k; i++)
          {
            int got;
            memcpy (&got, CMSG_DATA (cm) + i * sizeof (int), sizeof got);
            if (*fd < 0)
              *fd = got;
            else
              close (got);
          }
      }
  return n;
}
