/* sbx-oci features: the features.md document, generated from the same tables the
 * parser uses (oci/features.c). */
#include "build-config.h"

#include <stdio.h>
#include <stdlib.h>

#include "oci/features.h"
#include "runtime/cli/commands.h"

static int
no_opts (void *data, int key, const char *arg, struct sbx_error *err)
{
  return 0;
}

static int
run_features (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  char *json;
  int first = cli_parse (cmd, argc, argv, no_opts, NULL, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (first != argc)
    return cli_usage_error (err, "features: takes no arguments");
  json = oci_features_json ();
  if (!json)
    return sbx_error_set (err, 0, "cannot generate the features document");
  printf ("%s\n", json);
  free (json);
  return 0;
}

static const struct cli_opt features_opts[] = { { NULL } };

const struct command cmd_features = {
  .name = "features",
  .args = "",
  .summary = "print what this runtime implements (runtime-spec features.md)",
  .opts = features_opts,
  .run = run_features,
  .permute = true,
};
