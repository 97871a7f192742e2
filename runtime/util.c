#include "build-config.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>

/* Allocation failure in a short-lived CLI process has no useful recovery:
 * report and abort rather than thread ENOMEM through every caller. */
static void __attribute__ ((noreturn))
oom (void)
{
  static const char msg[] = "sbx-oci: out of memory\n";
  (void) !write (2, msg, sizeof msg - 1);
  abort ();
}

void *
xmalloc0 (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  if (!p)
    oom ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  void *q = realloc (p, n ? n : 1);
  if (!q)
    oom ();
  return q;
}

/* A copy of n bytes, NUL-terminated (for text buffers). */
char *
xmemdup (const void *src, size_t n)
{
  char *p = xmalloc0 (n + 1);
  memcpy (p, src, n);
  return p;
}

char *
xstrdup (const char *s)
{
  char *p = strdup (s ? s : "");
  if (!p)
    oom ();
  return p;
}

char *
xasprintf (const char *fmt, ...)
{
  char *out;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&out, fmt, ap) < 0)
    oom ();
  va_end (ap);
  return out;
}

size_t
strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

void
fd_write_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      buf += n;
      len -= (size_t) n;
    }
}

bool
path_is_under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}
