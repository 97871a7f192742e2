/* sbx-oci bundle --python DIR [OPTIONS] [-- PYTHON-ARGS...]
 * (--interpreter PATH chooses the interpreter: `python`'s --python)
 *
 * Writes the Python sandbox of `sbx-oci python` as a plain OCI bundle: DIR/config.json
 * and DIR/rootfs (the skeleton), plus DIR/work as the workdir unless --workdir names
 * one. `sbx-oci run -b DIR` (or any OCI runtime that knows the run.sbx-oci.landlock
 * annotations are optional) runs it; process.args is the interpreter followed by
 * PYTHON-ARGS (none: it reads the program from stdin). A wall-clock --timeout has no
 * place in a bundle: that is `sbx-oci python`'s. */
#include "build-config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/fs.h"
#include "runtime/sandbox/commands.h"
#include "runtime/sandbox/sandbox.h"

extern char **environ;

enum
{
  BO_DIR = 300,
};

static const struct cli_opt bundle_opts[] = {
  { "python", BO_DIR, required_argument, "DIR", "write a Python sandbox bundle in DIR (made if missing)" },
  SANDBOX_CLI_OPT_INTERPRETER ("interpreter"),
  SANDBOX_CLI_OPT_WORKDIR ("writable host dir, the sandbox's cwd and HOME at /work (default: DIR/work, kept)"),
  SANDBOX_CLI_OPTS,
  SANDBOX_CLI_OPT_TIMEOUT ("refused: a bundle has no wall clock (`sbx-oci python` enforces one)"),
  SANDBOX_CLI_OPT_ALLOW_DEGRADED ("write the bundle even if a limit cannot be enforced as asked (named in a "
                                  "warning)"),
  { NULL },
};

struct bundle_cli
{
  struct sandbox_policy p;
  const char *dir;
  bool timeout_given;
};

static int
bundle_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct bundle_cli *c = data;
  if (key == BO_DIR)
    {
      c->dir = arg;
      return 0;
    }
  if (key == SO_TIMEOUT)
    c->timeout_given = true;
  return sandbox_cli_opt (&c->p, key, arg, err) < 0 ? -1 : 0;
}

static int
write_config (const char *dir, const char *json, size_t len, struct sbx_error *err)
{
  _cleanup_close_ int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return sbx_error_set (err, errno, "open %s", dir);
  return fs_write_atomic (dfd, "config.json", json, len, 0644, err);
}

