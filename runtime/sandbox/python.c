/* sbx-oci python [OPTIONS] (-c CODE | -m MODULE | SCRIPT | -) [ARGS...]
 *
 * One untrusted Python program, run once in the sandbox of sandbox.h, with nothing but
 * the host's interpreter: build (or reuse) the bundle, run it in the foreground like
 * `run`, relay its output with a cap per stream, enforce the wall clock, and report
 * how it ended (exit status; with --result, one JSON object: sandbox_result.c).
 *
 * Exit status: the program's (128+N when killed by signal N; a timeout or an OOM kill
 * is a SIGKILL: 137); 125 when the sandbox could not be set up (as podman run), 2 for
 * a bad command line. */
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
#include "runtime/container.h"
#include "runtime/fs.h"
#include "runtime/landlock.h"
#include "runtime/sandbox/commands.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/statedir.h"

extern char **environ;

enum
{
  PO_MAX_OUTPUT = 300,
  PO_RESULT,
  PO_ID,
  PO_NO_SUBPROCESS,
  PO_CONNECT,
  PO_SESSION,
  PO_END_SESSION,
};

#define DEFAULT_MAX_OUTPUT (1u << 20)

static const struct cli_opt python_opts[] = {
  SANDBOX_CLI_OPT_INTERPRETER ("python"),
  SANDBOX_CLI_OPT_WORKDIR ("writable host dir, the sandbox's cwd and HOME at /work (default: a fresh one, removed "
                           "after the run)"),
  SANDBOX_CLI_OPTS,
  SANDBOX_CLI_OPT_TIMEOUT ("wall clock limit, kills everything (default 300; 0: none)"),
  SANDBOX_CLI_OPT_ALLOW_DEGRADED ("run even if a limit cannot be enforced as asked (named in a warning and the "
                                  "result)"),
  { "max-output", PO_MAX_OUTPUT, required_argument, "SIZE", "cap of each of stdout and stderr (default 1M)" },
  { "result", PO_RESULT, required_argument, "FILE|-", "write the result as JSON (-: stdout, with the output in it)" },
  { "id", PO_ID, required_argument, "ID", "container id (default: generated)" },
  { "no-subprocess", PO_NO_SUBPROCESS, no_argument, NULL,
    "the program cannot start programs: every exec after the interpreter's is refused (fork and threads work)" },
  { "connect", PO_CONNECT, required_argument, "SOCKET",
    "run through `sbx-oci serve` listening on SOCKET: forked from its warm interpreter, as isolated as one-shot" },
  { "session", PO_SESSION, required_argument, "NAME",
    "with --connect: a cell of session NAME, which keeps its state between calls (begun by the first)" },
  { "end-session", PO_END_SESSION, no_argument, NULL, "with --connect --session NAME: end that session" },
  { NULL },
};


int
python_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct python_cli *c = data;
  int r = sandbox_cli_opt (&c->p, key, arg, err);
  int64_t v;
  if (r <= 0)
    return r;
  switch (key)
    {
    case PO_MAX_OUTPUT:
      if (cli_parse_bytes ("--max-output", arg, &v, err) < 0)
        return -1;
      if (v < 0)
        return cli_usage_error (err, "--max-output: '%s' is not a size", arg);
      c->max_output = (uint64_t) v;
      return 0;
    case PO_RESULT:
      c->result = arg;
      return 0;
    case PO_NO_SUBPROCESS:
      c->no_subprocess = true;
      return 0;
    case PO_CONNECT:
      /* the client strips it (sandbox_connect.c): here it came through a server */
      return cli_usage_error (err, "--connect: not through a server");
    case PO_SESSION:
    case PO_END_SESSION:
      /* a server routes them before this (serve_session.c) */
      return cli_usage_error (err, "--%s: only with --connect (a server keeps sessions)",
                              key == PO_SESSION ? "session" : "end-session");
    case PO_ID:
      if (statedir_validate_id (arg, err) < 0)
        {
          err->exit_hint = SBX_EXIT_USAGE;
          return sbx_error_wrap (err, "--id");
        }
      c->id = arg;
      return 0;
    default:
      return 0;
    }
}

/* Where our options end and the program begins: at -c, -m, -, "--" or the first
 * word that is not an option (SCRIPT). Everything after belongs to the program, even
 * what looks like one of our options. */
