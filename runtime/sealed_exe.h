/* CVE-2019-5736: a container whose root is the host's root (no user namespace) can
 * make its init exec /proc/self/exe (directly, or as a #! interpreter), which is the
 * runtime binary, then reopen that inode for writing once it is no longer running
 * and overwrite the host's sbx-oci. Running through a private read-only bind mount
 * of the binary closes this: /proc/self/exe is then a path on a read-only mount, and
 * reopening it for writing fails with EROFS, even for root (sealed_exe.c).
 *
 * It costs one more exec, so it is done only for containers without a user
 * namespace; in one, container root is an unprivileged host uid that cannot write
 * the root-owned binary anyway. */
#ifndef SBX_SEALED_EXE_H
#define SBX_SEALED_EXE_H

#include "runtime/base/error.h"

/* main() stores its argv here: the re-exec repeats the same command. */
extern char **sbx_main_argv;

/* Return 0 if we already run from a read-only mount; otherwise re-exec through one
 * (does not return on success). */
int sealed_exe_ensure (struct sbx_error *err);

#endif
