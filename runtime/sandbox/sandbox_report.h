/* What a warm run's program or a session's cell reported beyond its exit status
 * (runtime/warm/zygote.py, report_fd): the value of its last expression, its uncaught
 * exception, the matplotlib figures it drew. It comes from inside the sandbox, as
 * JSON on a memfd: it is read bounded, and only the known fields, of the known types
 * and within their caps, reach the result (sandbox_report.c). */
#ifndef SBX_SANDBOX_REPORT_H
#define SBX_SANDBOX_REPORT_H

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "runtime/base/error.h"

/* The whole report, at most (figures are base64 PNGs, capped by the zygote at 16 of
   8 MiB each; the rest is small). */
#define SANDBOX_REPORT_MAX (200u << 20)

struct sandbox_report
{
  yajl_val tree; /* NULL: none */
  char *raw;
};

/* Reads and parses the report on `fd` (not closed); an empty or unreadable one is an
   error, and leaves the report empty. */
int sandbox_report_read (int fd, struct sandbox_report *rep, struct sbx_error *err);
void sandbox_report_free (struct sandbox_report *rep);
/* Its fields into the result's open map: value, value_truncated, value_length,
   exception {type, message, traceback}, figures [{format, width, height, bytes,
   data}], figures_dropped. Nothing when the report is empty. */
yajl_gen_status sandbox_report_gen (yajl_gen g, const struct sandbox_report *rep);

#endif
