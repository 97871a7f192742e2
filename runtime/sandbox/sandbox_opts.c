/* The options `sbx-oci python` and `sbx-oci bundle --python` share, and their
 * defaults (2 GiB, 300 s of CPU, 1024 files and 256 MiB per file, loopback network,
 * as a Rust inference server's sandbox has them; processes and threads sized by the
 * host's CPUs, below). */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"

/* Ordinary code sizes its pools by the CPUs it sees: multiprocessing.Pool() starts
 * os.cpu_count() processes, ThreadPoolExecutor() min(32, CPUs + 4) threads, and
 * OpenBLAS, OpenMP, MKL and numexpr a thread per CPU in every process that loads them.
 * --pids counts threads too, so 64 (the old default) broke pools and CPython's own
 * multiprocessing tests on any host. The numeric libraries get at most 4 threads per
 * process (their variables, unless --env sets them), and --pids room for a Pool of one
 * process per CPU each with those threads and its helpers: 8 per CPU, at least 1024
 * (podman's default is 2048), still a bound a fork bomb hits in a few milliseconds. */
static unsigned
online_cpus (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 && n < 65536 ? (unsigned) n : 1;
}

void
sandbox_policy_defaults (struct sandbox_policy *p)
{
  unsigned cpus = online_cpus ();
  memset (p, 0, sizeof *p);
  p->memory = 2048ULL << 20;
  p->cpu_time = 300;
  p->pids = cpus * 8 > 1024 ? cpus * 8 : 1024;
  p->lib_threads = cpus < 4 ? cpus : 4;
  p->nofile = 1024;
  p->fsize = 256ULL << 20;
  /* 256M: numpy's own tests write 64M files there; the pages count against --memory
     anyway (tmpfs is charged to the sandbox's cgroup) */
  p->tmp_size = 256ULL << 20;
  p->network = SANDBOX_NET_LOOPBACK;
  p->timeout = 300;
  p->host_uid = SANDBOX_HOST_ID_DEFAULT;
}

static int
positive_bytes (const char *opt, const char *arg, uint64_t min, uint64_t *out, struct sbx_error *err)
{
  int64_t v;
  if (cli_parse_bytes (opt, arg, &v, err) < 0)
    return -1;
  if (v < (int64_t) min)
    return cli_usage_error (err, "%s: '%s' is below the minimum of %llu bytes", opt, arg, (unsigned long long) min);
  *out = (uint64_t) v;
  return 0;
}

static int
count (const char *opt, const char *arg, unsigned min, unsigned max, uint64_t *out, struct sbx_error *err)
{
  unsigned v;
  if (cli_parse_uint (opt, arg, max, &v, err) < 0)
    return -1;
  if (v < min)
    return cli_usage_error (err, "%s: '%s' is below the minimum of %u", opt, arg, min);
  *out = v;
  return 0;
}

/* Where the sandbox's own mounts are: a bind there would replace or hide them. */
static bool
reserved_destination (const char *dest)
{
  static const char *const exact[] = { "/", "/tmp", SANDBOX_WORKDIR };
  static const char *const trees[] = { "/proc", "/dev" };
  char norm[4096];
  size_t n = 0;
  /* collapse repeated and trailing slashes: "//proc/" is /proc */
  for (const char *p = dest; *p && n < sizeof norm - 1; p++)
    if (!(*p == '/' && n > 0 && norm[n - 1] == '/'))
      norm[n++] = *p;
  while (n > 1 && norm[n - 1] == '/')
    n--;
  norm[n] = '\0';
  for (size_t i = 0; i < ARRAY_SIZE (exact); i++)
    if (strcmp (norm, exact[i]) == 0)
      return true;
  for (size_t i = 0; i < ARRAY_SIZE (trees); i++)
    if (path_is_under (norm, trees[i]))
      return true;
  return false;
}

