/* The last steps before exec, shared by the container init and `exec`: become the
 * configured process (limits, user, capabilities, no_new_privs, seccomp), in the one
 * order that works: seccomp(2) needs no_new_privs or CAP_SYS_ADMIN, so without
 * no_new_privs the filter goes in while we are still privileged, and only the user
 * switch (setgroups, setresgid, setresuid, capset, prctl: what runc and crun make
 * there too) runs under it; with it, the filter goes in last and nothing of the
 * setup runs under it. Whatever does not depend on the user is done before. */
#ifndef SBX_PROCESS_BECOME_H
#define SBX_PROCESS_BECOME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci/config.h"
#include "oci/state.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"

struct seccomp_program;
struct landlock_plan;

struct become_args
{
  const struct seccomp_program *seccomp; /* NULL: no filter */
  int seccomp_listener_fd;                /* SCMP_ACT_NOTIFY agent, connected; -1 if none */
  const char *seccomp_metadata;
  const struct sbx_state *state; /* sent to the notify agent */
  pid_t host_pid;                /* our pid as the host sees it */
  bool setgroups_allowed;
  bool keep_groups; /* OCI_KEEP_GROUPS_ANNOTATION: no setgroups at all */
  struct sbx_log *log;
  int preserve_fds; /* fds 3..3+N-1 stay open across exec */
  bool pdeathsig;   /* re-arm SIGKILL-on-parent-death after the uid change */
  int pty_slave;    /* becomes stdio and the controlling tty; -1 if none */
  const struct landlock_plan *landlock; /* NULL or abi 0: none */
};

/* Default dispositions and an empty mask for every signal. */
void process_reset_signals (void);
/* chdir to cwd, resolved inside "/" with no magic links: a cwd of /proc/self/fd/N
 * can never reach a host directory (CVE-2024-21626). */
int process_enter_cwd (const char *cwd, struct sbx_error *err);
/* Close every fd from `lowest` up except those in keep[] (sorted in place): what the
 * caller left open (a shim's stray fd 3, a host file) must not sit in a container
 * process even until exec (CVE-2024-21626); O_CLOEXEC alone would leave it there. */
void process_close_fds_except (int lowest, int *keep, size_t n);
/* Fill the holes in fds 3..3+n-1 (--preserve-fds n) with close-on-exec placeholders
 * before the runtime opens anything: see process_become.c. */
void process_reserve_preserved_fds (int n);
/* Everything from rlimits to the seccomp filter; the caller execs next. */
int process_become (const struct oci_process *p, struct become_args *b, struct sbx_error *err);

#endif
