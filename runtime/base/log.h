/* Logging: errors and warnings go to stderr as one line each and, with --log, to the
 * log file as text (logrus style, what runc writes) or JSON lines
 * {"level","msg","time"} (--log-format json, what podman and containerd read).
 * The file is opened on first use: a run that logs nothing never opens it. */
#ifndef SBX_LOG_H
#define SBX_LOG_H

#include <stdbool.h>

enum sbx_log_level
{
  SBX_LOG_ERROR,
  SBX_LOG_WARNING,
  SBX_LOG_INFO,
  SBX_LOG_DEBUG,
};

struct sbx_log
{
  const char *path; /* --log FILE, or NULL */
  bool json;        /* --log-format json */
  bool debug;       /* --debug */
  int fd;           /* -1 until first use */
};

void sbx_log_init (struct sbx_log *l);
void sbx_log_write (struct sbx_log *l, enum sbx_log_level level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* For oci_parse_ctx.warn. */
void sbx_log_warn_cb (void *log, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#define sbx_warn(ctx, ...) sbx_log_write (&(ctx)->log, SBX_LOG_WARNING, __VA_ARGS__)
#define sbx_debug(ctx, ...)                                 \
  do                                                        \
    {                                                       \
      if ((ctx)->log.debug)                                 \
        sbx_log_write (&(ctx)->log, SBX_LOG_DEBUG, __VA_ARGS__); \
    }                                                       \
  while (0)

#endif
