#include "build-config.h"
#include "runtime/container/foreground.h"

#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define FG_MAX_FDS 8

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

int64_t
monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* poll(2)'s timeout until the deadline or the next tick, whichever is first, rounded
 * up so we never wake just before it. */
static int
poll_timeout (const struct fg_watch *w, bool deadline_fired, int64_t next_tick)
{
  int64_t left = -1, now;
  if (!w || ((!w->deadline_ns || deadline_fired) && !next_tick))
    return -1;
  now = monotonic_ns ();
  if (w->deadline_ns && !deadline_fired)
    left = w->deadline_ns - now;
  if (next_tick && (left < 0 || next_tick - now < left))
    left = next_tick - now;
  if (left <= 0)
    return 0;
  return left / 1000000 >= INT32_MAX ? INT32_MAX : (int) (left / 1000000) + 1;
}

int
foreground_wait (int pidfd, int sfd, struct fg_watch *w, int *exit_status, struct sbx_error *err)
{
  struct pollfd pfd[2 + FG_MAX_FDS];
  size_t extra = w ? (w->n_fds < FG_MAX_FDS ? w->n_fds : FG_MAX_FDS) : 0;
  bool fired = false, stopped = false;
  int64_t next_tick = w && w->on_tick && w->tick_ns > 0 ? monotonic_ns () + w->tick_ns : 0;
  struct rusage ru;
  siginfo_t si;
  for (;;)
    {
      int r;
      pfd[0] = (struct pollfd) { .fd = pidfd, .events = POLLIN };
      pfd[1] = (struct pollfd) { .fd = sfd, .events = POLLIN };
      for (size_t i = 0; i < extra; i++)
        pfd[2 + i] = (struct pollfd) { .fd = w->fds[i].fd, .events = w->fds[i].events };
      r = poll (pfd, 2 + extra, poll_timeout (w, fired, next_tick));
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return sbx_error_set (err, errno, "poll");
        }
      if (w && w->deadline_ns && !fired && monotonic_ns () >= w->deadline_ns)
        {
          fired = true;
          if (w->on_deadline)
            w->on_deadline (w->deadline_data);
        }
      if (next_tick && monotonic_ns () >= next_tick)
        {
          w->on_tick (w->tick_data);
          next_tick = monotonic_ns () + w->tick_ns;
        }
      if (pfd[1].revents & POLLIN)
        {
          struct signalfd_siginfo ssi;
          if (read (sfd, &ssi, sizeof ssi) == sizeof ssi && ssi.ssi_signo != SIGCHLD)
            syscall (SYS_pidfd_send_signal, pidfd, ssi.ssi_signo, NULL, 0);
        }
      if (extra)
        {
          for (size_t i = 0; i < extra; i++)
            w->fds[i].revents = pfd[2 + i].revents;
          w->on_fds (w->data, w->fds, extra);
          if (w->stop && !stopped && w->on_stop)
            {
              stopped = true;
              w->on_stop (w->deadline_data);
            }
        }
      if (pfd[0].revents & POLLIN)
        break;
    }
  memset (&si, 0, sizeof si);
  memset (&ru, 0, sizeof ru);
  /* The raw waitid returns the rusage too (glibc's wrapper drops it). */
  if (syscall (SYS_waitid, P_PIDFD, pidfd, &si, WEXITED, &ru) < 0)
    return sbx_error_set (err, errno, "wait for the container process");
  *exit_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
  if (w)
    {
      w->rusage = ru;
      w->term_signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
    }
  return 0;
}
