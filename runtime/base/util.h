/* Small helpers used everywhere: cleanup attributes, ownership transfer,
 * errno-preserving close, checked allocation. */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__ ((cleanup (f)))
#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))
#define UNLIKELY(x) __builtin_expect (!!(x), 0)

/* Allocation failed: says so on stderr and ends the process with SIGABRT. Not
 * abort(3): musl's signals the thread id it cached for the calling thread, which in
 * a clone3 child of the runtime (the init, the reaper) is still the parent's. */
void sbx_out_of_memory (void) __attribute__ ((noreturn));

static inline void
freep (void *p)
{
  free (*(void **) p);
}

/* Close without clobbering errno: cleanup runs on error paths whose errno the
 * caller still reports. */
static inline void
close_preserve_errno (int fd)
{
  int saved = errno;
  close (fd);
  errno = saved;
}

static inline void
closep (int *fd)
{
  if (*fd >= 0)
    close_preserve_errno (*fd);
}

static inline void
free_strv (char **v)
{
  if (v)
    for (char **p = v; *p; p++)
      free (*p);
  free (v);
}

static inline void
free_strvp (char ***v)
{
  free_strv (*v);
}

#define _cleanup_free_ _cleanup_ (freep)
#define _cleanup_close_ _cleanup_ (closep)
#define _cleanup_strv_ _cleanup_ (free_strvp)

/* Hand an fd or pointer to a new owner: the local variable no longer frees it. */
static inline int
steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}
#define steal_pointer(pp)                 \
  ({                                      \
    __typeof__ (*(pp)) _stolen = *(pp);   \
    *(pp) = NULL;                         \
    _stolen;                              \
  })

void *xmalloc0 (size_t n);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xmemdup (const void *src, size_t n);
/* write(2) until done, EINTR retried; gives up silently when the reader is gone (logs,
 * relayed output: nobody left to tell). */
void fd_write_all (int fd, const char *buf, size_t len);
/* One sendmsg of buf with fds attached (SCM_RIGHTS, at most 16): what sendmsg returns. */
ssize_t fd_send_with_fds (int sock, const void *buf, size_t len, const int *fds, size_t n);
/* The pid a pidfd refers to (its /proc/self/fdinfo "Pid:"), or -1 (gone: 0 is not
   returned either). */
pid_t pidfd_pid (int pidfd);
/* One recvmsg (MSG_DONTWAIT) into buf, and the first fd it carried in *fd (-1 if none;
   close-on-exec; any further ones closed): what recvmsg returns. */
ssize_t fd_recv_with_fd (int sock, void *buf, size_t len, int *fd);
/* Is path dir itself or below it ("/usr/lib" is under "/usr", "/usrx" is not)? Both
 * absolute and without "." or ".." components. */
bool path_is_under (const char *path, const char *dir);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* Now as RFC 3339 in UTC with nanoseconds ("2026-11-23T17:53:32.123456789Z"); 40 bytes suffice. */
void rfc3339_now (char *buf, size_t len);

static inline bool
str_eq (const char *a, const char *b)
{
  return a && b && strcmp (a, b) == 0;
}

static inline bool
str_has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

size_t strv_len (char *const *v);

/* v in decimal at buf (room for 20 digits), not terminated; returns the length.
 * For the hot path, where snprintf's ~700 instructions a call added up. */
size_t fmt_u64 (char *buf, uint64_t v);

#endif
