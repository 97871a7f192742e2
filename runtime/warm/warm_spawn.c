/* libsbx-warm.so's entry points: the engine's `exec`, loaded into a warm Python
 * interpreter (the zygote of `sbx-oci serve`), for the interpreter's copy to become a
 * process of a created sandbox without an exec, keeping what it imported.
 *
 * The library is the engine built for the host's C library (a Python interpreter is
 * linked with glibc, the runtime with musl); everything in it but these functions is
 * hidden. The caller is the zygote, which only the server talks to:
 *
 *   int sbx_warm_spawn (const char *state_root, const char *id, const int fds[4],
 *                       const int *join_fds, size_t n_join, char *errbuf, size_t errlen)
 *
 * copies the caller (clone3, no exec) straight into container ID under STATE_ROOT's
 * pid namespace and cgroup: the copy takes FDS as its 0 to 3 (stdin, stdout, stderr,
 * the run channel), closes every other fd, and joins the container as `sbx-oci exec`
 * does (its namespaces and root, by JOIN_FDS when given, which the sandbox's holding
 * init sent: runtime/container/join_fds.h; its process's user, rlimits, capabilities,
 * no_new_privs and seccomp filter; its Landlock rules are made in the join and
 * applied by the process itself, before any program, with sbx_warm_restrict).
 * Returns twice: 0 in the copy, which is now that process; its pid in the caller
 * once the copy has joined. The caller (its parent) reaps it (its
 * status and rusage are the run's). -1 and a message in errbuf if the join failed
 * (nothing is left to reap then).
 *
 * The caller reads the container's state and config here, and keeps in its memory
 * what the engine freed: the zygote calls this itself only for a standby (a sandbox of
 * the server's options, no client's data in its config), one copy of the interpreter
 * per run; any other run's process is spawned by a throwaway copy of the zygote
 * (runtime/warm/warm_serve.c: spawn_through_copy). The pid namespace is entered for
 * children only, and left again, in the caller. */
#include "build-config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/container.h"
#include "runtime/linux/namespaces.h"

__attribute__ ((visibility ("default"))) int sbx_warm_spawn (const char *state_root, const char *id,
                                                             const int fds[4], const int *join_fds, size_t n_join,
                                                             char *errbuf, size_t errlen);
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
sbx_warm_spawn (const char *state_root, const char *id, const int fds[4], const int *join_fds, size_t n_join,
                char *errbuf, size_t errlen)
{
  struct sbx_ctx ctx = { 0 };
  struct sbx_error err = { 0 };
  bool in_child = false;
  pid_t pid = -1;
  int status = 0, pidfd = -1;
  /* nothing is exec'd: only the name is asked for */
  static char *no_program[] = { "(warm)" };
  struct exec_opts o = { .id = id, .in_process = true, .in_child = &in_child, .preserve_fds = 1,
                         .args = no_program, .n_args = 1, .deferred_landlock = &deferred,
                         .spawned_pid = &pid, .spawned_pidfd = &pidfd, .child_fds = fds,
                         .join_fds = n_join ? join_fds : NULL, .n_join_fds = n_join };
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
  close (pidfd); /* the caller reaps by pid: its child, and not reaped until then */
  return pid;
}
