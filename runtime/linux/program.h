/* Finding and executing the container's program: execvp semantics, with PATH taken
 * from process.env (not the runtime's), resolved inside the container. A missing
 * program is exit 127, a non-executable one 126, with a message that says so
 * (podman turns the former into "command not found"). */
#ifndef SBX_PROGRAM_H
#define SBX_PROGRAM_H

#include "oci/config.h"
#include "runtime/base/error.h"

char *program_lookup (const struct oci_process *p, struct sbx_error *err);
/* process.env for exec, with HOME added when it has none (from the container's
 * /etc/passwd, else "/"): called in the container, before the user switch. */
char **program_env (const struct oci_process *p);
int program_exec (const char *path, const struct oci_process *p, char *const *env, struct sbx_error *err);

#endif
