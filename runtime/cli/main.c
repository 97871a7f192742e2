/* sbx-oci: global options, the subcommand table, and the one place that prints an
 * error and chooses the exit status. */
#include "build-config.h"

#include <getopt.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/cli.h"
#include "runtime/base/context.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"
#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/sandbox/commands.h"
#include "runtime/serve/commands.h"
#include "runtime/linux/namespaces.h"
#include "runtime/linux/sealed_exe.h"
#include "runtime/container/statedir.h"

static const struct command *const commands[] = {
  &cmd_create, &cmd_start,  &cmd_run,    &cmd_exec,  &cmd_state, &cmd_kill,     &cmd_delete,     &cmd_list,
  &cmd_ps,     &cmd_pause,  &cmd_resume, &cmd_update, &cmd_events, &cmd_spec,     &cmd_features,
  &cmd_checkpoint, &cmd_restore, &cmd_python, &cmd_bundle, &cmd_check, &cmd_serve,
};

static void
print_usage (FILE *out)
{
  fprintf (out, "Usage: sbx-oci [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
                "An OCI runtime for running untrusted one-shot programs (runc-compatible CLI).\n\n"
                "Commands:\n");
  for (size_t i = 0; i < ARRAY_SIZE (commands); i++)
    fprintf (out, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
  fprintf (out, "\nGlobal options:\n"
                "  --root DIR               state directory (default /run/sbx-oci; for users and root of a user namespace\n"
                "                           $XDG_RUNTIME_DIR/sbx-oci, else /tmp/sbx-oci-UID for users)\n"
                "  --log FILE               also write log messages to FILE\n"
                "  --log-format text|json   format of --log (default text)\n"
                "  --debug                  log debug messages\n"
                "  --systemd-cgroup         the cgroup is a systemd scope; cgroupsPath is slice:prefix:name\n"
                "  --cgroup-manager M       cgroupfs (default), systemd, or disabled\n"
                "  --rootless[=true|false|auto]  accepted for runc compatibility (detected automatically)\n"
                "  -v, --version            print the version\n"
                "  -h, --help               show this help\n"
                "\nRun 'sbx-oci COMMAND --help' for a command's options.\n");
}

static void
print_version (void)
{
  const struct scmp_version *v = seccomp_version ();
  printf ("sbx-oci version %s\nspec: %s\nlibseccomp: %u.%u.%u\n", PACKAGE_VERSION, SBX_OCI_VERSION,
          v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);
}

enum global_key
{
  OPT_ROOT = 256,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_DEBUG,
  OPT_SYSTEMD_CGROUP,
  OPT_CGROUP_MANAGER,
  OPT_ROOTLESS,
  OPT_CRIU,
};

static int
parse_globals (int argc, char **argv, struct sbx_ctx *ctx, int *done, struct sbx_error *err)
{
  static const struct option opts[] = {
    { "root", required_argument, NULL, OPT_ROOT },
    { "log", required_argument, NULL, OPT_LOG },
    { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
    { "debug", no_argument, NULL, OPT_DEBUG },
    { "systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP },
    { "cgroup-manager", required_argument, NULL, OPT_CGROUP_MANAGER },
    { "rootless", optional_argument, NULL, OPT_ROOTLESS },
    { "criu", required_argument, NULL, OPT_CRIU },
    { "version", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+:vh", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_ROOT:
        if (!*optarg)
          return cli_usage_error (err, "--root: must not be empty");
        ctx->root = optarg;
        break;
      case OPT_LOG:
        ctx->log.path = *optarg ? optarg : NULL;
        break;
      case OPT_LOG_FORMAT:
        if (strcmp (optarg, "json") == 0)
          ctx->log.json = true;
        else if (strcmp (optarg, "text") == 0)
          ctx->log.json = false;
        else
          return cli_usage_error (err, "--log-format: '%s' is not text or json", optarg);
        break;
      case OPT_DEBUG:
        ctx->log.debug = true;
        break;
      case OPT_SYSTEMD_CGROUP:
        ctx->cgroup_manager_given = true;
        ctx->systemd_cgroup = true;
        ctx->cgroup_manager = CGROUP_MANAGER_SYSTEMD;
        break;
      case OPT_CGROUP_MANAGER:
        ctx->cgroup_manager_given = true;
        if (strcmp (optarg, "cgroupfs") == 0)
          ctx->cgroup_manager = CGROUP_MANAGER_CGROUPFS;
        else if (strcmp (optarg, "systemd") == 0)
          {
            ctx->cgroup_manager = CGROUP_MANAGER_SYSTEMD;
            ctx->systemd_cgroup = true;
          }
        else if (strcmp (optarg, "disabled") == 0)
          ctx->cgroup_manager = CGROUP_MANAGER_DISABLED;
        else
          return cli_usage_error (err, "--cgroup-manager: '%s' is not cgroupfs, systemd or disabled", optarg);
        break;
      case OPT_ROOTLESS:
        if (optarg && strcmp (optarg, "true") && strcmp (optarg, "false") && strcmp (optarg, "auto"))
          return cli_usage_error (err, "--rootless: '%s' is not true, false or auto", optarg);
        break; /* detected from the effective uid */
      case OPT_CRIU:
        break; /* checkpoint/restore are not supported */
      case 'v':
        print_version ();
        *done = 1;
        return 0;
      case 'h':
        print_usage (stdout);
        *done = 1;
        return 0;
      case ':':
        return cli_usage_error (err, "option %s needs an argument", argv[optind - 1]);
      default:
        return cli_usage_error (err, "unknown global option %s (see sbx-oci --help)", argv[optind - 1]);
      }
  return optind;
}

int
main (int argc, char **argv)
{
  struct sbx_ctx ctx = { 0 };
  struct sbx_error err = { 0 };
  _cleanup_free_ char *default_root = NULL;
  const struct command *cmd = NULL;
  int first, done = 0, status;

  /* A hook that exits without reading its stdin must not kill us with SIGPIPE
   * (write() returns EPIPE instead). Children restore the default. */
  sbx_main_argv = argv;
  signal (SIGPIPE, SIG_IGN);
  sbx_log_init (&ctx.log);
  /* Never setuid/setgid (CVE-2020-5291): a user who could run containers as root
   * through a setuid copy of the runtime would own the host. */
  if (getuid () != geteuid () || getgid () != getegid ())
    {
      fprintf (stderr, "sbx-oci: refusing to run setuid or setgid (real uid %u, effective uid %u)\n",
               (unsigned) getuid (), (unsigned) geteuid ());
      return 1;
    }
  ctx.as_root = geteuid () == 0;
  first = parse_globals (argc, argv, &ctx, &done, &err);
  if (first < 0)
    goto fail;
  if (done)
    return 0;
  if (first >= argc)
    {
      print_usage (stderr);
      return SBX_EXIT_USAGE;
    }
  ctx.host_root = ctx.as_root && userns_self_is_initial ();
  if (!ctx.root)
    ctx.root = default_root = statedir_default_root (ctx.as_root && !statedir_rootless_root ());
  for (size_t i = 0; i < ARRAY_SIZE (commands); i++)
    if (strcmp (commands[i]->name, argv[first]) == 0)
      cmd = commands[i];
  if (!cmd)
    {
      cli_usage_error (&err, "unknown command '%s' (see sbx-oci --help)", argv[first]);
      goto fail;
    }
  status = cmd->run (&ctx, cmd, argc - first, argv + first, &err);
  if (status >= 0)
    return status;

fail:
  {
    _cleanup_free_ char *msg = sbx_error_string (&err);
    sbx_log_write (&ctx.log, SBX_LOG_ERROR, "%s", msg ? msg : "unknown error");
    status = err.exit_hint ? err.exit_hint : 1;
    sbx_error_clear (&err);
    return status;
  }
}
