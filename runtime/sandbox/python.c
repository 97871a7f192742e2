/* sbx-oci python [OPTIONS] (-c CODE | -m MODULE | SCRIPT | -) [ARGS...]
 *
 * One untrusted Python program, run once in the sandbox of sandbox.h, with nothing but
 * the host's interpreter: build (or reuse) the bundle, run it in the foreground like
 * `run`, relay its output with a cap per stream, enforce the wall clock, and report
 * how it ended (exit status; with --result, one JSON object: sandbox_result.c).
 *
 * Exit status: the program's (128+N when killed by signal N; a timeout or an OOM kill
 * is a SIGKILL: 137); 125 when the sandbox could not be set up (as podman run), 2 for
 * a bad command line.
 *
 * The command's entry is runtime/serve/client.c's (with --connect, the run goes to a
 * server instead); a server's worker runs python_command too, with the warm half's
 * hooks (python_run.h, struct python_warm_ops). */
#include "build-config.h"

#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/container.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/landlock.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/container/statedir.h"

extern char **environ;

/* ------------------------------------------------------------------ run */


static void
python_run_free (struct python_run *r)
{
  sandbox_limits_free (&r->limits);
  sandbox_interp_free (&r->interp);
  /* the sandbox owned these during the run: their mode is put back */
  for (size_t i = 0; i <= r->n_rw; i++)
    {
      struct host_writable *h = i < r->n_rw ? &r->rw[i] : &r->w.h;
      struct sbx_error e = { 0 };
      if (i == r->n_rw && r->w.temporary)
        break; /* ours, and removed */
      if (host_writable_restore (i < r->n_rw ? "--rw" : "--workdir", h, &e) < 0)
        {
          _cleanup_free_ char *msg = sbx_error_string (&e);
          sbx_warn (r->ctx, "%s", msg);
          sbx_error_clear (&e);
        }
      if (i < r->n_rw)
        host_writable_close (h);
    }
  free (r->rw);
  free (r->workdir_source);
  exec_guard_finish (&r->guard, false);
  exec_guard_free_paths (&r->guard);
  if (r->result_dirfd >= 0)
    close (r->result_dirfd);
  free (r->result_name);
  workdir_finish (&r->w);
  free (r->bundle);
  free (r->rootfs);
  free (r->config);
  free (r->id);
  for (size_t i = 0; i < r->n_args; i++)
    free (r->args[i]);
  free (r->args);
  free (r->script_source);
  free (r->script_dest);
  if (r->meminfo)
    unlink (r->meminfo);
  free (r->meminfo);
  free (r->warm_error);
  if (r->warm)
    r->warm->ops->free (r);
  if (r->warm_status_fd >= 0)
    close (r->warm_status_fd);
  if (r->meminfo_fd >= 0)
    close (r->meminfo_fd);
  if (r->stdin_fd >= 0)
    close (r->stdin_fd);
  for (int i = 0; i < 2; i++)
    output_stream_free (&r->streams[i]);
  workdir_snapshot_free (&r->before);
  workdir_snapshot_free (&r->after);
  sandbox_report_free (&r->report);
}

/* The --rw paths opened and held (r->rw: idmapped where not the sandbox user's), the
   --ro paths resolved: the policy's mounts name what the config binds. */
static int
resolve_mounts (struct python_run *r, uid_t host_uid, struct sbx_error *err)
{
  struct sandbox_policy *p = &r->c->p;
  r->rw = xmalloc0 ((p->n_mounts + 1) * sizeof *r->rw);
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      struct sandbox_mount *m = &p->mounts[i];
      char real[PATH_MAX];
      char *source;
      if (m->writable)
        {
          struct host_writable *h = &r->rw[r->n_rw];
          if (host_writable_open (r->ctx, "--rw", m->source, host_uid, h, err) < 0)
            return -1;
          r->n_rw++;
          m->idmap = h->idmap;
          m->owner = h->owner;
          m->group = h->group;
          source = host_writable_mount_source (h);
        }
      else if (realpath (m->source, real))
        source = xstrdup (real);
      else
        return sbx_error_set (err, errno, "--ro %s", m->source);
      free ((char *) m->source);
      m->source = source;
    }
  return 0;
}

/* The bundle and its rootfs: --rootfs's image, or the interpreter's skeleton (cached
   in CACHE). *EXE: the interpreter's path inside. */