int
python_program_start (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "-c") == 0 || strcmp (a, "-m") == 0 || strcmp (a, "-") == 0 || a[0] != '-'
          || strcmp (a, "--") == 0)
        return i;
      if (strncmp (a, "--", 2) == 0 && !strchr (a, '='))
        for (const struct cli_opt *o = python_opts; o->name; o++)
          if (strcmp (o->name, a + 2) == 0 && o->has_arg == required_argument)
            {
              i++; /* its value */
              break;
            }
    }
  return argc;
}

/* Our stdin goes to the program, unless it is a terminal and the program is not "-":
   a one-shot sandbox is not interactive, and a terminal is the caller's. */
bool
python_reads_stdin (int argc, char **argv)
{
  return !isatty (0)
         || (argc > 0
             && (strcmp (argv[0], "-") == 0 || (strcmp (argv[0], "--") == 0 && argc > 1 && strcmp (argv[1], "-") == 0)));
}

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
  python_warm_free (r);
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
}

static void
add_arg (struct python_run *r, const char *a)
{
  r->args = xrealloc (r->args, (r->n_args + 1) * sizeof *r->args);
  r->args[r->n_args++] = xstrdup (a);
}

/* The program part's grammar, checked before anything is made (a usage error must
 * not first ask the interpreter or make a workdir). */
int
python_check_program_part (int argc, char **argv, struct sbx_error *err)
{
  int i = argc > 0 && strcmp (argv[0], "--") == 0 ? 1 : 0;
  if (i >= argc)
    return cli_usage_error (err, "python: nothing to run: give -c CODE, -m MODULE, SCRIPT or - (see sbx-oci python "
                                 "--help)");
  if ((strcmp (argv[i], "-c") == 0 || strcmp (argv[i], "-m") == 0) && i + 1 >= argc)
    return cli_usage_error (err, "python: %s needs an argument", argv[i]);
  return 0;
}

/* process.args from the program part of the command line. */
int
python_program_args (struct python_run *r, const char *python, int argc, char **argv, struct sbx_error *err)
{
  int i = 0;
  if (argc > 0 && strcmp (argv[0], "--") == 0)
    i++;
  if (i >= argc)
    return cli_usage_error (err, "python: nothing to run: give -c CODE, -m MODULE, SCRIPT or - (see sbx-oci python "
                                 "--help)");
  add_arg (r, python);
  if (strcmp (argv[i], "-c") == 0 || strcmp (argv[i], "-m") == 0)
    {
      if (i + 1 >= argc)
        return cli_usage_error (err, "python: %s needs an argument", argv[i]);
      add_arg (r, argv[i]);
      add_arg (r, argv[i + 1]);
      i += 2;
    }
  else if (strcmp (argv[i], "-") == 0)
    {
      add_arg (r, "-");
      i++;
    }
  else
    {
      /* SCRIPT: inside the workdir it is run from there (its siblings importable);
         elsewhere it is bound read-only at /sbx/NAME. Its directory is resolved on
         the host, its name only where no sandbox could have left a link in its place:
         in the workdir the sandbox resolves it (as the sandbox user, in its own view),
         in a --rw path a link is refused. */
      char resolved[PATH_MAX], dir_real[PATH_MAX];
      _cleanup_free_ char *real = NULL;
      const char *slash = strrchr (argv[i], '/'), *base = slash ? slash + 1 : argv[i];
      _cleanup_free_ char *dir = slash ? (slash == argv[i] ? xstrdup ("/") : strndup (argv[i], (size_t) (slash - argv[i])))
                                       : xstrdup (".");
      _cleanup_close_ int fd = -1;
      struct stat st;
      bool sandbox_writes = false;
      if (!*base || strcmp (base, ".") == 0 || strcmp (base, "..") == 0 || !realpath (dir, dir_real))
        return sbx_error_set (err, *base ? errno : EISDIR, "python: script %s", argv[i]);
      real = xasprintf ("%s%s%s", dir_real, strcmp (dir_real, "/") ? "/" : "", base);
      if (path_is_under (real, r->w.h.path))
        {
          _cleanup_free_ char *inside = xasprintf (SANDBOX_WORKDIR "%s", real + strlen (r->w.h.path));
          add_arg (r, inside);
          i++;
          goto rest;
        }
      for (size_t k = 0; k < r->n_rw; k++)
        sandbox_writes |= path_is_under (real, r->rw[k].path);
      fd = open (real, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (sandbox_writes ? O_NOFOLLOW : 0));
      if (fd < 0 || fstat (fd, &st) < 0)
        return sbx_error_set (err, errno, "python: script %s", argv[i]);
      if (!S_ISREG (st.st_mode))
        return sbx_error_set (err, 0, "python: script %s is not a regular file", argv[i]);
      if (!realpath (real, resolved))
        return sbx_error_set (err, errno, "python: script %s", argv[i]);
      base = strrchr (resolved, '/') + 1;
      r->script_source = xstrdup (resolved);
      r->script_dest = xasprintf ("/sbx/%s", base);
      add_arg (r, r->script_dest);
      i++;
    }
rest:
  for (; i < argc; i++)
    add_arg (r, argv[i]);
  return 0;
}

