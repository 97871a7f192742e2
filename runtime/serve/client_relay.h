/* The client's stdout and stderr, when they are pipes or sockets, relayed through
 * pipes of its own (client_relay.c). */
#ifndef SBX_SERVE_CLIENT_RELAY_H
#define SBX_SERVE_CLIENT_RELAY_H

#include <stdbool.h>

#include "runtime/base/error.h"

struct client_relay
{
  int stdio[3]; /* what the request sends as the program's stdin, stdout, stderr */
  int read_end[3]; /* [1], [2]: our end of a relayed stream; -1: passed as it is */
  int parent_pidfd; /* --die-with-parent: the process that started the client; -1 (closed with the relay) */
  bool parent_gone; /* it exited while the run went on: the wait was ended */
};

/* STDIO as the program will have it: stdout and stderr that are pipes or sockets get
   a pipe of ours in between. */
int client_relay_open (struct client_relay *r, struct sbx_error *err);
/* The reply's head (8 bytes) from SOCK into HEAD, relaying the streams meanwhile and
   then what they hold. -1: SOCK ended first, TIMEOUT_MS (-1: none) passed, or the
   parent exited (parent_gone). */
int client_relay_until_reply (struct client_relay *r, int sock, char head[8], int timeout_ms);
/* Our ends of the relayed pipes closed (the write ends may have gone to a session
   tried first, then to the server: they are kept until the call is over). */
void client_relay_close (struct client_relay *r);

#endif
