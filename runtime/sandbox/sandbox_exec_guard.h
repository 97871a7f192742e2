/* `sbx-oci python --no-subprocess`: a supervisor that lets the interpreter's exec
 * through and refuses every later one (sandbox_exec_guard.c says how and why). */
#ifndef SBX_SANDBOX_EXEC_GUARD_H
#define SBX_SANDBOX_EXEC_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "runtime/base/error.h"

#define EXEC_GUARD_MAX_PATHS 16 /* refused paths reported; the count goes on */
#define EXEC_GUARD_PATH_MAX 255

struct exec_guard
{
  char *listener_path; /* linux.seccomp.listenerPath, valid in this process */
  pid_t pid;           /* the supervisor */
  int report_fd, dirfd;
  char *name;
  bool bound;
  /* after exec_guard_finish: what the sandbox tried */
  unsigned long refused;
  char *paths[EXEC_GUARD_MAX_PATHS];
  size_t n_paths;
};

/* The python profile (text) with its exec rule sent to listener_path; NULL if the
 * profile has no such rule (it must be the one config/seccomp/profiles.py writes). */
char *exec_guard_profile (const char *profile, const char *listener_path);
/* Start the supervisor, its socket in state_root. */
int exec_guard_start (struct exec_guard *g, const char *state_root, struct sbx_error *err);
/* After the run (or a failed setup: wait_for_report false): stop and reap the
 * supervisor, remove its socket, and read what it refused. */
void exec_guard_finish (struct exec_guard *g, bool wait_for_report);
void exec_guard_free_paths (struct exec_guard *g);

#endif
