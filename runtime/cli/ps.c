/* sbx-oci ps [--format table|json] <container-id>
 * json: the array of host PIDs containerd reads; table: PID and command line. */
#include "build-config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

static int
ps_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  if (key == 'f')
    {
      if (strcmp (arg, "json") == 0)
        *(bool *) data = true;
      else if (strcmp (arg, "table") != 0)
        return cli_usage_error (err, "ps: --format '%s' is not table or json", arg);
    }
  return 0;
}

static void
print_cmdline (pid_t pid)
{
  char path[64], buf[4096];
  _cleanup_close_ int fd = -1;
  ssize_t n;
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  if (n <= 0)
    n = 0;
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
  buf[n] = '\0';
  printf ("%-8d %s\n", (int) pid, buf);
}

static int
run_ps (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  bool json = false;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  int first = cli_parse (cmd, argc, argv, ps_opt, &json, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first < 1)
    return cli_usage_error (err, "ps: expected a container id");
  if (container_pids (ctx, argv[first], &pids, &n, err) < 0)
    return -1;
  if (json)
    {
      yajl_gen g = gen_new (false);
      _cleanup_free_ char *out = NULL;
      yajl_gen_array_open (g);
      for (size_t i = 0; i < n; i++)
        yajl_gen_integer (g, pids[i]);
      yajl_gen_array_close (g);
      out = gen_finish (g, NULL);
      yajl_gen_free (g);
      printf ("%s\n", out ? out : "[]");
      return 0;
    }
  printf ("%-8s %s\n", "PID", "CMD");
  for (size_t i = 0; i < n; i++)
    print_cmdline (pids[i]);
  return 0;
}

static const struct cli_opt ps_opts[] = {
  { "format", 'f', required_argument, "FORMAT", "table (default) or json" },
  { NULL },
};

const struct command cmd_ps = {
  .name = "ps",
  .args = "[OPTIONS] <container-id>",
  .summary = "list the processes of a container",
  .opts = ps_opts,
  .run = run_ps,
  .permute = false,
};
