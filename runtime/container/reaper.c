#include "build-config.h"
#include "runtime/container/reaper.h"

#include <errno.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/linux/caps.h"
#include "runtime/linux/process_attrs.h"
#include "runtime/linux/sealed_exe.h"

int
reaper_wanted (const struct oci_config *c, bool *wanted, bool *hold, struct sbx_error *err)
{
  const char *v = oci_config_annotation (c, REAPER_ANNOTATION);
  *hold = v && strcmp (v, "hold") == 0;
  *wanted = v && (strcmp (v, "true") == 0 || *hold);
  if (v && !*wanted && strcmp (v, "false") != 0)
    return sbx_error_set (err, 0, "annotations." REAPER_ANNOTATION ": '%s' is not true, false or hold", v);
  return 0;
}

/* Only the status fd stays: the program's stdio and sockets are the program's, and a
 * pipe the reaper held open would keep its reader waiting. */
static void
close_all_but (int keep)
{
  if (keep > 0)
    syscall (SYS_close_range, 0, (unsigned) keep - 1, 0);
  syscall (SYS_close_range, keep < 0 ? 0 : (unsigned) keep + 1, ~0U, 0);
}

extern char **environ;

/* /proc/1/cmdline is readable by the container: it is ours (the runtime's argv,
 * with the caller's paths and options), so it becomes "sbx-init". The caller's
 * environment (an API key, say) is in our memory too: /proc/1/environ is closed to
 * the container (we are not dumpable), and its bytes are wiped all the same. */
static void
hide_command_line (void)
{
  for (char **e = environ; e && *e; e++)
    memset (*e, 0, strlen (*e));
  char *start, *end;
  if (!sbx_main_argv || !sbx_main_argv[0])
    return;
  start = sbx_main_argv[0];
  end = start;
  for (char **a = sbx_main_argv; *a; a++)
    end = *a + strlen (*a) + 1;
  memset (start, 0, (size_t) (end - start));
  if (end - start > 8)
    memcpy (start, "sbx-init", 8);
}

/* Whether the runtime died while the signal was not armed: it holds the status
 * pipe's other end (getppid says 0 to a namespace's init, whatever happened). */
static bool
runtime_gone (int status_fd)
{
  struct pollfd p = { .fd = status_fd, .events = POLLOUT };
  return status_fd >= 0 && poll (&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* A session of its own, as runc's init has: left in the caller's process group, the
 * reaper got a signal sent to that group (a terminal's ^C, a Jupyter interrupt's
 * killpg) straight, and forwarded it to the program, which the runtime forwards it to
 * as well: the program had it twice (a second KeyboardInterrupt while Python printed
 * the first). The program makes its own session (process_become). */
static void
leave_callers_group (void)
{
  (void) setsid ();
}

static void __attribute__ ((noreturn))
reap (pid_t program, int status_fd, const sigset_t *all)
{
  for (;;)
    {
      siginfo_t si;
      int status;
      pid_t w;
      if (sigwaitinfo (all, &si) < 0)
        continue;
      if (si.si_signo != SIGCHLD)
        {
          kill (program, si.si_signo);
          continue;
        }
      while ((w = waitpid (-1, &status, WNOHANG)) > 0)
        if (w == program)
          {
            if (status_fd >= 0)
              (void) !write (status_fd, &status, sizeof status);
            _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
          }
    }
}

void
reaper_hold (const struct oci_process *p, bool setgroups_allowed, bool pdeathsig, int status_fd, struct sbx_log *log)
{
  struct oci_process self = *p;
  struct sbx_error err = { 0 };
  sigset_t all;
  memset (&all, 0xff, sizeof all);
  sigprocmask (SIG_BLOCK, &all, NULL);
  leave_callers_group ();
  self.has_capabilities = true;
  memset (&self.caps, 0, sizeof self.caps);
  if (caps_apply_user_and_caps (&self, setgroups_allowed, false, log, &err) < 0 || process_set_no_new_privs (&err) < 0)
    _exit (126);
  if (pdeathsig && prctl (PR_SET_PDEATHSIG, SIGKILL) == 0 && runtime_gone (status_fd))
    _exit (137);
  hide_command_line ();
  /* last: with the sync socket closed the runtime takes the container for started */
  close_all_but (status_fd);
  for (;;)
    {
      siginfo_t si;
      if (sigwaitinfo (&all, &si) < 0)
        continue;
      if (si.si_signo == SIGCHLD)
        while (waitpid (-1, NULL, WNOHANG) > 0)
          ;
      else
        kill (2, si.si_signo); /* the program that joined first */
    }
}

int
reaper_fork (const struct oci_process *p, bool setgroups_allowed, bool pdeathsig, int status_fd, struct sbx_log *log,
             struct sbx_error *err)
{
  struct oci_process self = *p;
  sigset_t all, old;
  pid_t program;
  /* Blocked from before the fork: a blocked signal is queued even for a namespace's
     init (an unblocked one without handler would be dropped), and none is lost. */
  /* Every bit, not sigfillset(): musl's leaves out 32-34 (glibc's 32-33), and a
     signal the reaper neither blocks nor waits for is dropped by the kernel for a
     namespace's init, so `kill ID 34` would never reach the program. */
  memset (&all, 0xff, sizeof all);
  sigprocmask (SIG_BLOCK, &all, &old);
  program = fork ();
  if (program < 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      return sbx_error_set (err, errno, "fork the program under the container's init");
    }
  if (program == 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      if (status_fd >= 0)
        close (status_fd);
      return 0;
    }

  /* The reaper: as little privilege as the program, minus the program's own
     capabilities; errors have nobody to go to but our exit status. */
  leave_callers_group ();
  close_all_but (status_fd);
  hide_command_line ();
  self.has_capabilities = true;
  memset (&self.caps, 0, sizeof self.caps);
  if (caps_apply_user_and_caps (&self, setgroups_allowed, false, log, err) < 0 || process_set_no_new_privs (err) < 0)
    {
      kill (program, SIGKILL);
      _exit (126);
    }
  /* The uid change cleared the parent-death signal: without it, a runtime killed with
     SIGKILL would leave the sandbox running with nobody to enforce its timeout. */
  if (pdeathsig && prctl (PR_SET_PDEATHSIG, SIGKILL) == 0 && runtime_gone (status_fd))
    {
      kill (program, SIGKILL);
      _exit (137);
    }
  reap (program, status_fd, &all);
}
