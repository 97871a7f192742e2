#include "build-config.h"
#include "runtime/base/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void
sbx_log_init (struct sbx_log *l)
{
  memset (l, 0, sizeof *l);
  l->fd = -1;
}

/* logrus text format quotes msg with Go-style escapes. */
static char *
quote_text (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc0 (n * 2 + 3), *p = out;
  *p++ = '"';
  for (; *s; s++)
    {
      if (*s == '"' || *s == '\\')
        *p++ = '\\';
      *p++ = (*s == '\n' || *s == '\r') ? ' ' : *s;
    }
  *p++ = '"';
  return out;
}

/* JSON needs valid UTF-8; a path in a message may not be. Replace what is not. */
static char *
utf8_sanitize (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc0 (n + 1);
  const unsigned char *p = (const unsigned char *) s;
  size_t o = 0;
  while (*p)
    {
      int len = *p < 0x80 ? 1 : (*p >= 0xc2 && *p <= 0xdf) ? 2 : (*p >= 0xe0 && *p <= 0xef) ? 3
                : (*p >= 0xf0 && *p <= 0xf4) ? 4 : 0;
      bool ok = len > 0;
      for (int i = 1; ok && i < len; i++)
        ok = (p[i] & 0xc0) == 0x80;
      if (!ok)
        {
          out[o++] = '?';
          p++;
          continue;
        }
      memcpy (out + o, p, len);
      o += len;
      p += len;
    }
  out[o] = '\0';
  return out;
}

static void
write_file_line (struct sbx_log *l, enum sbx_log_level level, const char *msg)
{
  char now[64];
  if (l->fd < 0)
    {
      l->fd = open (l->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
      if (l->fd < 0)
        {
          char warn[512];
          int n = snprintf (warn, sizeof warn, "sbx-oci: cannot open log file %s: %s\n", l->path, strerror (errno));
          fd_write_all (2, warn, n);
          l->path = NULL;
          return;
        }
    }
  rfc3339_now (now, sizeof now);
  if (l->json)
    {
      yajl_gen g = gen_new (false);
      char *line = NULL;
      size_t len = 0;
      _cleanup_free_ char *clean = utf8_sanitize (msg);
      GEN (yajl_gen_map_open (g));
      GEN (gen_key_string (g, "level", level_names[level]));
      GEN (gen_key_string (g, "msg", clean));
      GEN (gen_key_string (g, "time", now));
      GEN (yajl_gen_map_close (g));
      line = gen_finish (g, &len);
      if (line)
        {
          line = xrealloc (line, len + 2);
          line[len] = '\n';
          fd_write_all (l->fd, line, len + 1);
          free (line);
        }
    gen_fail:
      if (!line)
        {
          /* still say something: an error the client cannot see is worse */
          static const char fallback[] = "{\"level\":\"error\",\"msg\":\"(message could not be encoded)\"}\n";
          fd_write_all (l->fd, fallback, sizeof fallback - 1);
        }
      yajl_gen_free (g);
    }
  else
    {
      _cleanup_free_ char *q = quote_text (msg);
      _cleanup_free_ char *line = xasprintf ("time=\"%s\" level=%s msg=%s\n", now, level_names[level], q);
      fd_write_all (l->fd, line, strlen (line));
    }
}

void
sbx_log_write (struct sbx_log *l, enum sbx_log_level level, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;
  if (level == SBX_LOG_DEBUG && !l->debug)
    return;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  if (!msg)
    return;
  for (char *p = msg; *p; p++)
    if (*p == '\n')
      *p = ' ';
  if (l->path)
    write_file_line (l, level, msg);
  /* stderr always gets errors and warnings; debug lines only when there is no log file. */
  if (level <= SBX_LOG_WARNING || !l->path)
    {
      _cleanup_free_ char *line = xasprintf ("sbx-oci: %s%s\n", level == SBX_LOG_ERROR ? "" : level == SBX_LOG_WARNING ? "warning: " : "debug: ", msg);
      fd_write_all (2, line, strlen (line));
    }
}

void
sbx_log_warn_cb (void *log, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  if (msg)
    sbx_log_write (log, SBX_LOG_WARNING, "%s", msg);
}
