/* Relaying a container's pty to the runtime's own stdio (tty_relay.c): the terminal
 * of a foreground `run` or `exec` that was given no --console-socket. */
#ifndef SBX_TTY_RELAY_H
#define SBX_TTY_RELAY_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#include "runtime/base/error.h"

struct tty_relay
{
  int master;
  bool raw;               /* our stdin was put in raw mode: restore saved */
  struct termios saved;
  struct pollfd fds[2];   /* stdin, master: for fg_watch */
};

/* Take the master (owned from now on): non-blocking, our stdin raw if it is a
 * terminal, and, with size_from_stdin, the pty sized like our terminal. */
int tty_relay_start (struct tty_relay *r, int master, bool size_from_stdin, struct sbx_error *err);
/* fg_watch.on_fds: stdin to the master, the master to stdout. */
void tty_relay_on_fds (void *data, struct pollfd *fds, size_t n);
/* Copy what is left, close the master, restore our terminal. Safe to call twice. */
void tty_relay_finish (struct tty_relay *r);

#endif
