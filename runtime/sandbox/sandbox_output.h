/* The sandboxed program's output streams (sandbox_output.c). */
#ifndef SBX_SANDBOX_OUTPUT_H
#define SBX_SANDBOX_OUTPUT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct output_stream
{
  int fd;          /* the pipe's read end; -1 once at EOF */
  int out_fd;      /* copied to this fd; -1: collected in buf instead */
  uint64_t cap;    /* bytes passed on at most */
  uint64_t total;  /* bytes the program wrote */
  uint64_t passed; /* bytes passed on */
  bool truncated;
  char *buf; /* collected output (out_fd -1), NUL-terminated */
  size_t len;
  int null_fd; /* /dev/null once truncated (-1 not yet, -2 splice does not work here) */
  /* A text looked for in every byte read (NULL: none), also across reads; found says
   * it was. Past the cap the bytes are spliced away unread, so unseen. */
  const char *watch;
  bool found;
  char tail[32]; /* the last bytes read, to find a watch split by two reads */
  size_t tail_len;
};

/* fg_watch.on_fds for an array of streams, fds[i] being streams[i].fd. */
void output_on_ready (void *data, struct pollfd *fds, size_t n);
/* After the program is gone: read each stream to EOF (waiting at most timeout_ms for
 * data each time: whatever still holds a write end is dead or about to be). */
void output_drain (struct output_stream *streams, size_t n, int timeout_ms);
/* What is in the pipes now, and no more (a writer that goes on is not waited for):
   then they are closed. */
void output_drain_now (struct output_stream *streams, size_t n);
void output_stream_free (struct output_stream *s);

#endif