static int
find_rootfs (struct python_run *r, const char *cache, const char **exe, struct sbx_error *err)
{
  struct sandbox_policy *p = &r->c->p;
  _cleanup_free_ char *python = NULL;
  if (p->rootfs)
    {
      char real[PATH_MAX];
      if (!realpath (p->rootfs, real))
        return sbx_error_set (err, errno, "--rootfs %s", p->rootfs);
      r->rootfs = xstrdup (real);
      r->bundle = xstrdup (r->ctx->root);
      *exe = p->python ? p->python : "/usr/bin/python3";
      if ((*exe)[0] != '/')
        return cli_usage_error (err, "--python: with --rootfs, the interpreter's absolute path in the image");
      return 0;
    }
  python = p->python ? xstrdup (p->python) : sandbox_default_python (err);
  if (!python || sandbox_skeleton_ensure (cache, python, p, &r->bundle, &r->interp, err) < 0)
    return -1;
  r->rootfs = xasprintf ("%s/rootfs", r->bundle);
  *exe = r->interp.executable;
  return 0;
}

/* What the config says of this run: its rootfs, program, workdir and user. */
static void
fill_spec (struct python_run *r, struct sandbox_run_spec *spec, const char *exe, uid_t host_uid, gid_t host_gid)
{
  spec->rootfs = r->rootfs;
  spec->interp = r->c->p.rootfs ? NULL : &r->interp;
  spec->python = exe;
  /* With r->warm, the container's init only holds the run's namespaces, cgroup and
     mounts; the warm interpreter joins it (as pid 2) and runs r->args, which the
     config carries for what reads it (the state, `ps`) but nothing executes. */
  spec->args = r->args;
  spec->n_args = r->n_args;
  spec->hold = r->warm != NULL;
  spec->workdir = r->workdir_source = host_writable_mount_source (&r->w.h);
  spec->host_uid = host_uid;
  spec->host_gid = host_gid;
  spec->workdir_idmap = r->w.h.idmap;
  spec->workdir_owner = r->w.h.owner;
  spec->workdir_group = r->w.h.group;
  spec->script_source = r->script_source;
  spec->script_dest = r->script_dest;
  spec->caller_env = (const char *const *) environ;
  spec->temp_workdir = r->w.temporary ? r->w.h.path : NULL;
}

/* The run's own /proc/meminfo and, with --no-subprocess, the exec supervisor. */
static int
start_meminfo_and_guard (struct python_run *r, const char *cache, struct sandbox_run_spec *spec,
                         struct sbx_error *err)
{
  struct sandbox_policy *p = &r->c->p;
  /* beside the skeleton; with --rootfs (no skeleton) in the skeletons' directory, not
     among the state root's container dirs */
  if (p->rootfs && mkdir (cache, 0700) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", cache);
  r->meminfo_fd = sandbox_meminfo_run_open (p->rootfs ? cache : r->bundle, p->memory, &r->meminfo, err);
  if (r->meminfo_fd < 0)
    return -1;
  spec->meminfo = r->meminfo;
  if (r->c->no_subprocess)
    {
      if (exec_guard_start (&r->guard, r->ctx->root, err) < 0)
        return -1;
      spec->exec_listener = r->guard.listener_path;
    }
  return 0;
}

static int
prepare (struct python_run *r, int argc, char **argv, struct sbx_error *err)
{
  struct sandbox_policy *p = &r->c->p;
  _cleanup_free_ char *cache = xasprintf ("%s/@python", r->ctx->root), *owner = NULL;
  const char *exe = NULL;
  uid_t host_uid = r->ctx->as_root ? p->host_uid : geteuid ();
  gid_t host_gid = r->ctx->as_root ? (gid_t) p->host_uid : getegid ();
  struct sandbox_run_spec spec = { 0 };

  if (sandbox_limits_plan (r->ctx, p, !r->warm, &r->limits, err) < 0 || resolve_mounts (r, host_uid, err) < 0)
    return -1;
  if (r->limits.systemd)
    r->ctx->systemd_cgroup = true; /* the engine asks systemd for the sandbox's scope */
  if (mkdir (r->ctx->root, 0700) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", r->ctx->root);
  if (find_rootfs (r, cache, &exe, err) < 0 || workdir_prepare (r->ctx, p->workdir, host_uid, host_gid, &r->w, err) < 0
      || python_program_args (r, exe, argc, argv, err) < 0)
    return -1;
  if (p->rootfs
      && (sandbox_image_add_mount_points (r->rootfs, err) < 0
          || sandbox_skeleton_add_mount_points (r->rootfs, p, err) < 0))
    return -1;
  r->id = r->c->id ? xstrdup (r->c->id) : statedir_generate_id ("py-");
  if (statedir_validate_id (r->id, err) < 0)
    return -1;
  fill_spec (r, &spec, exe, host_uid, host_gid);
  spec.owner = owner = sandbox_owner_annotation ();
  if (start_meminfo_and_guard (r, cache, &spec, err) < 0)
    return -1;
  r->config = sandbox_config_json (p, &r->limits, &spec, false, &r->config_len, err);
  return r->config ? 0 : -1;
}

/* What /proc/meminfo shows follows the sandbox's use while it runs. */
static void
update_meminfo (void *data, uint64_t bytes)
{
  struct python_run *r = data;
  sandbox_meminfo_update (r->meminfo_fd, r->c->p.memory, bytes);
}

/* fg_watch.on_fds of a run that is not warm: the output, and with --die-with-parent
   the starting process, whose exit ends the run (fg_watch.stop). */
static void
on_run_fds (void *data, struct pollfd *fds, size_t n)
{
  struct python_run *r = data;
  output_on_ready (r->streams, fds, 2);
  if (n > 2 && fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR)))
    {
      fds[2].fd = -1;
      r->parent_exited = true;
      r->watch.fg.stop = true;
    }
}

