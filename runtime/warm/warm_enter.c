/* libsbx-warm.so's one entry point: the engine's `exec`, loaded into a warm Python
 * interpreter (the zygote of `sbx-oci serve`), for the interpreter's fork to become a
 * process of a created sandbox without an exec, keeping what it imported.
 *
 * The library is the engine built for the host's C library (a Python interpreter is
 * linked with glibc, the runtime with musl); everything in it but this function is
 * hidden. The caller is a fork of the zygote, which only the server talks to:
 *
 *   int sbx_warm_enter (const char *state_root, const char *id, long long info[5],
 *                       char *errbuf, size_t errlen)
 *
 * joins container ID under STATE_ROOT as `sbx-oci exec` does (its namespaces, cgroup
 * and root; its process's user, rlimits, capabilities, no_new_privs and seccomp
 * filter; every fd but 0-3 closed; its Landlock rules are made and applied by the
 * process itself, before any program, with sbx_warm_restrict) and returns twice: 0 in the copy that
 * is now that process, 1 in the caller once the copy has ended, with info: the exit
 * status as the runtime reports it (128+N for signal N), the signal (0 if it exited),
 * user and system CPU time in microseconds and the largest RSS in KiB (rusage: the
 * process and what it waited for). -1 and a message in errbuf if the join failed. */
#include "build-config.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container.h"
#include "runtime/namespaces.h"

__attribute__ ((visibility ("default"))) int sbx_warm_enter (const char *state_root, const char *id,
                                                             long long info[5], char *errbuf, size_t errlen);
__attribute__ ((visibility ("default"))) int sbx_warm_restrict (char *errbuf, size_t errlen);

/* The sandbox's Landlock rules, made in the join and applied by the process itself
   when its program comes (sbx_warm_restrict): a standby's /work may have the client's
   workdir mounted over it in between (runtime/serve/standby_workdir.c), and Landlock
   holds to the directories that exist when its rules are made. */
static struct landlock_plan deferred;
static bool restricted;

int
sbx_warm_restrict (char *errbuf, size_t errlen)
{
  struct sbx_error err = { 0 };
  if (restricted)
    return 0;
  if (landlock_apply (&deferred, &err) < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      snprintf (errbuf, errlen, "%s", msg ? msg : "landlock failed");
      sbx_error_clear (&err);
      return -1;
    }
  restricted = true;
  return 0;
}

int
sbx_warm_enter (const char *state_root, const char *id, long long info[5], char *errbuf, size_t errlen)
{
  struct rusage ru = { 0 };
  int status = -1, sig = 0;
  struct sbx_ctx ctx = { 0 };
  struct sbx_error err = { 0 };
  bool in_child = false;
  /* fd 3: the program, its arguments and environment, for the process to read */
  static char *no_program[] = { "(warm)" }; /* nothing is exec'd: only the name is asked for */
  struct exec_opts o = { .id = id, .in_process = true, .in_child = &in_child, .preserve_fds = 1,
                         .args = no_program, .n_args = 1, .rusage = &ru, .term_signal = &sig,
                         .deferred_landlock = &deferred };
  sbx_log_init (&ctx.log);
  ctx.root = state_root;
  ctx.as_root = geteuid () == 0;
  ctx.host_root = ctx.as_root && userns_self_is_initial ();
  if (container_exec (&ctx, &o, &status, &err) < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      snprintf (errbuf, errlen, "%s", msg ? msg : "exec failed");
      sbx_error_clear (&err);
      return -1;
    }
  if (in_child)
    return 0;
  info[0] = status;
  info[1] = sig;
  info[2] = (long long) ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
  info[3] = (long long) ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
  info[4] = ru.ru_maxrss;
  return 1;
}
