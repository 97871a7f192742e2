/* CVE-2019-5736: a container whose root is the host's root (no user namespace) can
 * make its init exec /proc/self/exe (directly, or as a #! interpreter), which is the
 * runtime binary, then reopen that inode for writing once it is no longer running
 * and overwrite the host's sbx-oci. Running from a sealed memfd copy closes this:
 * /proc/self/exe is then a memfd whose seals forbid writes, even by root.
 *
 * It costs a copy of the binary and one more exec (about a millisecond), so it is
 * done only for containers without a user namespace; in one, container root is an
 * unprivileged host uid that cannot write the root-owned binary anyway. */
#ifndef SBX_SEALED_EXE_H
#define SBX_SEALED_EXE_H

#include "error.h"

/* main() stores its argv here: the re-exec repeats the same command. */
extern char **sbx_main_argv;

/* Return 0 if we already run from a sealed memfd; otherwise re-exec from one (does
 * not return on success). */
int sealed_exe_ensure (struct sbx_error *err);

#endif
