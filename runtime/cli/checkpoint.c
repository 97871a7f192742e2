/* checkpoint / restore: not supported. They exist so that `checkpoint --help` (which
 * podman runs to probe for features) works and a real call fails clearly. */
#include "build-config.h"

#include <errno.h>
#include <getopt.h>

#include "runtime/cli/commands.h"

static int
accept_any (void *data, int key, const char *arg, struct sbx_error *err)
{
  return 0;
}

static int
run_unsupported (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  int first = cli_parse (cmd, argc, argv, accept_any, NULL, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  return sbx_error_set (err, ENOTSUP, "%s is not supported by sbx-oci", cmd->name);
}

static const struct cli_opt criu_opts[] = {
  { "image-path", 256, required_argument, "DIR", "(not supported)" },
  { "work-path", 257, required_argument, "DIR", "(not supported)" },
  { "leave-running", 258, no_argument, NULL, "(not supported)" },
  { "tcp-established", 259, no_argument, NULL, NULL },
  { "ext-unix-sk", 260, no_argument, NULL, NULL },
  { "shell-job", 261, no_argument, NULL, NULL },
  { "file-locks", 262, no_argument, NULL, NULL },
  { "pre-dump", 263, no_argument, NULL, NULL },
  { "parent-path", 264, required_argument, "DIR", NULL },
  { "manage-cgroups-mode", 265, required_argument, "MODE", NULL },
  { "bundle", 'b', required_argument, "DIR", NULL },
  { "detach", 'd', no_argument, NULL, NULL },
  { "pid-file", 266, required_argument, "FILE", NULL },
  { NULL },
};

const struct command cmd_checkpoint = {
  .name = "checkpoint",
  .args = "[OPTIONS] <container-id>",
  .summary = "not supported (checkpoint/restore needs CRIU)",
  .opts = criu_opts,
  .run = run_unsupported,
  .permute = true,
};

const struct command cmd_restore = {
  .name = "restore",
  .args = "[OPTIONS] <container-id>",
  .summary = "not supported (checkpoint/restore needs CRIU)",
  .opts = criu_opts,
  .run = run_unsupported,
  .permute = true,
};
