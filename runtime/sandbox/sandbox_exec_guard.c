/* `sbx-oci python --no-subprocess`: the sandboxed program cannot start any program,
 * enforced by the kernel.
 *
 * No static filter can tell the sandbox's own exec of the interpreter from a later
 * exec by the program: the path is behind a pointer seccomp cannot read, and Landlock's
 * execute right, needed by the interpreter and its ELF loader, lets `ld.so PROGRAM`
 * run anything. So execve and execveat (the python profile's last rule) go to a
 * supervisor through SCMP_ACT_NOTIFY, the OCI listener protocol. The supervisor, a
 * process of ours on the host, lets the first exec through (the runtime's exec of the
 * interpreter: no code of the program exists yet) and answers every later one EPERM,
 * reporting the paths. fork, threads and multiprocessing's fork start method need no
 * exec and keep working. If the supervisor is gone, the kernel fails the calls
 * (ENOSYS): it stays closed.
 *
 * The supervisor listens on a socket in the state root (root's alone), named through
 * /proc/self/fd so that the path stays short; the runtime connects to it from this
 * same process. It ends when no process uses the filter any more (POLLHUP), or with
 * its parent (PR_SET_PDEATHSIG), and is reaped by PID. */
#include "build-config.h"
#include "runtime/sandbox/sandbox_exec_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/foreground.h"

/* The python profile's exec rule as config/seccomp/profiles.py writes it (indent 1). */
static const char exec_rule_allow[] = "    \"execve\",\n    \"execveat\"\n   ],\n   \"action\": \"SCMP_ACT_ALLOW\"";
static const char exec_rule_notify[] = "    \"execve\",\n    \"execveat\"\n   ],\n   \"action\": \"SCMP_ACT_NOTIFY\"";

char *
exec_guard_profile (const char *profile, const char *listener_path)
{
  const char *rule = strstr (profile, exec_rule_allow);
  const char *open = strchr (profile, '{');
  if (!rule || !open || open > rule || strstr (rule + 1, exec_rule_allow))
    return NULL;
  /* {"listenerPath":"...", + the profile up to the rule + the rule as NOTIFY + the rest */
  return xasprintf ("{\"listenerPath\": \"%s\",%.*s%s%s", listener_path, (int) (rule - open - 1), open + 1,
                    exec_rule_notify, rule + sizeof exec_rule_allow - 1);
}

/* ------------------------------------------------------------ supervisor */

