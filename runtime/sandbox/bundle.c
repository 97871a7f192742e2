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
#include "runtime/linux/fs.h"
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

/* One bundle being written: its command line, and what is made of it. */
struct bundle
{
  struct bundle_cli c;
  struct sbx_ctx *ctx;
  char *dir;
  uid_t host_uid;
  gid_t host_gid;
  struct sandbox_limits limits;
  struct sandbox_interp interp;
  char *rootfs_abs; /* --rootfs, resolved */
  const char *exe;  /* the interpreter inside */
  char *workdir;    /* DIR/work, without --workdir */
  struct workdir w;
  char **args; /* process.args */
  size_t n_args;
};

static int
check_command_line (const struct bundle_cli *c, struct sbx_error *err)
{
  if (!c->dir)
    return cli_usage_error (err, "bundle: --python DIR is required (see sbx-oci bundle --help)");
  if (c->timeout_given)
    return cli_usage_error (err, "bundle: --timeout is not part of a bundle (sbx-oci python enforces it)");
  return 0;
}

/* The rootfs: --rootfs's image, or the interpreter's skeleton written in DIR. */
static int
make_rootfs (struct bundle *b, struct sbx_error *err)
{
  _cleanup_free_ char *python = NULL;
  char real[PATH_MAX];
  if (b->c.p.rootfs)
    {
      if (!realpath (b->c.p.rootfs, real))
        return sbx_error_set (err, errno, "--rootfs %s", b->c.p.rootfs);
      b->rootfs_abs = xstrdup (real);
      b->exe = b->c.p.python ? b->c.p.python : "/usr/bin/python3";
      return 0;
    }
  python = b->c.p.python ? xstrdup (b->c.p.python) : sandbox_default_python (err);
  if (!python || sandbox_interp_query (python, &b->interp, err) < 0
      || sandbox_skeleton_build (b->dir, &b->interp, err) < 0)
    return -1;
  b->exe = b->interp.executable;
  return 0;
}

/* DIR/work, made here for the sandbox user (one that exists is treated as any
   --workdir: never chowned) */
static int
make_workdir (struct bundle *b, struct sbx_error *err)
{
  b->workdir = xasprintf ("%s/work", b->dir);
  if (mkdir (b->workdir, 0700) == 0 && b->ctx->as_root)
    {
      _cleanup_close_ int wfd = open (b->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (wfd < 0 || fchown (wfd, b->host_uid, b->host_gid) < 0)
        return sbx_error_set (err, errno, "chown %s", b->workdir);
    }
  else if (errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", b->workdir);
  return 0;
}

/* The --ro and --rw sources, and their mount points in the skeleton. A bundle runs
   later, in another process: its sources are paths, and nothing puts an idmapped
   path's mode back (sbx-oci python does both). */
static int
prepare_mounts (struct bundle *b, struct sbx_error *err)
{
  for (size_t i = 0; i < b->c.p.n_mounts; i++)
    {
      struct sandbox_mount *m = &b->c.p.mounts[i];
      struct host_writable h;
      char real[PATH_MAX];
      if (m->writable)
        {
          if (host_writable_open (b->ctx, "--rw", m->source, b->host_uid, &h, err) < 0)
            return -1;
          m->idmap = h.idmap;
          m->owner = h.owner;
          m->group = h.group;
          snprintf (real, sizeof real, "%s", h.path);
          host_writable_close (&h);
        }
      else if (!realpath (m->source, real))
        return sbx_error_set (err, errno, "--ro %s", m->source);
      free ((char *) m->source);
      m->source = xstrdup (real);
    }
  if (!b->c.p.rootfs)
    {
      _cleanup_free_ char *rootfs = xasprintf ("%s/rootfs", b->dir);
      if (sandbox_skeleton_add_mount_points (rootfs, &b->c.p, err) < 0)
        return -1;
    }
  return 0;
}

/* DIR/config.json: the sandbox, and the interpreter with PYTHON-ARGS in it. */
static int
write_bundle_config (struct bundle *b, struct sbx_error *err)
{
  struct sandbox_run_spec spec = { 0 };
  _cleanup_free_ char *json = NULL, *meminfo = NULL;
  char dir_real[PATH_MAX];
  size_t len = 0;
  spec.rootfs = b->rootfs_abs ? b->rootfs_abs : "rootfs";
  spec.interp = b->c.p.rootfs ? NULL : &b->interp;
  spec.python = b->exe;
  spec.args = b->args;
  spec.n_args = b->n_args;
  spec.workdir = b->w.h.path;
  spec.host_uid = b->host_uid;
  spec.host_gid = b->host_gid;
  spec.workdir_idmap = b->w.h.idmap;
  spec.workdir_owner = b->w.h.owner;
  spec.workdir_group = b->w.h.group;
  spec.caller_env = (const char *const *) environ;
  if (!realpath (b->dir, dir_real))
    return sbx_error_set (err, errno, "%s", b->dir);
  meminfo = sandbox_meminfo_file (dir_real, b->c.p.memory, err);
  if (!meminfo)
    return -1;
  spec.meminfo = meminfo;
  json = sandbox_config_json (&b->c.p, &b->limits, &spec, true, &len, err);
  if (!json || write_config (b->dir, json, len, err) < 0)
    return -1;
  return 0;
}

static void
bundle_free (struct bundle *b)
{
  free (b->args);
  workdir_finish (&b->w);
  sandbox_interp_free (&b->interp);
  sandbox_limits_free (&b->limits);
  sandbox_policy_free (&b->c.p);
  free (b->workdir);
  free (b->dir);
  free (b->rootfs_abs);
}

static int
run_bundle (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct bundle b = { .ctx = ctx };
  int first, ret = -1;

  sandbox_policy_defaults (&b.c.p);
  first = cli_parse (cmd, argc, argv, bundle_opt, &b.c, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0 || check_command_line (&b.c, err) < 0)
    goto out;
  if (first < argc && strcmp (argv[first], "--") == 0)
    first++;
  b.dir = xstrdup (b.c.dir);
  b.host_uid = ctx->as_root ? b.c.p.host_uid : geteuid ();
  b.host_gid = ctx->as_root ? (gid_t) b.c.p.host_uid : getegid ();
  if (sandbox_limits_plan (ctx, &b.c.p, false, &b.limits, err) < 0)
    goto out;
  for (size_t i = 0; i < b.limits.n_degraded; i++)
    sbx_warn (ctx, "degraded: %s", b.limits.degraded[i]);
  if (mkdir (b.dir, 0755) < 0 && errno != EEXIST)
    {
      sbx_error_set (err, errno, "mkdir %s", b.dir);
      goto out;
    }
  if (make_rootfs (&b, err) < 0 || (!b.c.p.workdir && make_workdir (&b, err) < 0)
      || workdir_prepare (ctx, b.c.p.workdir ? b.c.p.workdir : b.workdir, b.host_uid, b.host_gid, &b.w, err) < 0
      || prepare_mounts (&b, err) < 0)
    goto out;
  b.args = xmalloc0 ((size_t) (argc - first + 2) * sizeof *b.args);
  b.args[b.n_args++] = (char *) b.exe;
  for (int i = first; i < argc; i++)
    b.args[b.n_args++] = argv[i];
  if (write_bundle_config (&b, err) < 0)
    goto out;
  ret = 0;
out:
  bundle_free (&b);
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
