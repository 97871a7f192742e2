/* The warm interpreter's loop (runtime/warm/zygote.py calls it once, and it returns
 * only in a run's process or at the end), in C rather than Python.
 *
 *   int sbx_warm_serve (int sock, const struct sbx_warm_hooks *hooks, char kind[4])
 *
 * Why C: after each fork the zygote's pages are shared with the child, so every page
 * the zygote writes next is copied (a fault, a page allocated and charged, 4 KiB
 * copied) while the child lives. A loop in Python writes its frames and every object
 * it touches: with numpy and pandas preloaded the zygote copied about 215 pages a run,
 * about 90 of them outside the spawn. This loop writes its stack, a table of children
 * and the buffer of one message.
 *
 * Each message on SOCK (from the server or a worker) is "KIND\0STATE_ROOT\0ID" with
 * five fds: the run's stdin, stdout, stderr, run channel and status pipe; then the
 * sandbox's namespaces and root, which its holding init sent (join_fds.h). KIND is
 *  - STB: a standby, a sandbox of the server's own options: spawned by this process
 *    (sbx_warm_spawn), one copy of the interpreter;
 *  - RUN, SES: a run with a sandbox of its own, a session's first process: spawned by
 *    a throwaway copy of this process, which then waits for it and reports, since the
 *    spawn reads the container's config (the client's program, --env values, host
 *    paths) and what the engine frees stays in the memory of the process that ran it.
 * How a run's process ended goes on its status pipe: "OK CODE SIGNAL USER_US SYSTEM_US
 * MAXRSS_KIB" (CODE 128+N for signal N), or "ERR MESSAGE" if it could not be spawned.
 *
 * Every fork has the interpreter's fork hooks around it, as os.fork has them (HOOKS:
 * PyOS_BeforeFork, PyOS_AfterFork_Child, PyOS_AfterFork_Parent; the GIL is held: the
 * library is loaded with ctypes.PyDLL). The GIL stays held while the loop waits, so a
 * Python thread that a preload module started does not run in the zygote (no fork
 * has it either); C threads (numexpr's pool) are not held. Returns 1 in a run's process, joined, with its
 * KIND; 0 once SOCK reached EOF and every child was reaped (a recycled zygote stays
 * until then, since its children die with it); -1 if the loop itself failed. */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/container/join_fds.h"

#define MSG_FDS 5                             /* the run's own */
#define MSG_FDS_MAX (MSG_FDS + JOIN_FDS_MAX) /* and the sandbox's namespaces and root */

struct sbx_warm_hooks
{
  void (*before) (void);
  void (*after_child) (void);
  void (*after_parent) (void);
};

struct child
{
  pid_t pid;
  int status_fd; /* -1 for a copy, which reports by itself */
};

struct loop
{
  int sock;
  const struct sbx_warm_hooks *hooks;
  struct child *children;
  size_t n_children, cap_children;
};

__attribute__ ((visibility ("default"))) int sbx_warm_serve (int sock, const struct sbx_warm_hooks *hooks,
                                                             char kind[4]);
int sbx_warm_spawn (const char *state_root, const char *id, const int fds[4], const int *join_fds, size_t n_join,
                    char *errbuf, size_t errlen);

/* SIGCHLD wakes the poll through this pipe (the handler's only work) */
static int wake_pipe[2] = { -1, -1 };

static void
on_sigchld (int sig)
{
  int saved = errno;
  (void) sig;
  (void) !write (wake_pipe[1], "", 1);
  errno = saved;
}

static void
say (int fd, const char *msg)
{
  size_t len = strlen (msg);
  /* the worker may be gone (its client hung up): nobody to tell */
  (void) !write (fd, msg, len);
}

/* Room for one more child, made before the fork: a failure after it would leave a
   child nobody reports (and the table's page would be written after the fork). */
static int
reserve_child (struct loop *l)
{
  if (l->n_children == l->cap_children)
    {
      size_t cap = l->cap_children ? l->cap_children * 2 : 64;
      struct child *c = realloc (l->children, cap * sizeof *c);
      if (!c)
        return -1;
      l->children = c;
      l->cap_children = cap;
    }
  return 0;
}

