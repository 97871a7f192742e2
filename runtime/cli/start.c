/* sbx-oci start <container-id> */
#include "build-config.h"

#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

static int
no_opts (void *data, int key, const char *arg, struct sbx_error *err)
{
  return 0;
}

static int
run_start (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  int first = cli_parse (cmd, argc, argv, no_opts, NULL, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "start: expected exactly one container id");
  return container_start (ctx, argv[first], err) < 0 ? -1 : 0;
}

static const struct cli_opt start_opts[] = { { NULL } };

const struct command cmd_start = {
  .name = "start",
  .args = "<container-id>",
  .summary = "run the program of a created container",
  .opts = start_opts,
  .run = run_start,
  .permute = true,
};
