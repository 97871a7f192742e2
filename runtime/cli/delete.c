/* sbx-oci delete [--force] <container-id> */
#include "build-config.h"

#include <getopt.h>

#include "runtime/cli/commands.h"
#include "runtime/container.h"

static int
delete_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  if (key == 'f')
    *(bool *) data = true;
  return 0;
}

static int
run_delete (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  bool force = false;
  int first = cli_parse (cmd, argc, argv, delete_opt, &force, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "delete: expected exactly one container id");
  return container_delete (ctx, argv[first], force, err) < 0 ? -1 : 0;
}

static const struct cli_opt delete_opts[] = {
  { "force", 'f', no_argument, NULL, "kill the container first if it is still running" },
  { NULL },
};

const struct command cmd_delete = {
  .name = "delete",
  .args = "[OPTIONS] <container-id>",
  .summary = "delete a stopped container and everything it created",
  .opts = delete_opts,
  .run = run_delete,
  .permute = true,
};
