#include "build-config.h"
#include "runtime/linux/process_become.h"
#include "runtime/linux/landlock.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/caps.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/process_attrs.h"
#include "runtime/linux/seccomp.h"
#include "runtime/linux/terminal.h"

/* The kernel's struct sigaction, for SIG_DFL only (no restorer, no mask): the
 * layout of x86_64, arm64 and the other architectures with SA_RESTORER. */
struct kernel_sigaction_dfl
{
  unsigned long handler, flags, restorer, mask;
};

void
process_reset_signals (void)
{
  sigset_t none;
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  struct kernel_sigaction_dfl kdfl = { 0 }; /* SIG_DFL is 0 */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP && sigaction (sig, &dfl, NULL) < 0 && errno == EINVAL)
      /* The signals the C library keeps for itself (glibc 32-33, musl 32-34) are
         refused by its sigaction, but the program must not inherit them ignored. */
      syscall (SYS_rt_sigaction, sig, &kdfl, NULL, sizeof kdfl.mask);
}

int
process_enter_cwd (const char *cwd, struct sbx_error *err)
{
  _cleanup_close_ int fd = sys_openat2 (AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0);
  _cleanup_close_ int dir = -1;
  char buf[64];
  if (fd < 0)
    return sbx_error_set (err, errno, "open /");
  dir = sys_openat2 (fd, cwd[1] ? cwd + 1 : ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  if (dir < 0)
    return sbx_error_set (err, errno, "process.cwd: %s", cwd);
  if (fchdir (dir) < 0)
    return sbx_error_set (err, errno, "process.cwd: chdir %s", cwd);
  if (!getcwd (buf, sizeof buf) && errno != ERANGE)
    return sbx_error_set (err, errno, "process.cwd: %s is not reachable from the container root", cwd);
  return 0;
}

/* Load the filter; with SCMP_ACT_NOTIFY, hand the listener fd to the agent. */
static int
load_seccomp (struct become_args *b, struct sbx_error *err)
{
  int nfd = -1, r;
  if (sbx_seccomp_load (b->seccomp, &nfd, err) < 0)
    return -1;
  if (nfd < 0)
    return 0;
  {
    struct sbx_state s = *b->state;
    s.pid = b->host_pid;
    r = sbx_seccomp_send_notify (b->seccomp_listener_fd, nfd, b->host_pid, b->seccomp_metadata, &s, err);
  }
  close (nfd);
  close (b->seccomp_listener_fd);
  b->seccomp_listener_fd = -1;
  return r;
}

/* The caller may name more fds than it has open (crun's suite passes 100). A hole in
 * 3..3+n-1 would take the runtime's own next fd, and that would then be preserved
 * into the container: so every hole is filled at once, before the runtime opens
 * anything, with /dev/null opened O_CLOEXEC. An inherited fd never has FD_CLOEXEC
 * (it would not have survived the exec into us), so keep_preserved_fds can tell the
 * placeholders apart, and the program's exec closes them: the container sees the
 * holes as holes. */
void
process_reserve_preserved_fds (int n)
{
  /* Socket activation's fds come first and count too (create.c passes 3..3+L+n-1). */
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  if (fds && pid && strtol (pid, NULL, 10) == (long) getpid ())
    {
      long l = strtol (fds, NULL, 10);
      if (l > 0 && l <= 1024)
        n += (int) l;
    }
  for (int fd = 3; fd < 3 + n; fd++)
    if (fcntl (fd, F_GETFD) < 0 && errno == EBADF)
      {
        int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0)
          return; /* keep_preserved_fds reports the hole */
        if (null != fd)
          {
            dup3 (null, fd, O_CLOEXEC);
            close (null);
          }
      }
}

static int
keep_preserved_fds (int n, struct sbx_error *err)
{
  for (int fd = 3; fd < 3 + n; fd++)
    {
      int flags = fcntl (fd, F_GETFD);
      if (flags < 0)
        return sbx_error_set (err, errno, "--preserve-fds: fd %d", fd);
      if (flags & FD_CLOEXEC)
        continue; /* a placeholder (process_reserve_preserved_fds): closed by exec */
      if (fcntl (fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
        return sbx_error_set (err, errno, "--preserve-fds: fd %d", fd);
    }
  return 0;
}

int
process_become (const struct oci_process *p, struct become_args *b, struct sbx_error *err)
{
  /* Landlock first, while the container's paths are still ours to open with every
     capability: the rules name paths of the container's root. */
  if (b->landlock && landlock_apply (b->landlock, err) < 0)
    return -1;
  if (process_apply_rlimits (p, err) < 0 || process_apply_scheduling (p, err) < 0)
    return -1;
  /* Everything that does not depend on the user comes before a seccomp filter: the
     profile is the user's, and need not allow our setup (runtime-tools' default
     profile has no openat2, many have no setsid). The cwd was entered as root
     before (init.c, exec_child.c), as runc does: the user may lack search
     permission on a parent of it. */
  if (p->user.has_umask)
    umask (p->user.umask);
  if (keep_preserved_fds (b->preserve_fds, err) < 0)
    return -1;
  /* A session of its own: the caller's terminal (if any) is not the container's
   * controlling tty, so TIOCSTI cannot push input into it. */
  if (setsid () < 0 && errno != EPERM)
    return sbx_error_set (err, errno, "setsid");
  if (b->pty_slave >= 0 && terminal_attach (b->pty_slave, err) < 0)
    return -1;
  if (caps_drop_bounding (p, err) < 0)
    return -1;
  /* Without no_new_privs, loading a filter takes CAP_SYS_ADMIN: before the user
     switch, which then runs under it (setgroups, setresgid, setresuid, capset,
     prctl), as with runc and crun. */
  if (b->seccomp && !p->no_new_privileges && load_seccomp (b, err) < 0)
    return -1;
  if (caps_apply_user_and_caps (p, b->setgroups_allowed, b->keep_groups, b->log, err) < 0)
    return -1;
  if (b->pdeathsig)
    prctl (PR_SET_PDEATHSIG, SIGKILL); /* the uid change cleared it */
  if (p->no_new_privileges && process_set_no_new_privs (err) < 0)
    return -1;
  /* With no_new_privs, the filter last: nothing of the setup runs under it. */
  if (b->seccomp && p->no_new_privileges && load_seccomp (b, err) < 0)
    return -1;
  return 0;
}

static int
cmp_int (const void *a, const void *b)
{
  return *(const int *) a - *(const int *) b;
}

void
process_close_fds_except (int lowest, int *keep, size_t n)
{
  int lo = lowest;
  qsort (keep, n, sizeof *keep, cmp_int);
  for (size_t i = 0; i < n; i++)
    {
      if (keep[i] < lo)
        continue;
      if (keep[i] > lo)
        syscall (SYS_close_range, (unsigned) lo, (unsigned) keep[i] - 1, 0);
      lo = keep[i] + 1;
    }
  syscall (SYS_close_range, (unsigned) lo, ~0U, 0);
}
