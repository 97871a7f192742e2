#include "build-config.h"
#include "hooks/hooks.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void __attribute__ ((noreturn))
exec_hook (const struct oci_hook *h, int stdin_fd)
{
  const char *fallback_argv[] = { h->path, NULL };
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  if (dup2 (stdin_fd, 0) < 0)
    _exit (127);
  /* A hook without env runs with the runtime's own environment, as with runc (Go's
     exec.Cmd with a nil Env) and crun: hooks such as nvidia-container-runtime-hook
     find their tools through PATH. The environment is the caller's, who also wrote
     the hook; "env": [] gives none. */
  execve (h->path, (char *const *) (h->n_args ? h->args : fallback_argv),
          h->env ? (char *const *) h->env : environ);
  dprintf (2, "sbx-oci: hook %s: exec: %s\n", h->path, strerror (errno));
  _exit (127);
}

static int
run_one (const struct oci_hook *h, const char *kind, size_t idx, const char *state, size_t len, struct sbx_error *err)
{
  int pipefd[2];
  pid_t pid;
  _cleanup_close_ int pidfd = -1;
  siginfo_t si;
  int64_t deadline = h->has_timeout ? now_ms () + h->timeout * 1000 : -1;

  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return sbx_error_set (err, errno, "hooks.%s[%zu]: pipe", kind, idx);
  pid = fork ();
  if (pid < 0)
    {
      close (pipefd[0]);
      close (pipefd[1]);
      return sbx_error_set (err, errno, "hooks.%s[%zu]: fork", kind, idx);
    }
  if (pid == 0)
    {
      close (pipefd[1]);
      exec_hook (h, pipefd[0]);
    }
  close (pipefd[0]);
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  /* The state is small (a few hundred bytes): one write fits the pipe buffer, and a
   * hook that does not read stdin is not an error. */
  if (write (pipefd[1], state, len) < 0 && errno != EPIPE)
    {
      /* ignore: the hook may have exited already */
    }
  close (pipefd[1]);

  for (;;)
    {
      struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
      int timeout = deadline < 0 ? -1 : (int) (deadline - now_ms ());
      int r;
      if (deadline >= 0 && timeout <= 0)
        {
          kill (pid, SIGKILL);
          waitpid (pid, NULL, 0);
          return sbx_error_set (err, 0, "hooks.%s[%zu] (%s): timed out after %lld s", kind, idx, h->path,
                                (long long) h->timeout);
        }
      r = pidfd >= 0 ? poll (&pfd, 1, timeout) : 1;
      if (r < 0 && errno == EINTR)
        continue;
      if (r != 0)
        break;
    }
  memset (&si, 0, sizeof si);
  if (waitid (P_PID, pid, &si, WEXITED) < 0)
    return sbx_error_set (err, errno, "hooks.%s[%zu]: wait", kind, idx);
  if (si.si_code == CLD_EXITED && si.si_status == 0)
    return 0;
  if (si.si_code == CLD_EXITED)
    return sbx_error_set (err, 0, "hooks.%s[%zu] (%s) exited with status %d", kind, idx, h->path, si.si_status);
  return sbx_error_set (err, 0, "hooks.%s[%zu] (%s) was killed by signal %d", kind, idx, h->path, si.si_status);
}

int
hooks_run (const struct oci_hook_list *list, const char *kind, const char *state_json, size_t state_len,
           struct sbx_error *err)
{
  /* runtime.md: a failing poststop hook is a warning and "the remaining hooks and
     lifecycle continue"; any other kind stops at its first failure. */
  bool keep_going = strcmp (kind, "poststop") == 0;
  size_t failed = 0;
  struct sbx_error first = { 0 };
  for (size_t i = 0; i < list->n; i++)
    {
      struct sbx_error later = { 0 };
      if (run_one (&list->hooks[i], kind, i, state_json, state_len, failed ? &later : &first) < 0)
        {
          sbx_error_clear (&later);
          if (!keep_going)
            {
              *err = first;
              return -1;
            }
          failed++;
        }
    }
  if (!failed)
    return 0;
  *err = first;
  if (failed > 1)
    sbx_error_wrap (err, "%zu %s hooks failed, the first", failed, kind);
  return -1;
}
