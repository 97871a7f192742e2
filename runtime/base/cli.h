/* Subcommand option parsing shared by every subcommand (runtime/cli/, runtime/sandbox/): runc's spellings,
 * both "--x v" and "--x=v", -h/--help from the same table, and a one-line error
 * (exit 2) for anything unknown. */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "runtime/base/context.h"
#include "runtime/base/error.h"

struct cli_opt
{
  const char *name; /* long name */
  int key;          /* short option char, or >= 256 for long-only */
  int has_arg;      /* no_argument / required_argument / optional_argument */
  const char *arg;  /* argument name for the help text */
  const char *help; /* NULL: accepted for compatibility, not shown */
};

struct command
{
  const char *name;
  const char *args;    /* "[OPTIONS] <container-id>" */
  const char *summary;
  const struct cli_opt *opts; /* terminated by { NULL } */
  /* Returns the exit status (>= 0) or -1 with err set. */
  int (*run) (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err);
  bool permute;        /* allow options after positional arguments */
};

typedef int (*cli_opt_fn) (void *data, int key, const char *arg, struct sbx_error *err);

/* Parse argv[1..] with cmd->opts; calls fn for each option. Returns the index of the
 * first positional argument, CLI_HELP_SHOWN if --help was printed, or -1. */
#define CLI_HELP_SHOWN (-2)
int cli_parse (const struct command *cmd, int argc, char **argv, cli_opt_fn fn, void *data, struct sbx_error *err);
void cli_print_help (const struct command *cmd, FILE *out);
int cli_usage_error (struct sbx_error *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Parse a non-negative integer argument. */
int cli_parse_uint (const char *opt, const char *s, unsigned max, unsigned *out, struct sbx_error *err);
/* "96m", "1g", "512k", "1024", "-1" (= -1): bytes, binary units like runc. */
int cli_parse_bytes (const char *opt, const char *s, int64_t *out, struct sbx_error *err);


#endif
