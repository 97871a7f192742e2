/* sbx-oci exec [OPTIONS] <container-id> [COMMAND [ARG...]]
 * runc's options and spellings; options stop at the container id, so the command's
 * own options are never taken for ours. With --process FILE the process.json is the
 * whole process (the inline options that set process fields are ignored, as in runc). */
#include "build-config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/container/container.h"
#include "runtime/linux/process_become.h"

enum exec_key
{
  EK_CWD = 256,
  EK_PID_FILE,
  EK_CONSOLE_SOCKET,
  EK_PRESERVE_FDS,
  EK_PROCESS_LABEL,
  EK_APPARMOR,
  EK_NO_NEW_PRIVS,
  EK_IGNORE_PAUSED,
  EK_CGROUP,
  EK_NO_SUBREAPER,
};

struct exec_cli
{
  struct exec_opts o;
};

/* A uid or gid: decimal digits only, below 2^32-1 (which means "no id" to the
 * kernel). "1" must be 1 (CVE-2026-30892), "" and "x" are errors. */
static int
parse_id (const char *what, const char *s, size_t len, uint32_t *out, struct sbx_error *err)
{
  uint64_t v = 0;
  if (len == 0 || len > 10)
    return cli_usage_error (err, "exec: %s: '%.*s' is not a numeric id", what, (int) len, s);
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return cli_usage_error (err, "exec: %s: '%.*s' is not a numeric id (names are not resolved)", what,
                                (int) len, s);
      v = v * 10 + (uint64_t) (s[i] - '0');
    }
  if (v >= 0xffffffffULL)
    return cli_usage_error (err, "exec: %s: '%.*s' is out of range", what, (int) len, s);
  *out = (uint32_t) v;
  return 0;
}

static void
push (const char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 1) * sizeof (char *));
  (*v)[(*n)++] = s;
}

static int
exec_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct exec_opts *o = &((struct exec_cli *) data)->o;
  unsigned n;
  switch (key)
    {
    case 'p':
      o->process_path = arg;
      return 0;
    case EK_CWD:
      o->cwd = arg;
      return 0;
    case 'e':
      if (!strchr (arg, '=') || arg[0] == '=')
        return cli_usage_error (err, "exec: --env '%s': expected KEY=VALUE", arg);
      push (&o->env, &o->n_env, arg);
      return 0;
    case 'u':
      {
        const char *colon = strchr (arg, ':');
        o->has_user = true;
        o->gid = 0;
        if (parse_id ("--user", arg, colon ? (size_t) (colon - arg) : strlen (arg), &o->uid, err) < 0)
          return -1;
        return colon ? parse_id ("--user", colon + 1, strlen (colon + 1), &o->gid, err) : 0;
      }
    case 'g':
      {
        uint32_t gid;
        if (parse_id ("--additional-gids", arg, strlen (arg), &gid, err) < 0)
          return -1;
        o->additional_gids = xrealloc (o->additional_gids, (o->n_additional_gids + 1) * sizeof (uint32_t));
        o->additional_gids[o->n_additional_gids++] = gid;
        return 0;
      }
    case 'c':
      push (&o->caps, &o->n_caps, arg);
      return 0;
    case EK_NO_NEW_PRIVS:
      o->no_new_privs = true;
      return 0;
    case 't':
      o->tty = true;
      return 0;
    case EK_CONSOLE_SOCKET:
      o->console_socket = arg;
      return 0;
    case 'd':
      o->detach = true;
      return 0;
    case EK_PID_FILE:
      o->pid_file = arg;
      return 0;
    case EK_PRESERVE_FDS:
      if (cli_parse_uint ("--preserve-fds", arg, 1024, &n, err) < 0)
        return -1;
      o->preserve_fds = (int) n;
      process_reserve_preserved_fds ((int) n);
      return 0;
    case EK_PROCESS_LABEL:
      o->process_label = *arg ? arg : NULL;
      return 0;
    case EK_APPARMOR:
      o->apparmor = *arg ? arg : NULL;
      return 0;
    case EK_IGNORE_PAUSED:
      o->ignore_paused = true;
      return 0;
    case EK_CGROUP:
      o->cgroup = arg;
      return 0;
    default:
      return 0; /* accepted for compatibility */
    }
}

static int
run_exec (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct exec_cli c = { 0 };
  int first, status = 0, ret;
  first = cli_parse (cmd, argc, argv, exec_opt, &c, err);
  if (first == CLI_HELP_SHOWN)
    ret = 0;
  else if (first < 0)
    ret = -1;
  else if (argc - first < 1)
    ret = cli_usage_error (err, "exec: expected a container id (see sbx-oci exec --help)");
  else
    {
      c.o.id = argv[first];
      c.o.args = argv + first + 1;
      c.o.n_args = (size_t) (argc - first - 1);
      if (c.o.tty && c.o.detach && !c.o.console_socket && !c.o.process_path)
        ret = cli_usage_error (err, "exec: --tty with --detach needs a --console-socket");
      else if (c.o.n_args && c.o.process_path)
        ret = cli_usage_error (err, "exec: give either --process FILE or a command, not both");
      else
        ret = container_exec (ctx, &c.o, &status, err) < 0 ? -1 : status;
    }
  free (c.o.env);
  free (c.o.caps);
  free (c.o.additional_gids);
  return ret;
}

static const struct cli_opt exec_opts_table[] = {
  { "process", 'p', required_argument, "FILE", "the process to run, as a process.json (config.md \"process\")" },
  { "cwd", EK_CWD, required_argument, "DIR", "working directory in the container" },
  { "env", 'e', required_argument, "KEY=VALUE", "set an environment variable (repeatable)" },
  { "user", 'u', required_argument, "UID[:GID]", "numeric user and group to run as" },
  { "additional-gids", 'g', required_argument, "GID", "an additional group (repeatable)" },
  { "cap", 'c', required_argument, "CAP", "add a capability (repeatable; not to the inheritable set)" },
  { "no-new-privs", EK_NO_NEW_PRIVS, no_argument, NULL, "set no_new_privs" },
  { "tty", 't', no_argument, NULL, "allocate a pty (handed over through --console-socket)" },
  { "console-socket", EK_CONSOLE_SOCKET, required_argument, "SOCK", "unix socket that receives the pty master" },
  { "detach", 'd', no_argument, NULL, "return once the process runs (do not wait for it)" },
  { "pid-file", EK_PID_FILE, required_argument, "FILE", "write the process's pid to FILE" },
  { "preserve-fds", EK_PRESERVE_FDS, required_argument, "N", "pass fds 3..3+N-1 to the process" },
  { "process-label", EK_PROCESS_LABEL, required_argument, "LABEL", "SELinux label of the process" },
  { "apparmor", EK_APPARMOR, required_argument, "PROFILE", "AppArmor profile of the process" },
  { "ignore-paused", EK_IGNORE_PAUSED, no_argument, NULL, "exec even if the container is paused" },
  { "cgroup", EK_CGROUP, required_argument, "[CTRL[,CTRL]:]SUB", "join SUB, a sub-cgroup of the container's" },
  { "no-subreaper", EK_NO_SUBREAPER, no_argument, NULL, NULL },
  { NULL },
};

const struct command cmd_exec = {
  .name = "exec",
  .args = "[OPTIONS] <container-id> [COMMAND [ARG...]]",
  .summary = "run a new process in a running container",
  .opts = exec_opts_table,
  .run = run_exec,
  .permute = false,
};
