/* sbx-oci delete [--force] <container-id>
 * sbx-oci delete [--force] --regex REGEX: every container whose id REGEX matches (a
 * POSIX extended regular expression, searched in the id as grep does; crun's option). */
#include "build-config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <regex.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/container/container.h"
#include "runtime/container/statedir.h"

struct delete_cli
{
  bool force;
  const char *regex;
};

static int
delete_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct delete_cli *c = data;
  if (key == 'f')
    c->force = true;
  else if (key == 'r')
    c->regex = arg;
  return 0;
}

/* Deletes every container of the state root whose id `pattern` matches; goes on past
   a failure and reports the first. None matching is not an error (as crun). */
static int
delete_matching (struct sbx_ctx *ctx, const char *pattern, bool force, struct sbx_error *err)
{
  regex_t re;
  _cleanup_close_ int rootfd = -1;
  DIR *d;
  struct dirent *de;
  int ret = 0;
  if (regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
    return cli_usage_error (err, "delete: --regex '%s' is not a valid extended regular expression", pattern);
  rootfd = open (ctx->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  d = rootfd >= 0 ? fdopendir (dup (rootfd)) : NULL;
  while (d && (de = readdir (d)))
    {
      struct sbx_error e = { 0 };
      if (de->d_name[0] == '.' || statedir_validate_id (de->d_name, &e) < 0
          || regexec (&re, de->d_name, 0, NULL, 0) != 0)
        {
          sbx_error_clear (&e);
          continue;
        }
      if (container_delete (ctx, de->d_name, force, ret < 0 ? &e : err) < 0)
        ret = -1;
      sbx_error_clear (&e);
    }
  if (d)
    closedir (d);
  regfree (&re);
  return ret;
}

static int
run_delete (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct delete_cli c = { 0 };
  int first = cli_parse (cmd, argc, argv, delete_opt, &c, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (c.regex)
    return argc == first ? delete_matching (ctx, c.regex, c.force, err)
                         : cli_usage_error (err, "delete: give a container id or --regex, not both");
  if (argc - first != 1)
    return cli_usage_error (err, "delete: expected exactly one container id");
  return container_delete (ctx, argv[first], c.force, err) < 0 ? -1 : 0;
}

static const struct cli_opt delete_opts[] = {
  { "force", 'f', no_argument, NULL, "kill the container first if it is still running" },
  { "regex", 'r', required_argument, "REGEX", "delete every container whose id REGEX matches (extended)" },
  { NULL },
};

const struct command cmd_delete = {
  .name = "delete",
  .args = "[OPTIONS] <container-id>",
  .summary = "delete a stopped (or created) container and everything it created",
  .opts = delete_opts,
  .run = run_delete,
  .permute = true,
};
