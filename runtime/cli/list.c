/* sbx-oci list [--format table|json] [--quiet] */
#include "build-config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/container/statedir.h"

struct list_opts
{
  bool json, quiet;
};

static int
list_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct list_opts *o = data;
  if (key == 'q')
    o->quiet = true;
  else if (key == 'f')
    {
      if (strcmp (arg, "json") == 0)
        o->json = true;
      else if (strcmp (arg, "table") != 0)
        return cli_usage_error (err, "list: --format '%s' is not table or json", arg);
    }
  return 0;
}

static int
run_list (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct list_opts o = { 0 };
  int first = cli_parse (cmd, argc, argv, list_opt, &o, err);
  _cleanup_close_ int rootfd = -1;
  DIR *d;
  struct dirent *de;
  yajl_gen g = NULL;
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (first != argc)
    return cli_usage_error (err, "list: takes no arguments");
  rootfd = open (ctx->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (o.json)
    {
      g = gen_new (false);
      yajl_gen_array_open (g);
    }
  else if (!o.quiet)
    printf ("%-20s %-8s %-8s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
  d = rootfd >= 0 ? fdopendir (dup (rootfd)) : NULL;
  while (d && (de = readdir (d)))
    {
      struct sbx_state s;
      struct sbx_error e = { 0 };
      _cleanup_close_ int dfd = -1;
      const char *status;
      if (de->d_name[0] == '.' || statedir_validate_id (de->d_name, &e) < 0)
        {
          sbx_error_clear (&e);
          continue;
        }
      dfd = openat (rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (dfd < 0 || statedir_read_state (dfd, de->d_name, &s, &e) < 0)
        {
          sbx_error_clear (&e);
          continue; /* being created, or broken: `delete` handles it */
        }
      status = container_status_name (statedir_status (dfd, &s));
      if (o.json)
        {
          yajl_gen_map_open (g);
          oci_state_gen_fields (g, &s, status);
          yajl_gen_map_close (g);
        }
      else if (o.quiet)
        printf ("%s\n", s.id);
      else
        printf ("%-20s %-8d %-8s %-40s %-32s %s\n", s.id, strcmp (status, "stopped") == 0 ? 0 : s.pid, status,
                s.bundle, s.created, s.owner ? s.owner : "");
      oci_state_clear (&s);
    }
  if (d)
    closedir (d);
  if (o.json)
    {
      _cleanup_free_ char *out = NULL;
      yajl_gen_array_close (g);
      out = gen_finish (g, NULL);
      printf ("%s\n", out ? out : "[]");
      yajl_gen_free (g);
    }
  return 0;
}

static const struct cli_opt list_opts[] = {
  { "format", 'f', required_argument, "FORMAT", "table (default) or json" },
  { "quiet", 'q', no_argument, NULL, "print only the container ids" },
  { NULL },
};

const struct command cmd_list = {
  .name = "list",
  .args = "[OPTIONS]",
  .summary = "list the containers in the state root",
  .opts = list_opts,
  .run = run_list,
  .permute = true,
};