static int
execute (struct python_run *r, struct sbx_error *err)
{
  struct create_opts o = { 0 };
  struct pollfd fds[5];
  int pipes[2][2];
  int ret;

  r->t0 = monotonic_ns ();
  for (int i = 0; i < 2; i++)
    {
      if (pipe2 (pipes[i], O_CLOEXEC) < 0)
        return sbx_error_set (err, errno, "pipe");
      /* 1 MiB instead of 64 KiB: a chatty program wakes us 16 times less often (best
         effort: an unprivileged caller's limit is /proc/sys/fs/pipe-max-size) */
      (void) fcntl (pipes[i][0], F_SETPIPE_SZ, 1 << 20);
    }
  o.id = r->id;
  o.bundle = r->bundle;
  o.config_json = r->config;
  o.config_len = r->config_len;
  o.has_stdio = true;
  o.kept_cgroup = r->warm ? r->warm->kept_cgroup : NULL;
  if (r->warm)
    {
      /* the holder's stdio is /dev/null; the streams go to the warm fork */
      for (int i = 0; i < 3; i++)
        if ((o.stdio[i] = open ("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
          return sbx_error_set (err, errno, "open /dev/null");
    }
  else
    {
      o.stdio[0] = r->stdin_fd;
      o.stdio[1] = pipes[0][1];
      o.stdio[2] = pipes[1][1];
      r->stdin_fd = -1; /* container_run closes the three */
    }
  for (int i = 0; i < 2; i++)
    {
      r->streams[i].fd = pipes[i][0];
      fds[i] = (struct pollfd) { .fd = pipes[i][0], .events = POLLIN };
    }
  r->watch.fg.fds = fds;
  r->watch.fg.n_fds = 2;
  r->watch.fg.on_fds = on_run_fds;
  r->watch.fg.data = r;
  if (!r->warm && r->c->die_with_parent)
    {
      if ((r->parent_pidfd = python_parent_pidfd (r->c->parent, err)) < 0)
        return -1;
      fds[2] = (struct pollfd) { .fd = r->parent_pidfd, .events = POLLIN };
      r->watch.fg.n_fds = 3;
    }
  if (r->c->p.timeout > 0)
    r->watch.fg.deadline_ns = r->t0 + (int64_t) (r->c->p.timeout * 1e9);
  /* (the warm half may start the clock later: a standby's with its request) */
  if (r->warm)
    r->warm->ops->arm (r, fds, pipes[0][1], pipes[1][1]);
  /* held to see afterwards whether the program filled them (tmp_filled) */
  r->watch.hold[0] = "/tmp";
  r->watch.hold[1] = "/dev/shm";
  r->watch.held[0] = r->watch.held[1] = -1;
  r->watch.on_memory_usage = update_meminfo;
  r->watch.memory_data = r;
  ret = container_run (r->ctx, &o, false, false, &r->watch, &r->status, err);
  if (!r->warm && r->c->die_with_parent)
    {
      close (r->parent_pidfd);
      r->parent_pidfd = -1;
      if (r->parent_exited)
        sbx_warn (r->ctx, "the process that started this run exited: everything in the sandbox was killed "
                          "(--die-with-parent)");
    }
  exec_guard_finish (&r->guard, r->watch.started);
  if (r->warm)
    {
      r->warm->ops->release (r);
      /* (one that finished early, or a session's, has its clients' results) */
      if (ret == 0 && !r->finished)
        ret = r->warm->ops->outcome (r, err);
    }
  /* Everything in the sandbox is gone (its cgroup or pid namespace went with it):
     what is still in the pipes is the last of the output. */
  if (!r->finished)
    output_drain (r->streams, 2, 200);
  return ret;
}

/* A --workdir or --rw path not the sandbox user's is bound idmapped (sandbox_workdir.c);
   where its file system cannot be, say which option it was and that nothing of it
   was changed (there is no chown fallback). */
static void
explain_idmap_failure (struct python_run *r, struct sbx_error *err)
{
  const struct sandbox_policy *p = &r->c->p;
  if (!err->msg || !strstr (err->msg, ": idmap "))
    return;
  for (size_t i = 0, k = 0; i <= p->n_mounts; i++)
    {
      const struct host_writable *h = i < p->n_mounts ? NULL : &r->w.h;
      const char *dest = i < p->n_mounts ? p->mounts[i].dest : SANDBOX_WORKDIR;
      _cleanup_free_ char *needle = xasprintf (" on %s ", dest);
      if (i < p->n_mounts && !p->mounts[i].writable)
        continue;
      if (i < p->n_mounts)
        h = &r->rw[k++];
      if (h->idmap && strstr (err->msg, needle))
        {
          sbx_error_wrap (err, "%s %s is owned by uid %u, not the sandbox user (%u): it is bound through an idmapped "
                               "mount, and left as it was",
                          i < p->n_mounts ? "--rw" : "--workdir", h->path, (unsigned) h->owner,
                          (unsigned) p->host_uid);
          return;
        }
    }
}

/* The warm interpreter is the server's, and so is the sandbox it forks from: a run
   that asks for another cannot be set up here (125, named in the result). */
static int
take_server_sandbox (struct python_cli *c, const struct sandbox_warm *warm, struct sbx_error *err)
{
  const char *why = NULL;
  if (c->no_subprocess)
    why = "--no-subprocess: not through --connect: the exec supervisor is per run";
  else if (c->p.rootfs)
    why = "--rootfs: through --connect the sandbox is the server's, over the host's system paths";
  else if (c->p.python && strcmp (c->p.python, warm->python) != 0)
    why = "--python: through --connect the server's interpreter runs the program";
  if (why)
    {
      sbx_error_set (err, 0, "%s", why);
      err->exit_hint = SBX_EXIT_SETUP;
      return -1;
    }
  c->p.python = warm->python;
  return 0;
}

/* What the result says besides how the program ended (sandbox_result.c). */
static void
describe_result (struct python_run *r)
{
  struct python_cli *c = r->c;
  r->res.id = r->id;
  r->res.policy = &c->p;
  r->res.limits = &r->limits;
  r->res.out = &r->streams[0];
  r->res.err = &r->streams[1];
  r->res.include_output = c->result && strcmp (c->result, "-") == 0;
  r->res.before = &r->before;
  r->res.after = &r->after;
  r->res.workdir = r->w.temporary ? NULL : r->w.h.path;
  r->res.landlock_abi = landlock_abi ();
  r->res.guard = c->no_subprocess ? &r->guard : NULL;
}

/* The run has ended (EXEC_RET: execute's; below 0 only for a warm run that had
   finished): how, reported. The program's status, or -1. */
static int
report_run (struct python_run *r, int exec_ret, struct sbx_error *err)
{
  int ret;
  if (exec_ret < 0)
    {
      /* the client has its result: what went wrong after it is the log's */
      _cleanup_free_ char *msg = sbx_error_string (err);
      sbx_warn (r->ctx, "after the run: %s", msg ? msg : "unknown error");
      sbx_error_clear (err);
    }
  /* a warm run may have finished before its container was torn down (its client
     has the result, and heard of an error in writing it) */
  if (!r->finished)
    return python_finish (r, err);
  ret = r->finish_ret;
  if (ret < 0)
    {
      *err = r->finish_err;
      memset (&r->finish_err, 0, sizeof r->finish_err);
    }
  return ret;
}

/* A caller reading the result learns why nothing ran. */
static void
write_failure_result (struct python_run *r, struct sbx_error *err)
{
  _cleanup_free_ char *msg = sbx_error_string (err);
  struct sbx_error e2 = { 0 };
  r->res.id = r->id ? r->id : r->c->id;
  r->res.policy = &r->c->p;
  r->res.limits = &r->limits;
  r->res.error = msg;
  r->res.started = false;
  r->res.include_output = r->c->result && strcmp (r->c->result, "-") == 0;
  if (python_write_result (r, &e2) < 0)
    sbx_error_clear (&e2);
}

/* The signals the run passes on to the program (foreground.h) stay blocked for the
   whole command: one that comes during the setup is passed on once the program runs
   (container_run reads what is pending), and one that comes once the program has
   ended is dropped. It would otherwise kill this process midway through its teardown,
   with the temporary workdir left: Jupyter's shutdown sends SIGTERM to a kernel that
   has just exited, while its sandbox is being taken down. */
static void
hold_signals (void)
{
  sigset_t set;
  foreground_signal_set (&set);
  sigprocmask (SIG_BLOCK, &set, NULL);
}

int
python_command (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sandbox_warm *warm,
                struct sbx_error *err)
{
  struct python_cli c = { .max_output = DEFAULT_MAX_OUTPUT };
  struct python_run r = { .c = &c, .ctx = ctx, .stdin_fd = -1, .result_dirfd = -1, .meminfo_fd = -1, .parent_pidfd = -1,
                          .warm = warm, .warm_status_fd = -1, .warm_status = -1,
                          .warm_out_w = -1, .warm_err_w = -1, .warm_chan = -1, .warm_pidfd = -1 };
  int split = python_program_start (argc, argv), first, ret = -1, exec_ret;
  bool reads_stdin;

  sandbox_policy_defaults (&c.p);
  r.streams[0].fd = r.streams[1].fd = r.streams[0].null_fd = r.streams[1].null_fd = -1;
  first = cli_parse (cmd, split, argv, python_opt, &c, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    goto out;
  if (first < split)
    {
      cli_usage_error (err, "python: unexpected argument '%s' (see sbx-oci python --help)", argv[first]);
      goto out;
    }
  if (c.show_value && !warm)
    {
      /* the value is the warm interpreter's to show (runtime/warm/zygote.py) */
      cli_usage_error (err, "--show-value: only through a server (--connect): a one-shot run is python3's own");
      goto out;
    }
  if (!warm)
    hold_signals ();
  reads_stdin = python_reads_stdin (argc - split, argv + split);
  if (python_check_program_part (argc - split, argv + split, err) < 0)
    goto out;
  if (c.result && strcmp (c.result, "-") != 0 && python_result_open_dir (&r, err) < 0)
    goto out;
  if (warm && take_server_sandbox (&c, warm, err) < 0)
    goto fail_result;
  if (!warm)
    sandbox_sweep_orphans (ctx); /* a server sweeps for its workers (serve/server.c: sweep_orphans) */
  if (prepare (&r, argc - split, argv + split, err) < 0 || python_open_streams (&r, reads_stdin, err) < 0)
    {
      if (!err->exit_hint)
        err->exit_hint = SBX_EXIT_SETUP;
      goto fail_result;
    }
  for (size_t i = 0; i < r.limits.n_degraded; i++)
    sbx_warn (ctx, "degraded: %s", r.limits.degraded[i]);
  workdir_snapshot_take (r.w.h.fd, &r.before);
  describe_result (&r);

  exec_ret = execute (&r, err);
  if (exec_ret < 0 && !r.finished)
    {
      if (!r.watch.started && !err->exit_hint)
        err->exit_hint = SBX_EXIT_SETUP;
      explain_idmap_failure (&r, err);
      goto fail_result;
    }
  ret = report_run (&r, exec_ret, err);
  goto out;

fail_result:
  write_failure_result (&r, err);
out:
  python_run_free (&r);
  sandbox_policy_free (&c.p);
  return ret;
}
