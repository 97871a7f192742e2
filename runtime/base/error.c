#include "build-config.h"
#include "runtime/base/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
sbx_error_setv (struct sbx_error *err, int errnum, const char *fmt, va_list ap)
{
  char *msg = NULL;
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  free (err->msg);
  err->msg = msg ? msg : strdup ("out of memory");
  err->errnum = errnum;
  err->exit_hint = SBX_EXIT_DEFAULT;
  return -1;
}

int
sbx_error_set (struct sbx_error *err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  sbx_error_setv (err, errnum, fmt, ap);
  va_end (ap);
  return -1;
}

int
sbx_error_wrap (struct sbx_error *err, const char *fmt, ...)
{
  char *ctx = NULL, *joined = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&ctx, fmt, ap) < 0)
    ctx = NULL;
  va_end (ap);
  if (ctx && asprintf (&joined, "%s: %s", ctx, err->msg ? err->msg : "unknown error") >= 0)
    {
      free (err->msg);
      err->msg = joined;
    }
  free (ctx);
  return -1;
}

char *
sbx_error_string (const struct sbx_error *err)
{
  char *out = NULL;
  const char *msg = err->msg ? err->msg : "unknown error";
  int r;
  if (err->errnum > 0)
    r = asprintf (&out, "%s: %s", msg, strerror (err->errnum));
  else
    r = asprintf (&out, "%s", msg);
  if (r < 0)
    return NULL;
  /* One line, whatever a file name or a hook's output contained. */
  for (char *p = out; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return out;
}

void
sbx_error_clear (struct sbx_error *err)
{
  free (err->msg);
  err->msg = NULL;
  err->errnum = 0;
  err->exit_hint = SBX_EXIT_DEFAULT;
}
