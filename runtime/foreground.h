/* A runtime process that stays in the foreground for its container process (`run`,
 * `exec` without --detach): it passes the signals a terminal or a supervisor sends on
 * to the process, and exits with its status. */
#ifndef SBX_FOREGROUND_H
#define SBX_FOREGROUND_H

#include <signal.h>

#include "error.h"

/* The signals passed on instead of acted on (block them before the clone so none is
 * lost in between; SIGCHLD is in the set only to wake the loop). */
void foreground_signal_set (sigset_t *set);
/* Wait for the process behind pidfd, forwarding what arrives on the signalfd sfd;
 * reaps it and sets *exit_status (128+N when killed by signal N). */
int foreground_wait (int pidfd, int sfd, int *exit_status, struct sbx_error *err);

#endif
