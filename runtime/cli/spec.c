/* sbx-oci spec [--bundle DIR] [--rootless] [--file FILE|-]
 * Writes a default config.json into the bundle (refusing to overwrite one), or to
 * FILE, or to stdout with `--file -`. */
#include "build-config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oci/spec_default.h"
#include "runtime/base/util.h"
#include "runtime/cli/commands.h"

struct spec_opts
{
  const char *bundle, *file;
  bool rootless;
};

static int
spec_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct spec_opts *o = data;
  if (key == 'b')
    o->bundle = arg;
  else if (key == 'f')
    o->file = arg;
  else if (key == 256)
    o->rootless = true;
  return 0;
}

static int
run_spec (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct spec_opts o = { 0 };
  _cleanup_free_ char *json = NULL, *path = NULL;
  _cleanup_close_ int fd = -1;
  size_t len = 0;
  int first = cli_parse (cmd, argc, argv, spec_opt, &o, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (first != argc)
    return cli_usage_error (err, "spec: takes no arguments");
  json = oci_default_spec_json (o.rootless || !ctx->as_root, geteuid (), getegid (), &len);
  if (!json)
    return sbx_error_set (err, 0, "cannot generate the default spec");
  if (o.file && strcmp (o.file, "-") == 0)
    {
      if (fwrite (json, 1, len, stdout) != len || putchar ('\n') == EOF)
        return sbx_error_set (err, errno, "write to stdout");
      return 0;
    }
  path = o.file ? xstrdup (o.file) : xasprintf ("%s/config.json", o.bundle ? o.bundle : ".");
  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      if (errno == EEXIST)
        return sbx_error_set (err, 0, "spec: %s already exists; remove it first", path);
      return sbx_error_set (err, errno, "spec: create %s", path);
    }
  if (write (fd, json, len) != (ssize_t) len || write (fd, "\n", 1) != 1)
    return sbx_error_set (err, errno, "spec: write %s", path);
  return 0;
}

static const struct cli_opt spec_opts[] = {
  { "bundle", 'b', required_argument, "DIR", "write DIR/config.json (default: the current directory)" },
  { "file", 'f', required_argument, "FILE", "write FILE instead; '-' writes to stdout" },
  { "rootless", 256, no_argument, NULL, "a spec for an unprivileged user (user namespace, own uid mapped)" },
  { NULL },
};

const struct command cmd_spec = {
  .name = "spec",
  .args = "[OPTIONS]",
  .summary = "write a default config.json",
  .opts = spec_opts,
  .run = run_spec,
  .permute = true,
};
