/* sbx-oci state <container-id>: the OCI state JSON (runtime.md "Query State"). */
#include "build-config.h"

#include <stdio.h>
#include <stdlib.h>

#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

static int
no_opts (void *data, int key, const char *arg, struct sbx_error *err)
{
  return 0;
}

static int
run_state (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  char *json;
  int first = cli_parse (cmd, argc, argv, no_opts, NULL, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "state: expected exactly one container id");
  json = container_state (ctx, argv[first], err);
  if (!json)
    return -1;
  printf ("%s\n", json);
  free (json);
  return 0;
}

static const struct cli_opt state_opts[] = { { NULL } };

const struct command cmd_state = {
  .name = "state",
  .args = "<container-id>",
  .summary = "print the state of a container as JSON",
  .opts = state_opts,
  .run = run_state,
  .permute = true,
};
