/* The subcommands of the warm half: serve (server.c) and python (client.c: with
 * --connect a client of serve, else the one-shot run of runtime/sandbox/python.c). */
#ifndef SBX_SERVE_COMMANDS_H
#define SBX_SERVE_COMMANDS_H

#include "runtime/base/cli.h"

extern const struct command cmd_python, cmd_serve;

#endif
