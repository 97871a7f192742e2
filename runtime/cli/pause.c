/* sbx-oci pause <container-id> / sbx-oci resume <container-id>
 * (freezer.state on cgroup v1, cgroup.freeze on v2). */
#include "build-config.h"

#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

static int
no_opts (void *data, int key, const char *arg, struct sbx_error *err)
{
  return 0;
}

static int
run_pause_resume (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  int first = cli_parse (cmd, argc, argv, no_opts, NULL, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "%s: expected exactly one container id", cmd->name);
  return container_pause (ctx, argv[first], cmd->name[0] == 'p', err) < 0 ? -1 : 0;
}

static const struct cli_opt no_options[] = { { NULL } };

const struct command cmd_pause = {
  .name = "pause",
  .args = "<container-id>",
  .summary = "freeze every process of a container",
  .opts = no_options,
  .run = run_pause_resume,
  .permute = true,
};

const struct command cmd_resume = {
  .name = "resume",
  .args = "<container-id>",
  .summary = "thaw a paused container",
  .opts = no_options,
  .run = run_pause_resume,
  .permute = true,
};
