/* The Python sandbox's subcommands: python.c, bundle.c, check.c. */
#ifndef SBX_SANDBOX_COMMANDS_H
#define SBX_SANDBOX_COMMANDS_H

#include "runtime/base/cli.h"

extern const struct command cmd_python, cmd_bundle, cmd_check, cmd_serve;

#endif
