/* sbx-oci kill [--all] <container-id> [SIGNAL]  (SIGNAL: a number or a name, default TERM) */
#include "build-config.h"

#include <getopt.h>
#include <signal.h>

#include "oci/vocab.h"
#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

static int
kill_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  if (key == 'a')
    *(bool *) data = true;
  return 0;
}

static int
run_kill (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  bool all = false;
  int sig = SIGTERM;
  int first = cli_parse (cmd, argc, argv, kill_opt, &all, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first < 1 || argc - first > 2)
    return cli_usage_error (err, "kill: expected a container id and an optional signal");
  if (argc - first == 2)
    {
      sig = sbx_signal_parse (argv[first + 1]);
      if (sig < 0)
        return cli_usage_error (err, "kill: invalid signal '%s'", argv[first + 1]);
    }
  return container_kill (ctx, argv[first], sig, all, err) < 0 ? -1 : 0;
}

static const struct cli_opt kill_opts[] = {
  { "all", 'a', no_argument, NULL, "send the signal to every process of the container" },
  { NULL },
};

const struct command cmd_kill = {
  .name = "kill",
  .args = "[OPTIONS] <container-id> [SIGNAL]",
  .summary = "send a signal (default TERM) to a container",
  .opts = kill_opts,
  .run = run_kill,
  .permute = false,
};
