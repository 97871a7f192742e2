/* sbx-oci create [OPTIONS] <container-id> */
#include "build-config.h"

#include <stdio.h>
#include <string.h>

#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/create_opts.h"
#include "runtime/container/statedir.h"
#include "runtime/linux/process_become.h"

int
create_cli_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct create_cli *c = data;
  unsigned n;
  switch (key)
    {
    case CK_BUNDLE:
      c->o.bundle = arg;
      return 0;
    case CK_CONFIG:
      c->o.config_path = arg;
      return 0;
    case CK_PID_FILE:
      c->o.pid_file = arg;
      return 0;
    case CK_CONSOLE_SOCKET:
      c->o.console_socket = arg;
      return 0;
    case CK_PRESERVE_FDS:
      if (cli_parse_uint ("--preserve-fds", arg, 1024, &n, err) < 0)
        return -1;
      c->o.preserve_fds = (int) n;
      process_reserve_preserved_fds ((int) n);
      return 0;
    case CK_NO_PIVOT:
      c->o.no_pivot = true;
      return 0;
    case CK_NO_NEW_KEYRING:
      c->o.no_new_keyring = true;
      return 0;
    case CK_DETACH:
      c->detach = true;
      return 0;
    case CK_KEEP:
      c->keep = true;
      return 0;
    default:
      return 0; /* accepted for compatibility */
    }
}

static int
run_create (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct create_cli c = { 0 };
  int first = cli_parse (cmd, argc, argv, create_cli_opt, &c, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "create: expected exactly one container id (see sbx-oci create --help)");
  c.o.id = argv[first];
  if (statedir_validate_id (c.o.id, err) < 0)
    return -1;
  if (container_create (ctx, &c.o, err) < 0)
    return -1;
  return 0;
}

static const struct cli_opt create_opts[] = { CREATE_CLI_OPTS, { NULL } };

const struct command cmd_create = {
  .name = "create",
  .args = "[OPTIONS] <container-id>",
  .summary = "create a container from a bundle; its program waits for `start`",
  .opts = create_opts,
  .run = run_create,
  .permute = true,
};