static int
prepare (struct python_run *r, int argc, char **argv, struct sbx_error *err)
{
  struct sandbox_policy *p = &r->c->p;
  _cleanup_free_ char *python = NULL, *cache = xasprintf ("%s/@python", r->ctx->root), *owner = NULL;
  const char *exe;
  uid_t host_uid = r->ctx->as_root ? p->host_uid : geteuid ();
  gid_t host_gid = r->ctx->as_root ? (gid_t) p->host_uid : getegid ();
  struct sandbox_run_spec spec = { 0 };

  if (sandbox_limits_plan (r->ctx, p, &r->limits, err) < 0)
    return -1;
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
  if (mkdir (r->ctx->root, 0700) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", r->ctx->root);
  if (p->rootfs)
    {
      char real[PATH_MAX];
      if (!realpath (p->rootfs, real))
        return sbx_error_set (err, errno, "--rootfs %s", p->rootfs);
      r->rootfs = xstrdup (real);
      r->bundle = xstrdup (r->ctx->root);
      exe = p->python ? p->python : "/usr/bin/python3";
      if (exe[0] != '/')
        return cli_usage_error (err, "--python: with --rootfs, the interpreter's absolute path in the image");
    }
  else
    {
      python = p->python ? xstrdup (p->python) : sandbox_default_python (err);
      if (!python || sandbox_skeleton_ensure (cache, python, p, &r->bundle, &r->interp, err) < 0)
        return -1;
      r->rootfs = xasprintf ("%s/rootfs", r->bundle);
      exe = r->interp.executable;
    }
  if (workdir_prepare (r->ctx, p->workdir, host_uid, host_gid, &r->w, err) < 0
      || python_program_args (r, exe, argc, argv, err) < 0)
    return -1;
  if (p->rootfs
      && (sandbox_image_add_mount_points (r->rootfs, err) < 0 || sandbox_skeleton_add_mount_points (r->rootfs, p, err) < 0))
    return -1;
  r->id = r->c->id ? xstrdup (r->c->id) : statedir_generate_id ("py-");
  if (statedir_validate_id (r->id, err) < 0)
    return -1;

  spec.rootfs = r->rootfs;
  spec.interp = p->rootfs ? NULL : &r->interp;
  spec.python = exe;
  if (r->warm)
    {
      /* The container's init only holds the run's namespaces, cgroup and mounts; the
         warm interpreter joins it (as pid 2) and runs r->args, which the config
         carries for what reads it (the state, `ps`) but nothing executes. */
      spec.args = r->args;
      spec.n_args = r->n_args;
      spec.hold = true;
    }
  else
    {
      spec.args = r->args;
      spec.n_args = r->n_args;
    }
  spec.workdir = r->workdir_source = host_writable_mount_source (&r->w.h);
  spec.host_uid = host_uid;
  spec.host_gid = host_gid;
  spec.workdir_idmap = r->w.h.idmap;
  spec.workdir_owner = r->w.h.owner;
  spec.workdir_group = r->w.h.group;
  spec.script_source = r->script_source;
  spec.script_dest = r->script_dest;
  spec.caller_env = (const char *const *) environ;
  spec.owner = owner = sandbox_owner_annotation ();
  spec.temp_workdir = r->w.temporary ? r->w.h.path : NULL;
  /* beside the skeleton; with --rootfs (no skeleton) in the skeletons' directory, not
     among the state root's container dirs */
  if (p->rootfs && mkdir (cache, 0700) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", cache);
  r->meminfo_fd = sandbox_meminfo_run_open (p->rootfs ? cache : r->bundle, p->memory, &r->meminfo, err);
  if (r->meminfo_fd < 0)
    return -1;
  spec.meminfo = r->meminfo;
  if (r->c->no_subprocess)
    {
      if (exec_guard_start (&r->guard, r->ctx->root, err) < 0)
        return -1;
      spec.exec_listener = r->guard.listener_path;
    }
  r->config = sandbox_config_json (p, &r->limits, &spec, false, &r->config_len, err);
  return r->config ? 0 : -1;
}

int
python_open_streams (struct python_run *r, bool program_reads_stdin, struct sbx_error *err)
{
  bool collect = r->c->result && strcmp (r->c->result, "-") == 0;
  r->stdin_fd = program_reads_stdin ? fcntl (0, F_DUPFD_CLOEXEC, 3) : open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (r->stdin_fd < 0)
    return sbx_error_set (err, errno, "stdin");
  for (int i = 0; i < 2; i++)
    r->streams[i] = (struct output_stream) { .fd = -1, .out_fd = collect ? -1 : 1 + i, .cap = r->c->max_output,
                                             .null_fd = -1 };
  /* EMFILE at --nofile: the kernel counts no such refusal, so what the runtime can see
   * is the program saying so (Python's OSError, perror, a shell), in glibc's words */
  r->streams[1].watch = "Too many open files";
  return 0;
}

/* Whether a --tmp-size tmpfs (/tmp, /dev/shm) was full when the program ended: less
   than 64 KiB or no inode left. Closes the fds. A program that filled one and then
   removed its files is not seen: the kernel counts no ENOSPC. */
static bool
tmp_filled (int *held, size_t n)
{
  bool full = false;
  for (size_t i = 0; i < n; i++)
    {
      struct statfs sf;
      if (held[i] < 0)
        continue;
      if (fstatfs (held[i], &sf) == 0 && sf.f_type == TMPFS_MAGIC
          && ((uint64_t) sf.f_bavail * (uint64_t) sf.f_bsize < (64u << 10) || (sf.f_files && sf.f_ffree == 0)))
        full = true;
      close (held[i]);
      held[i] = -1;
    }
  return full;
}

static void
collect_numbers (struct python_run *r)
{
  struct sandbox_result *res = &r->res;
  struct cgroup_stats *st = &r->watch.stats;
  const struct rusage *ru = &r->watch.fg.rusage;
  /* a standby's: what its join spent before the request is not the program's */
  st->cpu_usage_ns -= st->cpu_usage_ns >= r->cpu_base_ns ? r->cpu_base_ns : st->cpu_usage_ns;
  st->cpu_user_ns -= st->cpu_user_ns >= r->cpu_base_user_ns ? r->cpu_base_user_ns : st->cpu_user_ns;
  st->cpu_system_ns -= st->cpu_system_ns >= r->cpu_base_system_ns ? r->cpu_base_system_ns : st->cpu_system_ns;
  res->signal = r->watch.fg.term_signal;
  res->timed_out = r->watch.timed_out;
  if (r->watch.has_stats && st->has_oom)
    res->oom_killed = st->oom_kill > 0;
  if (r->watch.has_stats && st->has_pids)
    res->pids_limit_hit = st->pids_max_events > 0;
  res->fsize_reached = res->signal == SIGXFSZ;
  res->tmp_filled = tmp_filled (r->watch.held, ARRAY_SIZE (r->watch.held));
  res->nofile_reported = r->streams[1].found;
  if (r->watch.has_stats && st->has_cpu && (st->cpu_usage_ns || st->cpu_user_ns || st->cpu_system_ns))
    {
      /* The total is exact; the user/system split is the scheduler tick's sampling
         (v1's cpuacct.usage_user and v2's user_usec alike), which a run of a few
         milliseconds can miss altogether: then the total counts as user time. */
      double total = (double) (st->cpu_usage_ns ? st->cpu_usage_ns : st->cpu_user_ns + st->cpu_system_ns);
      double split = (double) (st->cpu_user_ns + st->cpu_system_ns);
      res->cpu_user_ms = (split > 0 ? total * (double) st->cpu_user_ns / split : total) / 1e6;
      res->cpu_sys_ms = (split > 0 ? total * (double) st->cpu_system_ns / split : 0) / 1e6;
      res->cpu_scope = "cgroup";
    }
  else
    {
      res->cpu_user_ms = (double) ru->ru_utime.tv_sec * 1e3 + (double) ru->ru_utime.tv_usec / 1e3;
      res->cpu_sys_ms = (double) ru->ru_stime.tv_sec * 1e3 + (double) ru->ru_stime.tv_usec / 1e3;
      res->cpu_scope = "waited";
    }
  if (r->watch.has_stats && st->has_memory && st->memory_peak)
    {
      res->peak_memory_bytes = st->memory_peak;
      res->peak_memory_scope = "cgroup";
    }
  else
    {
      res->peak_memory_bytes = (uint64_t) ru->ru_maxrss * 1024;
      res->peak_memory_scope = "largest-process";
    }
  /* RLIMIT_CPU: SIGXCPU at the limit, SIGKILL a second later if it was ignored */
  {
    double cpu_s = (double) (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec)
                   + (double) (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
    res->cpu_time_exceeded = res->signal == SIGXCPU
                             || (res->signal == SIGKILL && !res->timed_out && !res->oom_killed
                                 && cpu_s >= (double) r->c->p.cpu_time - 0.05);
  }
}

void
python_report (struct python_run *r)
{
  static const char *const names[] = { "stdout", "stderr" };
  if (r->res.timed_out && r->res.session)
    fprintf (stderr, "sbx-oci: python: timed out after %g s: the cell was killed, session %s is as it was before it\n",
             r->c->p.timeout, r->res.session);
  else if (r->res.timed_out)
    fprintf (stderr, "sbx-oci: python: timed out after %g s: everything in the sandbox was killed\n",
             r->c->p.timeout);
  else if (r->res.session && !r->res.session_kept)
    fprintf (stderr, "sbx-oci: python: the cell died: session %s is as it was before it\n", r->res.session);
  if (r->res.cpu_time_exceeded)
    fprintf (stderr, "sbx-oci: python: a process reached --cpu-time (%llu s)\n",
             (unsigned long long) r->c->p.cpu_time);
  if (r->guard.refused)
    fprintf (stderr, "sbx-oci: python: %lu exec%s refused (--no-subprocess), the first: %s\n", r->guard.refused,
             r->guard.refused == 1 ? "" : "s", r->guard.n_paths ? r->guard.paths[0] : "?");
  for (int i = 0; i < 2; i++)
    if (r->streams[i].truncated)
      fprintf (stderr, "sbx-oci: python: %s truncated at %llu bytes (the program wrote %llu)\n", names[i],
               (unsigned long long) r->streams[i].cap, (unsigned long long) r->streams[i].total);
}

/* --result FILE may be in a directory the sandbox wrote (the workdir, a --rw path):
   its directory is opened before the run, and FILE is then replaced by a new file
   made there (O_EXCL, a random name, renamed over it), so that a link or hard link
   the sandbox left at FILE is replaced, never opened. A fifo or device there is
   written to as it is (a caller's /dev/null, a fifo someone reads), without creating
   or blocking: one the sandbox left has no reader, and the write fails at once. */
int
python_result_open_dir (struct python_run *r, struct sbx_error *err)
{
  const char *f = r->c->result, *slash = strrchr (f, '/');
  _cleanup_free_ char *dir = slash ? (slash == f ? xstrdup ("/") : strndup (f, (size_t) (slash - f))) : xstrdup (".");
  r->result_name = xstrdup (slash ? slash + 1 : f);
  if (!*r->result_name)
    return cli_usage_error (err, "--result %s: not a file name", f);
  r->result_dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (r->result_dirfd < 0)
    return sbx_error_set (err, errno, "--result %s", f);
  return 0;
}

static int
result_file_write (struct python_run *r, const char *json, size_t len, struct sbx_error *err)
{
  struct stat st;
  char tmp[64] = "";
  _cleanup_close_ int fd = -1;
  if (r->result_dirfd < 0)
    return sbx_error_set (err, 0, "--result %s: its directory was not opened", r->c->result);
  if (fstatat (r->result_dirfd, r->result_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG (st.st_mode)
      && !S_ISLNK (st.st_mode))
    {
      fd = openat (r->result_dirfd, r->result_name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd < 0 || write (fd, json, len) != (ssize_t) len || write (fd, "\n", 1) != 1)
        return sbx_error_set (err, errno, "--result %s", r->c->result);
      return 0;
    }
  for (int tries = 0; fd < 0 && tries < 8; tries++)
    {
      _cleanup_free_ char *id = statedir_generate_id (".sbx-result-");
      snprintf (tmp, sizeof tmp, "%s", id);
      fd = openat (r->result_dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST)
        break;
    }
  if (fd < 0 || write (fd, json, len) != (ssize_t) len || write (fd, "\n", 1) != 1
      || renameat (r->result_dirfd, tmp, r->result_dirfd, r->result_name) < 0)
    {
      int e = errno;
      if (fd >= 0)
        (void) unlinkat (r->result_dirfd, tmp, 0);
      return sbx_error_set (err, e, "--result %s", r->c->result);
    }
  return 0;
}

int
python_write_result (struct python_run *r, struct sbx_error *err)
{
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  if (!r->c->result)
    return 0;
  json = sandbox_result_json (&r->res, &len);
  if (!json)
    return sbx_error_set (err, 0, "--result: generating the JSON failed");
  if (strcmp (r->c->result, "-") == 0)
    {
      fwrite (json, 1, len, stdout);
      fputc ('\n', stdout);
      fflush (stdout);
      return 0;
    }
  return result_file_write (r, json, len, err);
}

/* What /proc/meminfo shows follows the sandbox's use while it runs. */
static void
update_meminfo (void *data, uint64_t bytes)
{
  struct python_run *r = data;
  sandbox_meminfo_update (r->meminfo_fd, r->c->p.memory, bytes);
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
  r->watch.fg.on_fds = output_on_ready;
  r->watch.fg.data = r->streams;
  if (r->warm)
    python_warm_arm (r, &o, fds, pipes[0][1], pipes[1][1]);
  /* standing by, the clock starts with the request (python_warm.c) */
  if (r->c->p.timeout > 0 && !(r->warm && (r->warm->await_request || r->warm->session)))
    r->watch.fg.deadline_ns = r->t0 + (int64_t) (r->c->p.timeout * 1e9);
  /* held to see afterwards whether the program filled them (tmp_filled) */
  r->watch.hold[0] = "/tmp";
  r->watch.hold[1] = "/dev/shm";
  r->watch.held[0] = r->watch.held[1] = -1;
  r->watch.on_memory_usage = update_meminfo;
  r->watch.memory_data = r;
  ret = container_run (r->ctx, &o, false, false, &r->watch, &r->status, err);
  exec_guard_finish (&r->guard, r->watch.started);
  if (r->warm)
    {
      python_warm_release (r);
      if (ret == 0)
        ret = python_warm_outcome (r, err);
    }
  /* Everything in the sandbox is gone (its cgroup or pid namespace went with it):
     what is still in the pipes is the last of the output. */
  if (!r->finished)
    output_drain (r->streams, 2, 200);
  return ret;
}

/* The program has ended and its output is drained: how it ended, reported (--result).
   The program's status, or -1 if the result could not be written. */
int
python_finish (struct python_run *r, struct sbx_error *err)
{
  r->finished = true;
  r->res.wall_ms = (double) (monotonic_ns () - r->t0) / 1e6;
  r->res.started = true;
  r->res.exit_code = r->status;
  collect_numbers (r);
  workdir_snapshot_take (r->w.h.fd, &r->after);
  /* Python ignores SIGXFSZ (EFBIG instead): a file the limit stopped is that long */
  for (size_t i = 0; i < r->after.n && !r->res.fsize_reached; i++)
    r->res.fsize_reached = S_ISREG (r->after.e[i].mode) && r->after.e[i].size >= r->c->p.fsize;
  python_report (r);
  r->finish_ret = python_write_result (r, err) < 0 ? -1 : r->status;
  return r->finish_ret;
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

static int
python_command (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sandbox_warm *warm,
                struct sbx_error *err)
{
  struct python_cli c = { .max_output = DEFAULT_MAX_OUTPUT };
  struct python_run r = { .c = &c, .ctx = ctx, .stdin_fd = -1, .result_dirfd = -1, .meminfo_fd = -1,
                          .warm = warm, .warm_status_fd = -1, .warm_status = -1,
                          .warm_out_w = -1, .warm_err_w = -1, .warm_chan = -1 };
  int split = python_program_start (argc, argv), first, ret = -1;
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
  reads_stdin = python_reads_stdin (argc - split, argv + split);
  if (python_check_program_part (argc - split, argv + split, err) < 0)
    goto out;
  if (c.result && strcmp (c.result, "-") != 0 && python_result_open_dir (&r, err) < 0)
    goto out;
  if (warm)
    {
      /* The warm interpreter is the server's, and so is the sandbox it forks from: a
         run that asks for another cannot be set up here (125, named in the result). */
      const char *why = NULL;
      if (c.no_subprocess)
        why = "--no-subprocess: not through --connect: the exec supervisor is per run";
      else if (c.p.rootfs)
        why = "--rootfs: through --connect the sandbox is the server's, over the host's system paths";
      else if (c.p.python && strcmp (c.p.python, warm->python) != 0)
        why = "--python: through --connect the server's interpreter runs the program";
      if (why)
        {
          sbx_error_set (err, 0, "%s", why);
          err->exit_hint = SBX_EXIT_SETUP;
          goto fail_result;
        }
      c.p.python = warm->python;
    }
  sandbox_sweep_orphans (ctx);
  if (prepare (&r, argc - split, argv + split, err) < 0 || python_open_streams (&r, reads_stdin, err) < 0)
    {
      if (!err->exit_hint)
        err->exit_hint = SBX_EXIT_SETUP;
      goto fail_result;
    }
  for (size_t i = 0; i < r.limits.n_degraded; i++)
    sbx_warn (ctx, "degraded: %s", r.limits.degraded[i]);
  workdir_snapshot_take (r.w.h.fd, &r.before);

  r.res.id = r.id;
  r.res.policy = &c.p;
  r.res.limits = &r.limits;
  r.res.out = &r.streams[0];
  r.res.err = &r.streams[1];
  r.res.include_output = c.result && strcmp (c.result, "-") == 0;
  r.res.before = &r.before;
  r.res.after = &r.after;
  r.res.workdir = r.w.temporary ? NULL : r.w.h.path;
  r.res.landlock_abi = landlock_abi ();
  r.res.guard = c.no_subprocess ? &r.guard : NULL;

  if (execute (&r, err) < 0)
    {
      if (!r.watch.started && !err->exit_hint)
        err->exit_hint = SBX_EXIT_SETUP;
      explain_idmap_failure (&r, err);
      goto fail_result;
    }
  /* a warm run may have finished before its container was torn down */
  ret = r.finished ? r.finish_ret : python_finish (&r, err);
  if (r.finished && ret < 0)
    *err = r.finish_err;
  goto out;

fail_result:
  /* A caller reading the result learns why nothing ran. */
  {
    _cleanup_free_ char *msg = sbx_error_string (err);
    struct sbx_error e2 = { 0 };
    r.res.id = r.id ? r.id : c.id;
    r.res.policy = &c.p;
    r.res.limits = &r.limits;
    r.res.error = msg;
    r.res.started = false;
    r.res.include_output = c.result && strcmp (c.result, "-") == 0;
    if (python_write_result (&r, &e2) < 0)
      sbx_error_clear (&e2);
  }
out:
  python_run_free (&r);
  sandbox_policy_free (&c.p);
  return ret;
}

static int
run_python (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  for (int i = 1; i < python_program_start (argc, argv); i++)
    if (strcmp (argv[i], "--connect") == 0 || strncmp (argv[i], "--connect=", 10) == 0)
      return sandbox_connect_args (argc, argv, python_program_start (argc, argv), err);
  return python_command (ctx, cmd, argc, argv, NULL, err);
}

int
sandbox_python_warm (struct sbx_ctx *ctx, int argc, char **argv, struct sandbox_warm *warm, struct sbx_error *err)
{
  return python_command (ctx, &cmd_python, argc, argv, warm, err);
}

const struct command cmd_python = {
  .name = "python",
  .args = "[OPTIONS] (-c CODE | -m MODULE | SCRIPT | -) [ARGS...]",
  .summary = "run untrusted Python once in a sandbox over the host's interpreter, and report how it ended",
  .opts = python_opts,
  .run = run_python,
  .permute = false,
};
