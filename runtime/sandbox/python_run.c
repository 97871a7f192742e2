/* The parts of one `sbx-oci python` run (python_run.h) that the command (python.c),
 * its warm runs and a session's cells (runtime/serve/warm_run.c, cells.c) share: the
 * command line's options and program, the program's streams, how the run ended
 * (its numbers, the messages, --result), and the program as a warm fork reads it. */
#include "build-config.h"

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/container/foreground.h"
#include "runtime/sandbox/python_run.h"
#include "runtime/container/statedir.h"

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
  PO_SHOW_VALUE,
  PO_PUT_FILE,
  PO_GET_FILE,
  PO_LIST_FILES,
  PO_REMOVE_FILE,
  PO_DIE_WITH_PARENT,
};


const struct cli_opt python_cli_opts[] = {
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
  { "die-with-parent", PO_DIE_WITH_PARENT, no_argument, NULL,
    "end the sandbox when the process that started this command exits (a Jupyter server killed leaves no kernel "
    "running)" },
  { "no-subprocess", PO_NO_SUBPROCESS, no_argument, NULL,
    "the program cannot start programs: every exec after the interpreter's is refused (fork and threads work)" },
  { "connect", PO_CONNECT, required_argument, "SOCKET",
    "run through `sbx-oci serve` listening on SOCKET: forked from its warm interpreter, as isolated as one-shot" },
  { "session", PO_SESSION, required_argument, "NAME",
    "with --connect: a cell of session NAME, which keeps its state between calls (begun by the first)" },
  { "end-session", PO_END_SESSION, no_argument, NULL, "with --connect --session NAME: end that session" },
  { "show-value", PO_SHOW_VALUE, no_argument, NULL,
    "with --connect: the last expression's value shown as the REPL shows it, and in the result (a session's cells "
    "always)" },
  { "put-file", PO_PUT_FILE, required_argument, "NAME",
    "with --connect --session: write stdin to /work/NAME in the session (instead of a cell)" },
  { "get-file", PO_GET_FILE, required_argument, "NAME", "with --connect --session: write /work/NAME to stdout" },
  { "list-files", PO_LIST_FILES, required_argument, "DIR",
    "with --connect --session: list /work/DIR (. for all of /work) as JSON lines on stdout" },
  { "remove-file", PO_REMOVE_FILE, required_argument, "NAME",
    "with --connect --session: remove /work/NAME (a directory with what is in it)" },
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
    case PO_DIE_WITH_PARENT:
      c->die_with_parent = true;
      c->parent = getppid ();
      return 0;
    case PO_CONNECT:
      /* the client strips it (runtime/serve/client.c): here it came through a server */
      return cli_usage_error (err, "--connect: not through a server");
    case PO_SESSION:
    case PO_END_SESSION:
    case PO_PUT_FILE:
    case PO_GET_FILE:
    case PO_LIST_FILES:
    case PO_REMOVE_FILE:
      /* a server routes them before this (runtime/serve/session_route.c, cells.c) */
      return cli_usage_error (err, "--%s: only with --connect --session (a server keeps sessions)",
                              python_option_name (key));
    case PO_SHOW_VALUE:
      c->show_value = true;
      return 0;
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

/* The long name of option KEY. */
const char *
python_option_name (int key)
{
  for (const struct cli_opt *o = python_cli_opts; o->name; o++)
    if (o->key == key)
      return o->name;
  return "?";
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
        for (const struct cli_opt *o = python_cli_opts; o->name; o++)
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
  /* read while the program's process was still there, the cgroup may not have
     counted its last slice yet: never less than what it and its children used */
  {
    uint64_t ru_user = (uint64_t) ru->ru_utime.tv_sec * 1000000000ULL + (uint64_t) ru->ru_utime.tv_usec * 1000ULL;
    uint64_t ru_sys = (uint64_t) ru->ru_stime.tv_sec * 1000000000ULL + (uint64_t) ru->ru_stime.tv_usec * 1000ULL;
    if (r->watch.has_stats && st->has_cpu && ru_user + ru_sys > st->cpu_usage_ns)
      {
        st->cpu_usage_ns = ru_user + ru_sys;
        st->cpu_user_ns = ru_user;
        st->cpu_system_ns = ru_sys;
      }
  }
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

/* The program for the fork to read once inside: a sealed memfd of NUL-terminated
   strings: the number of arguments, the arguments, then the environment. */
int
python_program_fd (struct python_run *r, struct sbx_error *err)
{
  size_t n_env = 0;
  char **env = sandbox_process_env (&r->c->p, r->interp.executable, (const char *const *) environ, &n_env);
  char count[32];
  int fd = memfd_create ("sbx-program", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    sbx_error_set (err, errno, "memfd_create");
  else
    {
      snprintf (count, sizeof count, "%zu", r->n_args);
      fd_write_all (fd, count, strlen (count) + 1);
      for (size_t i = 0; i < r->n_args; i++)
        fd_write_all (fd, r->args[i], strlen (r->args[i]) + 1);
      for (size_t i = 0; i < n_env; i++)
        fd_write_all (fd, env[i], strlen (env[i]) + 1);
      if (lseek (fd, 0, SEEK_SET) < 0
          || fcntl (fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
        {
          sbx_error_set (err, errno, "seal the program's memfd");
          close (fd);
          fd = -1;
        }
    }
  for (size_t i = 0; i < n_env; i++)
    free (env[i]);
  free (env);
  return fd;
}

/* --die-with-parent: a pidfd of the process that started us (our parent when the
   option was read), taken while it is still our parent; -1 with the error if it has
   exited already (we were then reparented, and getppid() says so). A one-shot run
   and the client of a warm one (runtime/serve/client.c) both end with it. */
int
python_parent_pidfd (pid_t parent, struct sbx_error *err)
{
  int fd = (int) syscall (SYS_pidfd_open, parent, 0);
  if (fd < 0)
    return sbx_error_set (err, errno, "--die-with-parent: pidfd_open of the parent (%d)", (int) parent);
  if (getppid () != parent)
    {
      close (fd);
      return sbx_error_set (err, 0, "--die-with-parent: the process that started this one has exited");
    }
  return fd;
}
