/* sbx-oci check [--python PATH] [--allow-degraded]
 *
 * What this host can enforce, then proof: canaries run in the sandbox exactly as a
 * user's snippet would be (`sbx-oci python --result -`, a child of ours), each an
 * attack that must fail. A table of PASS/FAIL/WARN per layer; the exit status is 1
 * when a required layer fails (WARN: an optional layer, such as Landlock, is absent). */
#include "build-config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/cli.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/linux/landlock.h"
#include "runtime/sandbox/commands.h"

enum
{
  CO_PYTHON = 300,
  CO_ALLOW_DEGRADED,
  CO_NO_SUBPROCESS,
};

static const struct cli_opt check_opts[] = {
  { "python", CO_PYTHON, required_argument, "PATH", "the interpreter to check with" },
  { "allow-degraded", CO_ALLOW_DEGRADED, no_argument, NULL, "accept limits enforced per process (rootless)" },
  { "no-subprocess", CO_NO_SUBPROCESS, no_argument, NULL, "also prove python --no-subprocess with a canary" },
  { NULL },
};

struct check_cli
{
  const char *python;
  bool allow_degraded;
  bool no_subprocess;
  int failed;
};

static int
check_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct check_cli *c = data;
  (void) err;
  if (key == CO_PYTHON)
    c->python = arg;
  else if (key == CO_ALLOW_DEGRADED)
    c->allow_degraded = true;
  else if (key == CO_NO_SUBPROCESS)
    c->no_subprocess = true;
  return 0;
}