static int
add_mount (struct sandbox_policy *p, const char *opt, const char *arg, bool writable, struct sbx_error *err)
{
  const char *colon = strchr (arg, ':');
  char *src = colon ? strndup (arg, (size_t) (colon - arg)) : xstrdup (arg);
  const char *dest = colon ? colon + 1 : arg;
  if (!src)
    sbx_out_of_memory ();
  if (!*src || !*dest)
    {
      free (src);
      return cli_usage_error (err, "%s: '%s' is not PATH or PATH:DEST", opt, arg);
    }
  if (dest[0] != '/')
    {
      free (src);
      return cli_usage_error (err, "%s: destination '%s' is not an absolute path", opt, dest);
    }
  if (strstr (dest, "/../") || strstr (dest, "/./") || (strlen (dest) >= 3 && strcmp (dest + strlen (dest) - 3, "/..") == 0))
    {
      free (src);
      return cli_usage_error (err, "%s: destination '%s' has a . or .. component", opt, dest);
    }
  if (reserved_destination (dest))
    {
      free (src);
      return cli_usage_error (err, "%s: destination '%s' is the sandbox's own (/, /proc, /dev, /tmp, " SANDBOX_WORKDIR
                                   ")", opt, dest);
    }
  p->mounts = xrealloc (p->mounts, (p->n_mounts + 1) * sizeof *p->mounts);
  p->mounts[p->n_mounts++] = (struct sandbox_mount) { src, dest, writable };
  return 0;
}

int
sandbox_cli_opt (struct sandbox_policy *p, int key, const char *arg, struct sbx_error *err)
{
  unsigned u;
  switch (key)
    {
    case SO_PYTHON:
      p->python = arg;
      return 0;
    case SO_ROOTFS:
      p->rootfs = arg;
      return 0;
    case SO_WORKDIR:
      p->workdir = arg;
      return 0;
    case SO_MEMORY:
      /* below a few MiB the interpreter cannot even start: say so rather than OOM */
      return positive_bytes ("--memory", arg, 4 << 20, &p->memory, err);
    case SO_CPU_TIME:
      return count ("--cpu-time", arg, 1, 1u << 30, &p->cpu_time, err);
    case SO_PIDS:
      return count ("--pids", arg, 1, 1u << 22, &p->pids, err);
    case SO_NOFILE:
      return count ("--nofile", arg, 16, 1u << 20, &p->nofile, err);
    case SO_FSIZE:
      return positive_bytes ("--fsize", arg, 1, &p->fsize, err);
    case SO_TMP_SIZE:
      return positive_bytes ("--tmp-size", arg, 4096, &p->tmp_size, err);
    case SO_NETWORK:
      if (strcmp (arg, "none") == 0)
        p->network = SANDBOX_NET_NONE;
      else if (strcmp (arg, "loopback") == 0)
        p->network = SANDBOX_NET_LOOPBACK;
      else if (strcmp (arg, "full") == 0)
        p->network = SANDBOX_NET_FULL;
      else
        return cli_usage_error (err, "--network: '%s' is not none, loopback or full", arg);
      return 0;
    case SO_TIMEOUT:
      {
        char *end;
        double v = strtod (arg, &end);
        if (end == arg || *end || !(v >= 0) || v > 1e7)
          return cli_usage_error (err, "--timeout: '%s' is not a number of seconds", arg);
        p->timeout = v;
        return 0;
      }
    case SO_ENV:
      if (!strchr (arg, '=') || arg[0] == '=')
        return cli_usage_error (err, "--env: '%s' is not KEY=VALUE", arg);
      p->env = xrealloc (p->env, (p->n_env + 1) * sizeof *p->env);
      p->env[p->n_env++] = arg;
      return 0;
    case SO_RO:
      return add_mount (p, "--ro", arg, false, err);
    case SO_RW:
      return add_mount (p, "--rw", arg, true, err);
    case SO_ALLOW_DEGRADED:
      p->allow_degraded = true;
      return 0;
    case SO_HOST_ID:
      if (cli_parse_uint ("--host-id", arg, 0xfffffffeU, &u, err) < 0)
        return -1;
      if (u == 0)
        return cli_usage_error (err, "--host-id: 0 is root: the sandbox user must be unprivileged");
      p->host_uid = u;
      return 0;
    default:
      return 1;
    }
}

void
sandbox_policy_free (struct sandbox_policy *p)
{
  for (size_t i = 0; i < p->n_mounts; i++)
    free ((char *) p->mounts[i].source);
  free (p->mounts);
  free (p->env);
}