/* The exec's path, read from the process (bounded, printable), or "?" */
static void
read_exec_path (const struct seccomp_notif *req, char *out, size_t size)
{
  char path[64];
  uint64_t addr = req->data.nr == SYS_execveat ? req->data.args[1] : req->data.args[0];
  ssize_t n;
  int fd;
  snprintf (out, size, "?");
  snprintf (path, sizeof path, "/proc/%d/mem", (int) req->pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  n = pread (fd, out, size - 1, (off_t) addr);
  close (fd);
  if (n <= 0)
    {
      snprintf (out, size, "?");
      return;
    }
  out[n] = '\0';
  for (char *p = out; *p; p++)
    if ((unsigned char) *p < 0x20 || (unsigned char) *p == 0x7f)
      *p = '?';
}

static int
receive_listener (int sock)
{
  char buf[4096];
  char cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *c;
  int conn = accept4 (sock, NULL, NULL, SOCK_CLOEXEC), fd = -1;
  if (conn < 0)
    return -1;
  /* the state JSON says nothing we need; the fd comes with its first bytes */
  if (recvmsg (conn, &msg, MSG_CMSG_CLOEXEC) > 0)
    for (c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN (sizeof (int)))
        memcpy (&fd, CMSG_DATA (c), sizeof fd);
  close (conn);
  return fd;
}

static void __attribute__ ((noreturn))
supervise (int sock, int report)
{
  struct seccomp_notif_sizes sizes = { 0 };
  struct seccomp_notif *req;
  struct seccomp_notif_resp *resp;
  unsigned long refused = 0;
  bool first = true;
  int listener = receive_listener (sock);
  close (sock);
  if (listener < 0 || syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    _exit (1);
  req = xmalloc0 (sizes.seccomp_notif > sizeof *req ? sizes.seccomp_notif : sizeof *req);
  resp = xmalloc0 (sizes.seccomp_notif_resp > sizeof *resp ? sizes.seccomp_notif_resp : sizeof *resp);
  for (;;)
    {
      struct pollfd pfd = { .fd = listener, .events = POLLIN };
      char path[EXEC_GUARD_PATH_MAX + 1];
      if (poll (&pfd, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (!(pfd.revents & POLLIN))
        break; /* POLLHUP: no process uses the filter any more */
      memset (req, 0, sizes.seccomp_notif);
      if (ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        {
          if (errno == EINTR || errno == ENOENT) /* the caller died meanwhile */
            continue;
          break;
        }
      memset (resp, 0, sizes.seccomp_notif_resp);
      resp->id = req->id;
      if (first)
        {
          /* The runtime's exec of the interpreter: nothing of the program runs yet. */
          first = false;
          resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        }
      else
        {
          resp->error = -EPERM;
          refused++;
          if (refused <= EXEC_GUARD_MAX_PATHS)
            {
              read_exec_path (req, path, sizeof path);
              /* the path was read from the caller's memory: only while it still waits */
              if (ioctl (listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0)
                dprintf (report, "exec %s\n", path);
            }
        }
      if (ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
        break;
    }
  dprintf (report, "refused %lu\n", refused);
  _exit (0);
}

/* ------------------------------------------------------------ the runtime's side */

int
exec_guard_start (struct exec_guard *g, const char *state_root, struct sbx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_close_ int sock = -1;
  int report[2];
  pid_t parent = getpid ();
  memset (g, 0, sizeof *g);
  g->pid = -1;
  g->report_fd = -1;
  g->dirfd = open (state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (g->dirfd < 0)
    return sbx_error_set (err, errno, "--no-subprocess: open %s", state_root);
  g->name = xasprintf (".exec-guard-%d", (int) parent);
  g->listener_path = xasprintf ("/proc/self/fd/%d/%s", g->dirfd, g->name);
  if (strlen (g->listener_path) >= sizeof addr.sun_path)
    return sbx_error_set (err, ENAMETOOLONG, "--no-subprocess: %s", g->listener_path);
  strcpy (addr.sun_path, g->listener_path);
  (void) unlinkat (g->dirfd, g->name, 0); /* a previous process of this pid's */
  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || bind (sock, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (sock, 1) < 0)
    return sbx_error_set (err, errno, "--no-subprocess: the supervisor's socket %s/%s", state_root, g->name);
  g->bound = true;
  if (pipe2 (report, O_CLOEXEC) < 0)
    return sbx_error_set (err, errno, "--no-subprocess: pipe");
  g->pid = fork ();
  if (g->pid < 0)
    {
      close (report[0]);
      close (report[1]);
      return sbx_error_set (err, errno, "--no-subprocess: fork the supervisor");
    }
  if (g->pid == 0)
    {
      int keep_lo = sock < report[1] ? sock : report[1], keep_hi = sock < report[1] ? report[1] : sock;
      (void) prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != parent)
        _exit (1);
      /* nothing of the run's (its pipes, the workdir) stays open here */
      syscall (SYS_close_range, 3U, (unsigned) keep_lo - 1, 0U); /* (musl has no wrapper) */
      syscall (SYS_close_range, (unsigned) keep_lo + 1, (unsigned) keep_hi - 1, 0U);
      syscall (SYS_close_range, (unsigned) keep_hi + 1, ~0U, 0U);
      supervise (sock, report[1]);
    }
  close (report[1]);
  g->report_fd = report[0];
  return 0;
}

static void
parse_report (struct exec_guard *g, char *text)
{
  for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n"))
    if (strncmp (line, "exec ", 5) == 0 && g->n_paths < EXEC_GUARD_MAX_PATHS)
      g->paths[g->n_paths++] = xstrdup (line + 5);
    else if (strncmp (line, "refused ", 8) == 0)
      g->refused = strtoul (line + 8, NULL, 10);
}

void
exec_guard_finish (struct exec_guard *g, bool wait_for_report)
{
  char buf[EXEC_GUARD_MAX_PATHS * (EXEC_GUARD_PATH_MAX + 8) + 64];
  size_t have = 0;
  if (!g->name)
    return; /* never started */
  if (g->pid > 0)
    {
      /* The sandbox is gone: the supervisor sees the hang-up and reports at once. */
      int64_t deadline = monotonic_ns () + 2000000000LL;
      while (wait_for_report && have < sizeof buf - 1)
        {
          struct pollfd pfd = { .fd = g->report_fd, .events = POLLIN };
          int64_t left = (deadline - monotonic_ns ()) / 1000000;
          ssize_t n;
          if (left <= 0 || poll (&pfd, 1, (int) left) <= 0)
            break;
          n = read (g->report_fd, buf + have, sizeof buf - 1 - have);
          if (n <= 0)
            break;
          have += (size_t) n;
        }
      buf[have] = '\0';
      kill (g->pid, SIGKILL); /* by PID: ours, and not yet reaped */
      while (waitpid (g->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      parse_report (g, buf);
    }
  if (g->report_fd >= 0)
    close (g->report_fd);
  if (g->bound)
    (void) unlinkat (g->dirfd, g->name, 0);
  if (g->dirfd >= 0)
    close (g->dirfd);
  free (g->name);
  free (g->listener_path);
  g->pid = -1;
  g->report_fd = g->dirfd = -1;
  g->name = g->listener_path = NULL;
  g->bound = false;
}

void
exec_guard_free_paths (struct exec_guard *g)
{
  for (size_t i = 0; i < g->n_paths; i++)
    free (g->paths[i]);
  g->n_paths = 0;
}