static void
add_child (struct loop *l, pid_t pid, int status_fd)
{
  l->children[l->n_children++] = (struct child){ pid, status_fd };
}

/* How a run's process ended, to its worker, as the runtime reports a status. */
static void
report (int status_fd, int status, const struct rusage *ru)
{
  char msg[160];
  int sig = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
  int code = sig ? 128 + sig : WEXITSTATUS (status);
  snprintf (msg, sizeof msg, "OK %d %d %lld %lld %ld\n", code, sig,
            (long long) ru->ru_utime.tv_sec * 1000000 + ru->ru_utime.tv_usec,
            (long long) ru->ru_stime.tv_sec * 1000000 + ru->ru_stime.tv_usec, ru->ru_maxrss);
  say (status_fd, msg);
}

static void
reap (struct loop *l)
{
  while (l->n_children > 0)
    {
      struct rusage ru;
      int status;
      pid_t pid = wait4 (-1, &status, WNOHANG, &ru);
      if (pid <= 0)
        return;
      for (size_t i = 0; i < l->n_children; i++)
        if (l->children[i].pid == pid)
          {
            if (l->children[i].status_fd >= 0)
              {
                report (l->children[i].status_fd, status, &ru);
                close (l->children[i].status_fd);
              }
            l->children[i] = l->children[--l->n_children];
            break;
          }
    }
}

static void
close_fds (const int *fds, int n)
{
  for (int i = 0; i < n; i++)
    close (fds[i]);
}

/* The run's process: a copy of this one, made inside the sandbox by the library's
   fork() with the fork hooks around it. Returns 1 in that process; else 0, its
   status pipe kept to report its end (or told why there is none). */
static int
spawn_run (struct loop *l, const char *root, const char *id, const int *fds, int n_fds)
{
  char err[1024] = "out of memory";
  pid_t pid = -1;
  if (reserve_child (l) == 0)
    {
      l->hooks->before ();
      pid = sbx_warm_spawn (root, id, fds, fds + MSG_FDS, (size_t) (n_fds - MSG_FDS), err, sizeof err);
      if (pid == 0)
        {
          l->hooks->after_child (); /* first: no other Python code before the interpreter's own reset */
          return 1;
        }
      l->hooks->after_parent ();
    }
  close_fds (fds, 4);
  close_fds (fds + MSG_FDS, n_fds - MSG_FDS);
  if (pid < 0)
    {
      char msg[1100];
      snprintf (msg, sizeof msg, "ERR %s\n", err);
      say (fds[4], msg);
      close (fds[4]);
      return 0;
    }
  add_child (l, pid, fds[4]);
  return 0;
}

/* The copy's part, which ends with the run: nothing of the zygote's outlives it here
   (other runs' status pipes must reach EOF when the zygote dies, its socket when the
   server lets go of it), spawn the run's process, wait for it, report. */
static int
run_copy (struct loop *l, const char *root, const char *id, const int *fds, int n_fds)
{
  struct rusage ru;
  int status;
  signal (SIGCHLD, SIG_DFL);
  close (wake_pipe[0]);
  close (wake_pipe[1]);
  for (size_t i = 0; i < l->n_children; i++)
    if (l->children[i].status_fd >= 0)
      close (l->children[i].status_fd);
  l->n_children = 0;
  if (spawn_run (l, root, id, fds, n_fds) == 1)
    return 1;
  close (l->sock); /* after the spawn, which wants fd 3 open (the run's copy closed its own) */
  if (l->n_children == 1)
    {
      pid_t got;
      do /* a signal (the interpreter's SIGINT handler has no SA_RESTART) must not end the wait */
        got = wait4 (l->children[0].pid, &status, 0, &ru);
      while (got < 0 && errno == EINTR);
      if (got > 0)
        report (l->children[0].status_fd, status, &ru);
    }
  _exit (0);
}