static void
row (struct check_cli *c, const char *layer, const char *verdict, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
row (struct check_cli *c, const char *layer, const char *verdict, const char *fmt, ...)
{
  va_list ap;
  printf ("%-28s %-5s ", layer, verdict);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  if (strcmp (verdict, "FAIL") == 0)
    c->failed++;
}

/* ------------------------------------------------------- host features */

static bool
can_unshare (int flags)
{
  pid_t pid = fork ();
  int status = 0;
  if (pid == 0)
    _exit (unshare (flags) == 0 ? 0 : 1);
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return false;
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static void
check_host (struct check_cli *c, struct sbx_ctx *ctx)
{
  enum cgroup_mode mode = cgroup_detect_mode ();
  int abi = landlock_abi ();
  char buf[512] = "";
  long r;

  row (c, "user namespaces", can_unshare (CLONE_NEWUSER) ? "PASS" : "FAIL", "%s",
       can_unshare (CLONE_NEWUSER) ? "can be created" : "cannot be created (sysctl user.max_user_namespaces?)");
  row (c, "pid/net/ipc/uts/mount ns", can_unshare (CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                                                   | CLONE_NEWUTS | CLONE_NEWNS)
                                          ? "PASS"
                                          : "FAIL",
       "inside a new user namespace");
  {
    int fd = open ("/proc/sys/kernel/seccomp/actions_avail", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
      close (fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn (buf, "\n")] = '\0';
    row (c, "seccomp", prctl (PR_GET_SECCOMP) >= 0 && n > 0 ? "PASS" : "FAIL", "actions: %s", n > 0 ? buf : "none");
  }
  r = syscall (SYS_openat2, -1, NULL, NULL, 0);
  row (c, "openat2", r < 0 && errno == ENOSYS ? "FAIL" : "PASS", "%s",
       r < 0 && errno == ENOSYS ? "missing (kernel < 5.6)" : "available (RESOLVE_IN_ROOT)");
  r = syscall (SYS_pidfd_open, getpid (), 0);
  row (c, "pidfd", r < 0 ? "FAIL" : "PASS", "%s", r < 0 ? "missing (kernel < 5.3)" : "available");
  if (r >= 0)
    close ((int) r);
  if (abi > 0)
    row (c, "landlock", "PASS", "ABI %d: a second file system layer", abi);
  else
    row (c, "landlock", "WARN", "absent: mounts alone confine the file system");
  if (mode == CGROUP_MODE_NONE)
    row (c, "cgroups", ctx->as_root ? "FAIL" : (c->allow_degraded ? "WARN" : "FAIL"), "none mounted");
  else if (!ctx->as_root)
    row (c, "cgroups", c->allow_degraded ? "WARN" : "FAIL",
         "%s, but not root: memory is a per-process RLIMIT_AS (--allow-degraded)", cgroup_mode_name (mode));
  else
    row (c, "cgroups", "PASS", "%s: memory and pids limits for the whole sandbox", cgroup_mode_name (mode));
}

/* ------------------------------------------------------------ canaries */

/* Run `sbx-oci [--root R] python OPTS... --result - -c CODE` with extra environment,
 * and parse the one JSON object it prints. */
static yajl_val
canary (struct sbx_ctx *ctx, struct check_cli *c, const char *const *opts, const char *code, const char *env_kv)
{
  const char *argv[40];
  size_t n = 0, len = 0, cap = 65536;
  _cleanup_free_ char *buf = xmalloc0 (cap);
  int out[2], status = 0;
  struct sbx_error err = { 0 };
  yajl_val v;
  pid_t pid;
  argv[n++] = "sbx-oci";
  argv[n++] = "--root";
  argv[n++] = ctx->root;
  argv[n++] = "python";
  if (c->python)
    {
      argv[n++] = "--python";
      argv[n++] = c->python;
    }
  if (c->allow_degraded)
    argv[n++] = "--allow-degraded";
  for (size_t i = 0; opts && opts[i] && n < 32; i++)
    argv[n++] = opts[i];
  argv[n++] = "--result";
  argv[n++] = "-";
  argv[n++] = "-c";
  argv[n++] = code;
  argv[n] = NULL;
  if (pipe2 (out, O_CLOEXEC) < 0)
    return NULL;
  pid = fork ();
  if (pid == 0)
    {
      int null = open ("/dev/null", O_RDWR);
      dup2 (null, 0);
      dup2 (null, 2);
      dup2 (out[1], 1);
      if (env_kv)
        putenv ((char *) env_kv);
      execv ("/proc/self/exe", (char *const *) argv);
      _exit (127);
    }
  close (out[1]);
  if (pid < 0)
    {
      close (out[0]);
      return NULL;
    }
  for (;;)
    {
      ssize_t r = read (out[0], buf + len, cap - len - 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      len += (size_t) r;
      if (len + 1 >= cap)
        break;
    }
  close (out[0]);
  waitpid (pid, &status, 0);
  v = json_parse (buf, len, "result", &err);
  sbx_error_clear (&err);
  return v;
}

static const char *
str_field (yajl_val v, const char *key)
{
  yajl_val f = json_member (v, key);
  return f && f->type == yajl_t_string ? f->u.string : NULL;
}

static bool
bool_field (yajl_val v, const char *key)
{
  yajl_val f = json_member (v, key);
  return f && YAJL_IS_TRUE (f);
}

/* The canary printed "PASS ..." or "FAIL ..." as its last line. */
static void
canary_row (struct check_cli *c, const char *layer, yajl_val v)
{
  const char *out = v ? str_field (v, "stdout") : NULL, *error = v ? str_field (v, "error") : NULL;
  _cleanup_free_ char *text = xstrdup (out ? out : "");
  char *last;
  size_t n = strlen (text);
  while (n && text[n - 1] == '\n')
    text[--n] = '\0';
  last = strrchr (text, '\n');
  last = last ? last + 1 : text;
  if (!v || error)
    row (c, layer, "FAIL", "the sandbox did not run: %s", error ? error : "no result");
  else if (strncmp (last, "PASS", 4) == 0)
    row (c, layer, "PASS", "%s", last + 5 > last + strlen (last) ? "" : last + 5);
  else
    row (c, layer, "FAIL", "%s", *last ? last : "(no verdict printed)");
}

static void
check_canaries (struct check_cli *c, struct sbx_ctx *ctx)
{
  yajl_val v;
  int ls = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t alen = sizeof a;
  int port = 0;
  _cleanup_free_ char *net_code = NULL;

  /* a host port on 127.0.0.1 that the sandbox must not reach */
  if (ls >= 0 && bind (ls, (struct sockaddr *) &a, sizeof a) == 0 && listen (ls, 1) == 0
      && getsockname (ls, (struct sockaddr *) &a, &alen) == 0)
    port = ntohs (a.sin_port);
  net_code = xasprintf ("import socket\n"
                        "bad = []\n"
                        "for host, port in (('127.0.0.1', %d), ('192.0.2.1', 80), ('1.1.1.1', 53)):\n"
                        "    s = socket.socket(); s.settimeout(2)\n"
                        "    try:\n"
                        "        s.connect((host, port)); bad.append(host)\n"
                        "    except OSError:\n"
                        "        pass\n"
                        "print('FAIL reached ' + ', '.join(bad) if bad else 'PASS no host port, no outside "
                        "address reachable')\n",
                        port);
  v = canary (ctx, c, NULL, net_code, NULL);
  canary_row (c, "canary: network", v);
  json_free (v);
  if (ls >= 0)
    close (ls);

  v = canary (ctx, c, NULL,
              "import errno\n"
              "bad = []\n"
              "for p in ('/usr/sbx-canary', '/etc/sbx-canary', '/sbx-canary', '/proc/sys/kernel/hostname'):\n"
              "    try:\n"
              "        open(p, 'w').write('x'); bad.append(p)\n"
              "    except OSError as e:\n"
              "        pass\n"
              "open('/work/ok', 'w').write('x')\n"
              "print('FAIL wrote ' + ', '.join(bad) if bad else 'PASS writes outside /work and /tmp fail')\n",
              NULL);
  canary_row (c, "canary: filesystem", v);
  json_free (v);

  v = canary (ctx, c, NULL,
              "import os\n"
              "print('FAIL SECRET_API_KEY is visible' if 'SECRET_API_KEY' in os.environ or "
              "b'sbx-canary-secret' in open('/proc/self/environ','rb').read() else 'PASS the caller\\'s secret is "
              "absent')\n",
              "SECRET_API_KEY=sbx-canary-secret");
  canary_row (c, "canary: environment", v);
  json_free (v);

  {
    static const char *const opts[] = { "--pids", "16", NULL };
    v = canary (ctx, c, opts,
                "import os, time\n"
                "n = 0\n"
                "try:\n"
                "    while n < 1000:\n"
                "        if os.fork() == 0:\n"
                "            time.sleep(30); os._exit(0)\n"
                "        n += 1\n"
                "except OSError as e:\n"
                "    print('PASS fork bomb stopped after %d forks (%s)' % (n, e.strerror))\n"
                "else:\n"
                "    print('FAIL 1000 forks went through')\n",
                NULL);
    canary_row (c, "canary: processes", v);
    json_free (v);
  }
  if (c->no_subprocess)
    {
      /* every way of starting a program fails, and fork still works */
      static const char *const opts[] = { "--no-subprocess", NULL };
      v = canary (ctx, c, opts,
                  "import os, subprocess, sys\n"
                  "ran = []\n"
                  "for name, start in (('subprocess', lambda: subprocess.run(['/bin/true'])),\n"
                  "                    ('posix_spawn', lambda: os.posix_spawn('/bin/true', ['true'], {})),\n"
                  "                    ('interpreter', lambda: subprocess.run([sys.executable, '-c', '1']))):\n"
                  "    try:\n"
                  "        start(); ran.append(name)\n"
                  "    except PermissionError:\n"
                  "        pass\n"
                  "pid = os.fork()\n"
                  "if pid == 0:\n"
                  "    os._exit(0)\n"
                  "forked = os.waitpid(pid, 0)[1] == 0\n"
                  "print('FAIL started: %s' % ', '.join(ran) if ran else 'FAIL fork failed' if not forked\n"
                  "      else 'PASS subprocess, posix_spawn and the interpreter refused; fork works')\n",
                  NULL);
      canary_row (c, "canary: no subprocess", v);
      json_free (v);
    }
  {
    static const char *const opts[] = { "--memory", "64M", NULL };
    v = canary (ctx, c, opts, "x = bytearray(512 << 20)\nprint('FAIL 512 MiB allocated under 64 MiB')\n", NULL);
    if (v && bool_field (v, "oom_killed"))
      row (c, "canary: memory", "PASS", "512 MiB under --memory 64M: OOM-killed");
    else if (v && !str_field (v, "error") && str_field (v, "stderr") && strstr (str_field (v, "stderr"), "MemoryError"))
      row (c, "canary: memory", c->allow_degraded ? "WARN" : "FAIL",
           "MemoryError from the per-process RLIMIT_AS (degraded: no cgroup)");
    else
      canary_row (c, "canary: memory", v);
    json_free (v);
  }
  {
    static const char *const opts[] = { "--timeout", "1", NULL };
    v = canary (ctx, c, opts, "while True:\n    pass\n", NULL);
    if (v && bool_field (v, "timed_out"))
      row (c, "canary: wall clock", "PASS", "a spin is killed at --timeout 1");
    else if (!v || str_field (v, "error"))
      row (c, "canary: wall clock", "FAIL", "the sandbox did not run: %s",
           v ? str_field (v, "error") : "no result");
    else
      row (c, "canary: wall clock", "FAIL", "the spin was not timed out");
    json_free (v);
  }
}

static int
run_check (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct check_cli c = { 0 };
  int first = cli_parse (cmd, argc, argv, check_opt, &c, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (first < argc)
    return cli_usage_error (err, "check: unexpected argument '%s'", argv[first]);
  printf ("%-28s %-5s %s\n", "LAYER", "", "DETAIL");
  check_host (&c, ctx);
  check_canaries (&c, ctx);
  if (c.failed)
    {
      fprintf (stderr, "sbx-oci check: %d required layer(s) failed\n", c.failed);
      return 1;
    }
  return 0;
}

const struct command cmd_check = {
  .name = "check",
  .args = "[OPTIONS]",
  .summary = "tell what this host can enforce, and prove it with canaries run in the sandbox",
  .opts = check_opts,
  .run = run_check,
};
