/* A runtime process that stays in the foreground for its container process (`run`,
 * `exec` without --detach, `python`): it passes the signals a terminal or a supervisor
 * sends on to the process, and exits with its status. */
#ifndef SBX_FOREGROUND_H
#define SBX_FOREGROUND_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "runtime/base/error.h"

/* More for the wait loop to do (`sbx-oci python`): relay the program's output while it
 * runs, and enforce a wall-clock deadline. Every field is optional. */
struct fg_watch
{
  struct pollfd *fds; /* polled with the process; on_fds sees their revents */
  size_t n_fds;
  void (*on_fds) (void *data, struct pollfd *fds, size_t n);
  int64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
  void *data;                       /* for on_fds */
  void (*on_deadline) (void *deadline_data); /* called once, when the deadline passes */
  void *deadline_data;
  /* on_fds may set stop: on_stop is then called once (the process is to end now) */
  bool stop;
  void (*on_stop) (void *deadline_data);
  int64_t tick_ns;                  /* on_tick's period; 0: none */
  void (*on_tick) (void *tick_data); /* called every tick_ns while the process runs */
  void *tick_data;
  /* out */
  struct rusage rusage; /* of the process and the descendants it waited for */
  int term_signal;      /* the signal that ended it, 0 if it exited */
};

/* The signals passed on instead of acted on (block them before the clone so none is
 * lost in between; SIGCHLD is in the set only to wake the loop). */
void foreground_signal_set (sigset_t *set);
/* Wait for the process behind pidfd, forwarding what arrives on the signalfd sfd;
 * reaps it and sets *exit_status (128+N when killed by signal N). w may be NULL. */
int foreground_wait (int pidfd, int sfd, struct fg_watch *w, int *exit_status, struct sbx_error *err);
int64_t monotonic_ns (void);

#endif
