/* linux.seccomp: compiled in the parent (before clone), loaded by the init as its
 * last step before exec.
 *
 * - libseccomp builds the filter; in front of it a small stub returns ENOSYS for any
 *   native syscall numbered above the highest one the profile names, so a program
 *   (glibc) falls back on syscalls newer than the profile instead of failing with the
 *   default errno (runc's "ENOSYS stub").
 * - Unknown syscall names are skipped with a warning in rules that allow (or that
 *   deny what the default already denies), and are an error in rules that deny under an
 *   allowing default: a denial that silently does nothing fails open.
 * - The compiled program is cached in the state root under a SHA-256 of the seccomp
 *   section (plus libseccomp's and our version), so a repeated run does not recompile.
 * - SCMP_ACT_NOTIFY: the listener fd is sent with the container process state to
 *   listenerPath (config-linux.md "The Container Process State"). */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <sys/types.h>

#include "oci/seccomp_config.h"
#include "oci/state.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"

struct seccomp_program
{
  struct sock_filter *insns;
  size_t n;
  unsigned int flags; /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
  bool notify;
  bool allows_execveat; /* unconditionally: the exec trampoline can run (exec_trampoline.h) */
};

/* Compile (or take from the cache in cache_dir, which may be NULL) into *out, which
 * starts zeroed. Deferred rules are parsed (oci_seccomp_load_rules) only when the cache
 * has no entry: what else a caller needs to know of them (notify, allows_execveat) is
 * kept with the program. Without `compile`, a miss stops after the rules (out->insns
 * stays NULL: the caller only wanted to know); a second call with `compile` finishes
 * it, and returns at once after a hit. */
int sbx_seccomp_prepare (struct oci_seccomp *s, const char *cache_dir, bool compile, struct sbx_log *log,
                         struct seccomp_program *out, struct sbx_error *err);
void sbx_seccomp_free (struct seccomp_program *p);
/* Load into the calling process; with notify, returns the listener fd in *notify_fd. */
int sbx_seccomp_load (const struct seccomp_program *p, int *notify_fd, struct sbx_error *err);
/* Send the listener fd and the process state to the agent (already connected fd). */
int sbx_seccomp_send_notify (int sock, int notify_fd, pid_t host_pid, const char *metadata,
                            const struct sbx_state *state, struct sbx_error *err);

#endif
