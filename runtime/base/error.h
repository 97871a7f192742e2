/* One error type carried up the stack.
 *
 * Rules (see DEVELOPERS.md "Errors"):
 *  - A function that can fail returns 0 (or a non-negative value) on success and a
 *    negative value on failure, and fills the caller's `struct sbx_error *err`.
 *  - The first failure calls sbx_error_set() with the errno (0 when none applies) and
 *    a short message; every caller on the way up may add context with
 *    sbx_error_wrap(), giving "mount /proc: open_tree: Operation not permitted".
 *  - Only runtime/cli/main.c prints an error and chooses the exit status.
 */
#ifndef SBX_ERROR_H
#define SBX_ERROR_H

#include <stdarg.h>

/* Exit status hints an error may carry; main uses 1 when none is set. */
enum sbx_exit_hint {
  SBX_EXIT_DEFAULT = 0,
  SBX_EXIT_USAGE = 2,          /* bad command line */
  SBX_EXIT_SETUP = 125,        /* `python`: the sandbox could not be set up (podman's 125) */
  SBX_EXIT_NOT_EXECUTABLE = 126,
  SBX_EXIT_NOT_FOUND = 127,    /* the program to run does not exist */
};

struct sbx_error {
  int errnum;    /* errno value, 0 when the failure has no errno */
  int exit_hint; /* enum sbx_exit_hint */
  char *msg;     /* owned; NULL when no error is set */
};

/* Set the error (replacing any previous one) and return -1. */
int sbx_error_set (struct sbx_error *err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
int sbx_error_setv (struct sbx_error *err, int errnum, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 3, 0)));
/* Prefix the message with context ("<context>: <msg>") and return -1. */
int sbx_error_wrap (struct sbx_error *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* The full one-line message: "<msg>: <strerror(errnum)>" (newlines flattened).
 * Returns a newly allocated string. */
char *sbx_error_string (const struct sbx_error *err);
void sbx_error_clear (struct sbx_error *err);
static inline int sbx_error_is_set (const struct sbx_error *err) { return err->msg != 0; }

#endif
