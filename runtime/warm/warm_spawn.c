/* libsbx-warm.so's entry points: the engine's `exec`, loaded into a warm Python
 * interpreter (the zygote of `sbx-oci serve`), for the interpreter's copy to become a
 * process of a created sandbox without an exec, keeping what it imported.
 *
 * The library is the engine built for the host's C library (a Python interpreter is
 * linked with glibc, the runtime with musl); everything in it but these functions is
 * hidden. The caller is the zygote, which only the server talks to:
 *
 *   int sbx_warm_spawn (const char *state_root, const char *id, const int fds[4],
 *                       char *errbuf, size_t errlen)
 *
 * copies the caller (clone3, no exec) straight into container ID under STATE_ROOT's
 * pid namespace and cgroup: the copy takes FDS as its 0 to 3 (stdin, stdout, stderr,
 * the run channel), closes every other fd, and joins the container as `sbx-oci exec`
 * does (its namespaces and root; its process's user, rlimits, capabilities,
 * no_new_privs and seccomp filter; its Landlock rules are made in the join and
 * applied by the process itself, before any program, with sbx_warm_restrict).
 * Returns twice: 0 in the copy, which is now that process; its pid in the caller
 * once the copy has joined. The caller (its parent) reaps it (its
 * status and rusage are the run's). -1 and a message in errbuf if the join failed
 * (nothing is left to reap then).
 *
 * One copy of the interpreter per run: the zygote's own child is the process (the
 * pid namespace is entered for children only, and left again, in the caller). */
#include "build-config.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container.h"
#include "runtime/namespaces.h"

__attribute__ ((visibility ("default"))) int sbx_warm_spawn (const char *state_root, const char *id,
                                                             const int fds[4], char *errbuf, size_t errlen);
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

/* What the zygote reads for a run (the container's state and config: the run's
   program, --env values, host paths) must not stay in its memory, which every later
   run is a copy of. glibc's M_PERTURB overwrites each chunk as it is freed (the
   zygote runs without the per-thread cache, whose frees skip that: GLIBC_TUNABLES
   glibc.malloc.tcache_count=0, runtime/serve/interpreter.c); the stack the join's
   calls used is cleared after them. The copy turns both off at once: its program's
   allocations are its own. */
#define SCRUB_BYTE 0x5a
#define SCRUB_STACK (256 * 1024)

/* container_exec with the options of a warm spawn: 0, or -1 and why in errbuf. */
static int __attribute__ ((noinline))
spawn (const char *state_root, const char *id, const struct exec_opts *o, char *errbuf, size_t errlen)
{
  struct sbx_ctx ctx = { 0 };
  struct sbx_error err = { 0 };
  int status = 0;
  sbx_log_init (&ctx.log);
  ctx.root = state_root;
  ctx.as_root = geteuid () == 0;
  ctx.host_root = ctx.as_root && userns_self_is_initial ();
  if (container_exec (&ctx, o, &status, &err) < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      snprintf (errbuf, errlen, "%s", msg ? msg : "exec failed");
      sbx_error_clear (&err);
      return -1;
    }
  return 0;
}

static void __attribute__ ((noinline))
scrub_stack (void)
{
  char area[SCRUB_STACK];
  explicit_bzero (area, sizeof area);
  __asm__ volatile ("" : : "r"(area) : "memory");
}

int
sbx_warm_spawn (const char *state_root, const char *id, const int fds[4], char *errbuf, size_t errlen)
{
  bool in_child = false;
  pid_t pid = -1;
  int pidfd = -1;
  /* nothing is exec'd: only the name is asked for */
  static char *no_program[] = { "(warm)" };
  struct exec_opts o = { .id = id, .in_process = true, .in_child = &in_child, .preserve_fds = 1,
                         .args = no_program, .n_args = 1, .deferred_landlock = &deferred,
                         .spawned_pid = &pid, .spawned_pidfd = &pidfd, .child_fds = fds };
  int r;
  mallopt (M_PERTURB, SCRUB_BYTE);
  r = spawn (state_root, id, &o, errbuf, errlen);
  mallopt (M_PERTURB, 0);
  if (r == 0 && in_child)
    return 0;
  scrub_stack ();
  if (r < 0)
    return -1;
  close (pidfd); /* the caller reaps by pid: its child, and not reaped until then */
  return pid;
}