static int
spawn_through_copy (struct loop *l, const char *root, const char *id, const int *fds, int n_fds)
{
  pid_t pid;
  int fork_errno;
  if (reserve_child (l) < 0)
    {
      say (fds[4], "ERR out of memory\n");
      close_fds (fds, n_fds);
      return 0;
    }
  l->hooks->before ();
  pid = fork ();
  fork_errno = errno; /* before the hooks, which run Python */
  if (pid == 0)
    {
      l->hooks->after_child ();
      return run_copy (l, root, id, fds, n_fds);
    }
  l->hooks->after_parent ();
  if (pid < 0)
    {
      char msg[128];
      snprintf (msg, sizeof msg, "ERR fork: %s\n", strerror (fork_errno));
      say (fds[4], msg);
    }
  else
    add_child (l, pid, -1);
  close_fds (fds, n_fds);
  return 0;
}

/* One message of the server's or a worker's: 1 in a run's process (KIND set), 0 in
   this one, -1 at EOF, -2 if the socket failed. */
static int
receive_run (struct loop *l, char kind[4])
{
  char buf[4096 + 1];
  union
  {
    char raw[CMSG_SPACE (MSG_FDS_MAX * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { buf, sizeof buf - 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.raw, .msg_controllen = sizeof ctl.raw };
  int fds[MSG_FDS_MAX], n_fds = 0, sent_fds = 0;
  const char *root, *id;
  ssize_t n;
  do
    n = recvmsg (l->sock, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n == 0)
    return -1;
  if (n < 0)
    return -2;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&m); c; c = CMSG_NXTHDR (&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        int k = (int) ((c->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        for (int i = 0; i < k; i++)
          {
            int fd;
            memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof fd);
            sent_fds++;
            if (n_fds < MSG_FDS_MAX)
              fds[n_fds++] = fd;
            else
              close (fd);
          }
      }
  /* KIND\0STATE_ROOT\0ID: three fields, the last ended by the message's end */
  buf[n] = '\0';
  root = memchr (buf, '\0', (size_t) n) ? buf + strlen (buf) + 1 : NULL;
  id = root && root < buf + n ? root + strlen (root) + 1 : NULL;
  if (sent_fds < MSG_FDS || sent_fds > MSG_FDS_MAX || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || !id || id > buf + n
      || (strcmp (buf, "STB") != 0 && strcmp (buf, "RUN") != 0 && strcmp (buf, "SES") != 0))
    {
      close_fds (fds, n_fds); /* not a request of ours */
      return 0;
    }
  memcpy (kind, buf, 4);
  if (strcmp (buf, "STB") == 0)
    return spawn_run (l, root, id, fds, n_fds);
  return spawn_through_copy (l, root, id, fds, n_fds);
}

static int
setup_sigchld (void)
{
  struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
  if (pipe2 (wake_pipe, O_NONBLOCK | O_CLOEXEC) < 0)
    return -1;
  sigemptyset (&sa.sa_mask);
  /* SA_RESTART: a child's end must not fail a spawn's blocking calls (its flock of
     the state dir, its waits) with EINTR; the poll is woken by the pipe */
  return sigaction (SIGCHLD, &sa, NULL);
}

int
sbx_warm_serve (int sock, const struct sbx_warm_hooks *hooks, char kind[4])
{
  struct loop l = { .sock = sock, .hooks = hooks };
  bool listening = true;
  if (setup_sigchld () < 0)
    return -1;
  while (listening || l.n_children > 0)
    {
      struct pollfd p[2] = { { wake_pipe[0], POLLIN, 0 }, { listening ? sock : -1, POLLIN, 0 } };
      if (poll (p, 2, -1) < 0 && errno != EINTR)
        return -1;
      if (p[0].revents)
        {
          char drain[64];
          while (read (wake_pipe[0], drain, sizeof drain) > 0)
            ;
        }
      if (p[1].revents)
        {
          int r = receive_run (&l, kind);
          if (r == 1)
            {
              free (l.children); /* the run's process: other runs' pids */
              return 1;
            }
          if (r == -2)
            return -1; /* the server restarts the interpreter */
          if (r == -1)
            listening = false;
        }
      reap (&l); /* also a child that ended before the pipe was read */
    }
  return 0;
}
