/* CVE-2019-5736 for a one-shot `run`, without re-executing the runtime.
 *
 * sealed_exe.h has the attack: in a container without a user namespace, whatever
 * resolves /proc/self/exe inside the container (an entrypoint "/proc/self/exe", a
 * "#!/proc/self/exe" script, an ELF interpreter path) must never reach the runtime's
 * writable binary. The sealed re-exec guarantees it for every process the runtime
 * ever has, at the cost of one more exec of a 2 MB static binary: ~0.5 ms, most of it
 * glibc's start-up asking cpuid some 70 times, each a VM exit on a virtual machine.
 *
 * A foreground `run` whose init is alone in a new pid namespace needs less. There,
 * the only moment anything in the container can resolve /proc/self/exe while it
 * names the runtime is the init's final execve, and nothing else in the container
 * can reach a runtime process: the init is its first and only process until then
 * and is not dumpable, and the runtime waiting outside is in the host's pid
 * namespace and made non-dumpable too (so even a bind of the host's /proc shows
 * its exe only to a holder of CAP_SYS_PTRACE, which owns the host anyway). So the
 * init makes that last exec from a sealed memfd holding a tiny program with no libc
 * (exec_trampoline_prog.c), which execs the container's program: /proc/self/exe at
 * that moment is the sealed memfd, which nobody can write.
 *
 * The state dir stays locked until that exec is done, so an `exec` (which reads
 * the state under the lock) cannot join the container while its pid 1 is still the
 * runtime: with CAP_SYS_PTRACE a joined process could open /proc/1/exe.
 *
 * Everything else keeps the sealed re-exec: `create` (an `exec` may join before
 * `start`), `exec`, a joined or absent pid namespace, hooks that run before the
 * program (they may run image code next to the init), the container's own init
 * (it stays the runtime binary, as pid 1), an SELinux label or AppArmor profile (they
 * apply to the next exec: the trampoline's), a non-root user under no_new_privs with
 * permitted capabilities beyond the ambient ones (a second exec would lose them), a
 * seccomp profile that does not allow execveat outright, and kernels that refuse
 * executable memfds. */
#ifndef SBX_EXEC_TRAMPOLINE_H
#define SBX_EXEC_TRAMPOLINE_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"

/* The config-only part of the decision, before planning (no user namespace is the
 * caller's business): a foreground run, a new pid namespace, no pre-exec hooks, no
 * own init, no LSM label, capabilities that survive a second exec. */
bool exec_trampoline_may_fit (const struct oci_config *c, bool foreground_run);

/* The rest, after planning: the trampoline execs with execveat, so the seccomp
 * profile must allow it unconditionally (a rule that errors, kills, traces or only
 * allows some arguments would break the run; every profile in config/seccomp/ has
 * the allow): the caller says so (seccomp_program.allows_execveat, or no profile).
 * Returns a sealed, executable memfd of the trampoline, or -1 when it does not fit
 * (the caller then re-execs sealed). */
int exec_trampoline_open (bool execveat_allowed);

/* The init's last step: exec `path` (the program looked up) with the process's
 * args and env through the trampoline, handing it `sync_fd` to report a failed exec
 * (the caller clears its close-on-exec flag beforehand, before any seccomp filter;
 * the trampoline sets it again). Returns -1 with *err set only if the trampoline
 * itself could not be executed. */
int exec_trampoline_exec (int trampoline_fd, int sync_fd, const char *path, const struct oci_process *p,
                          char *const *env, struct sbx_error *err);

#endif
