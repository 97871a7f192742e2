/* CVE-2019-5736: a container whose root is the host's root (no user namespace) can
 * make its init exec /proc/self/exe (directly, or as a #! interpreter), which is the
 * runtime binary, then reopen that inode for writing once it is no longer running
 * and overwrite the host's sbx-oci. Running through a private read-only bind mount
 * of the binary closes this: /proc/self/exe is then a path on a read-only mount, and
 * reopening it for writing fails with EROFS, even for root (sealed_exe.c).
 *
 * It costs one more exec, so it is skipped only where the container cannot write the
 * binary anyway: a new user namespace whose uidMappings do not map the binary's
 * owner (the Python sandbox maps one unprivileged host id). A joined user namespace,
 * or one that maps host root (a config without mappings run as root maps the caller,
 * 0), is sealed like no user namespace at all. */
#ifndef SBX_SEALED_EXE_H
#define SBX_SEALED_EXE_H

#include <stdbool.h>

#include "oci/config.h"
#include "runtime/base/error.h"

/* main() stores its argv here: the re-exec repeats the same command. */
extern char **sbx_main_argv;

/* Return 0 if we already run from a read-only mount; otherwise re-exec through one
 * (does not return on success). */
int sealed_exe_ensure (struct sbx_error *err);
/* Whether a container with this linux section needs the sealed binary (above). */
bool sealed_exe_needed (const struct oci_linux *l);

#endif
