/* Finding and executing the container's program: execvp semantics, with PATH taken
 * from process.env (not the runtime's), resolved inside the container. A missing
 * program is exit 127, a non-executable one 126, with a message that says so
 * (podman turns the former into "command not found"). */
#ifndef SBX_PROGRAM_H
#define SBX_PROGRAM_H

#include "oci/config.h"
#include "runtime/base/error.h"

char *program_lookup (const struct oci_process *p, struct sbx_error *err);
int program_exec (const char *path, const struct oci_process *p, struct sbx_error *err);

#endif
