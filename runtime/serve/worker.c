/* What a worker of `sbx-oci serve` does with a client's request before its run
 * (server.c, session_route.c): take the client's stdio, cwd and environment, and make
 * python's command line of the server's options and the client's; and the server's
 * log, which its workers write too. */
#include "build-config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/serve/server.h"

extern char **environ;

void
slog (struct serve *s, const char *fmt, ...)
{
  char buf[1024];
  int n = snprintf (buf, sizeof buf, "sbx-oci serve[%d]: ", (int) getpid ());
  va_list ap;
  va_start (ap, fmt);
  n += vsnprintf (buf + n, sizeof buf - (size_t) n - 1, fmt, ap);
  va_end (ap);
  if (n > (int) sizeof buf - 2)
    n = (int) sizeof buf - 2;
  buf[n++] = '\n';
  fd_write_all (s->log_fd, buf, (size_t) n);
}

/* The client's request: its stdio, cwd and environment become the worker's, as a
   one-shot run would have had them. */
int
take_request (struct serve *s, int client, struct sbx_error *err)
{
  if (connect_request_read (client, &s->req, err) < 0)
    return -1;
  if (dup2 (s->req.fds[0], 0) < 0 || dup2 (s->req.fds[1], 1) < 0 || dup2 (s->req.fds[2], 2) < 0
      || fchdir (s->req.fds[3]) < 0)
    {
      sbx_error_set (err, errno, "the client's stdio or cwd");
      connect_reply_status (client, SBX_EXIT_SETUP);
      return -1;
    }
  for (int i = 0; i < 4; i++)
    close (s->req.fds[i]);
  environ = s->req.env;
  return 0;
}

/* python's command line in a worker: the server's options, then the client's. */
char **
run_argv (struct serve *s, char **argv, size_t argc, int *out)
{
  char **all = xmalloc0 ((1 + s->n_defaults + argc + 1) * sizeof *all);
  size_t n = 0;
  all[n++] = "python";
  for (size_t i = 0; i < s->n_defaults; i++)
    all[n++] = s->defaults[i];
  for (size_t i = 0; i < argc; i++)
    all[n++] = argv[i];
  *out = (int) n;
  return all;
}
