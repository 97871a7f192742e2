/* sbx-oci run [OPTIONS] [<container-id>]
 * The id is optional and generated when absent. For people typing it, `sbx-oci run
 * DIR` runs DIR as the bundle when DIR holds a config.json and cannot be meant as an id
 * (it is not a valid one, or the current directory is not a bundle). */
#include "build-config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/create_opts.h"
#include "runtime/container/statedir.h"

static bool
is_bundle_dir (const char *dir)
{
  _cleanup_free_ char *cfg = xasprintf ("%s/config.json", dir);
  struct stat st;
  return stat (cfg, &st) == 0 && S_ISREG (st.st_mode);
}

static int
run_run (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct create_cli c = { 0 };
  _cleanup_free_ char *generated = NULL;
  int first = cli_parse (cmd, argc, argv, create_cli_opt, &c, err), status = 0;
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first > 1)
    return cli_usage_error (err, "run: expected at most one container id (see sbx-oci run --help)");
  if (argc - first == 1)
    {
      const char *arg = argv[first];
      /* `sbx-oci run DIR`: a bundle dir, unless the cwd is a bundle too and DIR could be
         an id there (so `run .` and `run ./b` are always bundles). */
      struct sbx_error ignored = { 0 };
      bool not_an_id = statedir_validate_id (arg, &ignored) < 0;
      sbx_error_clear (&ignored);
      if (!c.o.bundle && !c.o.config_path && is_bundle_dir (arg) && (not_an_id || !is_bundle_dir (".")))
        c.o.bundle = arg;
      else
        c.o.id = arg;
    }
  if (!c.o.id)
    c.o.id = generated = statedir_generate_id ("sbx-");
  if (statedir_validate_id (c.o.id, err) < 0)
    return -1;
  if (container_run (ctx, &c.o, c.detach, c.keep, NULL, &status, err) < 0)
    return -1;
  return status;
}

static const struct cli_opt run_opts[] = {
  CREATE_CLI_OPTS,
  { "detach", CK_DETACH, no_argument, NULL, "start the container and return (do not wait for it)" },
  { "keep", CK_KEEP, no_argument, NULL, "keep the stopped container (do not delete it after it exits)" },
  { "no-subreaper", CK_NO_SUBREAPER, no_argument, NULL, NULL },
  { NULL },
};

const struct command cmd_run = {
  .name = "run",
  .args = "[OPTIONS] [<container-id> | <bundle-dir>]",
  .summary = "create and start a container, wait for it, and exit with its status",
  .opts = run_opts,
  .run = run_run,
  .permute = true,
};
