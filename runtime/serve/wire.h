/* `sbx-oci python --connect` (client.c) and `sbx-oci serve` (wire.c): one request
 * on a unix stream socket, one reply.
 *
 *   request: "SBX1", argc, envc and their strings' length (u32 each), with the
 *            client's stdin, stdout, stderr and an O_PATH fd of its cwd (SCM_RIGHTS);
 *            then argv and the environment, each string NUL-terminated: python's
 *            command line without --connect, and what a one-shot run would have
 *            inherited (its allow-listed variables reach the sandbox)
 *   reply:   "SBXX" and the exit status (i32), or "SBXE", a length (u32) and a
 *            message (the server refused the run: busy, not this user's)
 * Between its request and the reply the client may send "SBXI", any number of times:
 * interrupt the program (SIGINT to it and what it started: KeyboardInterrupt in
 * Python). A client that hangs up before the reply ends its run. */
#ifndef SBX_SERVE_WIRE_H
#define SBX_SERVE_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/base/context.h"
#include "runtime/base/error.h"

#define CONNECT_MAX_ARGV (64u << 20) /* a program as long as this, no longer */

/* Where `serve --socket SOCKET` keeps its sessions' sockets: SOCKET.sessions/ (0700).
   A session that exists takes its calls there, in the same words. */
#define SERVE_SESSIONS_SUFFIX ".sessions"

struct connect_request
{
  int fds[4]; /* stdin, stdout, stderr, cwd */
  char **argv; /* NULL-terminated */
  size_t argc;
  char **env; /* NULL-terminated */
  size_t envc;
  char *buf;
};

#define CONNECT_INTERRUPT "SBXI"

/* Whether what the client sent after its request asks for an interrupt. */
bool connect_is_interrupt (const char *buf, size_t len);
/* The client's side: ask the server to interrupt the program. */
void connect_send_interrupt (int sock);

/* LEN bytes from FD, waiting at most TIMEOUT_MS (-1: no limit) for each part. */
int connect_read_full (int fd, void *buf, size_t len, int timeout_ms);
/* The worker's side. A client gets 10 s to send its request. */
int connect_request_read (int sock, struct connect_request *r, struct sbx_error *err);
void connect_request_free (struct connect_request *r);
void connect_reply_status (int sock, int status);
void connect_reply_error (int sock, const char *msg);
/* The client's side: a request of argv with STDIO (the program's stdin, stdout,
   stderr), our cwd and environment. */
int connect_send_request (int sock, const int stdio[3], int argc, char **argv, struct sbx_error *err);

#endif