static int
run_bundle (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct bundle_cli c = { 0 };
  struct sandbox_limits limits = { 0 };
  struct sandbox_interp interp = { 0 };
  struct sandbox_run_spec spec = { 0 };
  struct workdir w = { 0 };
  _cleanup_free_ char *python = NULL, *json = NULL, *workdir = NULL, *dir = NULL, *rootfs_abs = NULL, *meminfo = NULL;
  char **args = NULL;
  size_t n_args = 0, len = 0;
  const char *exe;
  int first, ret = -1;
  uid_t host_uid;
  gid_t host_gid;
  char real[PATH_MAX];

  sandbox_policy_defaults (&c.p);
  first = cli_parse (cmd, argc, argv, bundle_opt, &c, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    goto out;
  if (!c.dir)
    {
      cli_usage_error (err, "bundle: --python DIR is required (see sbx-oci bundle --help)");
      goto out;
    }
  if (c.timeout_given)
    {
      cli_usage_error (err, "bundle: --timeout is not part of a bundle (sbx-oci python enforces it)");
      goto out;
    }
  if (first < argc && strcmp (argv[first], "--") == 0)
    first++;
  dir = xstrdup (c.dir);
  host_uid = ctx->as_root ? c.p.host_uid : geteuid ();
  host_gid = ctx->as_root ? (gid_t) c.p.host_uid : getegid ();
  if (sandbox_limits_plan (ctx, &c.p, &limits, err) < 0)
    goto out;
  for (size_t i = 0; i < limits.n_degraded; i++)
    sbx_warn (ctx, "degraded: %s", limits.degraded[i]);
  if (mkdir (dir, 0755) < 0 && errno != EEXIST)
    {
      sbx_error_set (err, errno, "mkdir %s", dir);
      goto out;
    }
  if (c.p.rootfs)
    {
      if (!realpath (c.p.rootfs, real))
        {
          sbx_error_set (err, errno, "--rootfs %s", c.p.rootfs);
          goto out;
        }
      rootfs_abs = xstrdup (real);
      exe = c.p.python ? c.p.python : "/usr/bin/python3";
    }
  else
    {
      python = c.p.python ? xstrdup (c.p.python) : sandbox_default_python (err);
      if (!python || sandbox_interp_query (python, &interp, err) < 0 || sandbox_skeleton_build (dir, &interp, err) < 0)
        goto out;
      exe = interp.executable;
    }
  if (!c.p.workdir)
    {
      /* DIR/work, made here for the sandbox user (one that exists is treated as any
         --workdir: never chowned) */
      workdir = xasprintf ("%s/work", dir);
      if (mkdir (workdir, 0700) == 0 && ctx->as_root)
        {
          _cleanup_close_ int wfd = open (workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (wfd < 0 || fchown (wfd, host_uid, host_gid) < 0)
            {
              sbx_error_set (err, errno, "chown %s", workdir);
              goto out;
            }
        }
      else if (errno != EEXIST)
        {
          sbx_error_set (err, errno, "mkdir %s", workdir);
          goto out;
        }
    }
  if (workdir_prepare (ctx, c.p.workdir ? c.p.workdir : workdir, host_uid, host_gid, &w, err) < 0)
    goto out;
  /* A bundle runs later, in another process: its sources are paths, and nothing puts
     an idmapped path's mode back (sbx-oci python does both). */
  for (size_t i = 0; i < c.p.n_mounts; i++)
    {
      struct sandbox_mount *m = &c.p.mounts[i];
      struct host_writable h;
      if (m->writable)
        {
          if (host_writable_open (ctx, "--rw", m->source, host_uid, &h, err) < 0)
            goto out;
          m->idmap = h.idmap;
          m->owner = h.owner;
          m->group = h.group;
          snprintf (real, sizeof real, "%s", h.path);
          host_writable_close (&h);
        }
      else if (!realpath (m->source, real))
        {
          sbx_error_set (err, errno, "--ro %s", m->source);
          goto out;
        }
      free ((char *) m->source);
      m->source = xstrdup (real);
    }
  if (!c.p.rootfs)
    {
      _cleanup_free_ char *rootfs = xasprintf ("%s/rootfs", dir);
      if (sandbox_skeleton_add_mount_points (rootfs, &c.p, err) < 0)
        goto out;
    }
  args = xmalloc0 ((size_t) (argc - first + 2) * sizeof *args);
  args[n_args++] = (char *) exe;
  for (int i = first; i < argc; i++)
    args[n_args++] = argv[i];

  spec.rootfs = rootfs_abs ? rootfs_abs : "rootfs";
  spec.interp = c.p.rootfs ? NULL : &interp;
  spec.python = exe;
  spec.args = args;
  spec.n_args = n_args;
  spec.workdir = w.h.path;
  spec.host_uid = host_uid;
  spec.host_gid = host_gid;
  spec.workdir_idmap = w.h.idmap;
  spec.workdir_owner = w.h.owner;
  spec.workdir_group = w.h.group;
  spec.caller_env = (const char *const *) environ;
  {
    char dir_real[PATH_MAX];
    if (!realpath (dir, dir_real))
      {
        sbx_error_set (err, errno, "%s", dir);
        goto out;
      }
    meminfo = sandbox_meminfo_file (dir_real, c.p.memory, err);
    if (!meminfo)
      goto out;
    spec.meminfo = meminfo;
  }
  json = sandbox_config_json (&c.p, &limits, &spec, true, &len, err);
  if (!json || write_config (dir, json, len, err) < 0)
    goto out;
  ret = 0;
out:
  free (args);
  workdir_finish (&w);
  sandbox_interp_free (&interp);
  sandbox_limits_free (&limits);
  sandbox_policy_free (&c.p);
  return ret;
}

const struct command cmd_bundle = {
  .name = "bundle",
  .args = "--python DIR [OPTIONS] [-- PYTHON-ARGS...]",
  .summary = "write the Python sandbox as an OCI bundle (config.json and a rootfs skeleton) in DIR",
  .opts = bundle_opts,
  .run = run_bundle,
  .permute = false,
};
