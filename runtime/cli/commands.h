/* The runc-compatible subcommands, one file each in runtime/cli/ (the Python sandbox's
 * are declared in runtime/sandbox/sandbox.h); main.c's table lists them all. */
#ifndef SBX_CLI_COMMANDS_H
#define SBX_CLI_COMMANDS_H

#include "runtime/base/cli.h"

extern const struct command cmd_create, cmd_start, cmd_run, cmd_state, cmd_kill, cmd_delete, cmd_list, cmd_spec,
    cmd_features, cmd_checkpoint, cmd_restore, cmd_exec, cmd_update, cmd_pause, cmd_resume, cmd_ps, cmd_events;

#endif
