/* The Python sandbox's subcommands: bundle.c, check.c (python.c's run is the `python`
 * command's without --connect: runtime/serve/commands.h). */
#ifndef SBX_SANDBOX_COMMANDS_H
#define SBX_SANDBOX_COMMANDS_H

#include "runtime/base/cli.h"

extern const struct command cmd_bundle, cmd_check;

#endif
