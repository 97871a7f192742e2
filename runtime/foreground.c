#include "build-config.h"
#include "foreground.h"

#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

void
foreground_signal_set (sigset_t *set)
{
  static const int sigs[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
                              SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH, SIGPWR, SIGVTALRM,
                              SIGPROF, SIGXCPU, SIGXFSZ, SIGCHLD };
  sigemptyset (set);
  for (size_t i = 0; i < ARRAY_SIZE (sigs); i++)
    sigaddset (set, sigs[i]);
}

int
foreground_wait (int pidfd, int sfd, int *exit_status, struct sbx_error *err)
{
  siginfo_t si;
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return sbx_error_set (err, errno, "poll");
        }
      if (pfd[1].revents & POLLIN)
        {
          struct signalfd_siginfo ssi;
          if (read (sfd, &ssi, sizeof ssi) == sizeof ssi && ssi.ssi_signo != SIGCHLD)
            syscall (SYS_pidfd_send_signal, pidfd, ssi.ssi_signo, NULL, 0);
        }
      if (pfd[0].revents & POLLIN)
        break;
    }
  memset (&si, 0, sizeof si);
  if (waitid ((idtype_t) P_PIDFD, pidfd, &si, WEXITED) < 0)
    return sbx_error_set (err, errno, "wait for the container process");
  *exit_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
  return 0;
}
