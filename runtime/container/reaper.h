/* The container's own minimal init, asked for with the annotation
 * `run.sbx-oci.init: "true"` (what `podman run --init` does with catatonit, without
 * a binary in the rootfs): pid 1 of the container forwards signals to the program and
 * reaps orphans, and the program is pid 2.
 *
 * Why: the init of a pid namespace gets no signal it has no handler for. A program
 * that is pid 1 survives `kill -TERM` (so the runtime's forwarded SIGTERM does not
 * stop it), its own abort(), and RLIMIT_CPU's SIGXCPU; it leaves orphans unreaped.
 * The Python sandbox turns it on.
 *
 * The init is a clone of the runtime that never execs: after the fork it closes every
 * fd but the status fd, takes the program's user with no capability and
 * no_new_privs, and loops on sigwaitinfo. When the program ends it writes the
 * program's raw wait status to the status fd (a foreground run reads it, so a
 * program killed by SIGTERM is reported as such) and exits with 128+N or the
 * program's exit code, taking everything left in the namespace with it. */
#ifndef SBX_REAPER_H
#define SBX_REAPER_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"

#define REAPER_ANNOTATION "run.sbx-oci.init"

/* Whether the config asks for it ("true"; "false" or absent: no), and whether to hold
 * ("hold": the init does not start the program but only holds the container, its
 * namespaces, cgroup and mounts, for a process that joins it: the warm runs of
 * `sbx-oci serve`, whose interpreter joins as pid 2). */
int reaper_wanted (const struct oci_config *c, bool *wanted, bool *hold, struct sbx_error *err);
/* "hold": become the init without a program, with the program's user and no
 * capability, and close every fd but status_fd (the sync socket's EOF tells the
 * runtime the container runs). Reaps what ends, passes signals on to pid 2. */
void reaper_hold (const struct oci_process *p, bool setgroups_allowed, bool pdeathsig, int status_fd,
                  struct sbx_log *log) __attribute__ ((noreturn));
/* Fork: returns 0 in the child, which goes on to become the program. The parent
 * becomes the reaper and never returns. status_fd may be -1; pdeathsig: die with the
 * runtime (a foreground run), re-armed after the reaper's uid change. Landlock, if any, is
 * the caller's to apply first: both must be in one domain to signal each other. */
int reaper_fork (const struct oci_process *p, bool setgroups_allowed, bool pdeathsig, int status_fd, struct sbx_log *log,
                 struct sbx_error *err);

#endif
