/* sbx-oci update [--resources FILE|-] [runc's flags] <container-id>
 * The file (or stdin, as the CRI passes it) is OCI LinuxResources JSON; the flags are
 * runc's, for people. Only what is given changes. */
#include "build-config.h"

#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oci/resources.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

enum
{
  UK_RESOURCES = 'r',
  UK_MEMORY = 'm',
  UK_BLKIO_WEIGHT = 256,
  UK_CPU_PERIOD,
  UK_CPU_QUOTA,
  UK_CPU_SHARE,
  UK_CPU_RT_PERIOD,
  UK_CPU_RT_RUNTIME,
  UK_CPUSET_CPUS,
  UK_CPUSET_MEMS,
  UK_KERNEL_MEMORY,
  UK_KERNEL_MEMORY_TCP,
  UK_MEMORY_RESERVATION,
  UK_MEMORY_SWAP,
  UK_PIDS_LIMIT,
  UK_L3,
  UK_MEMBW,
};

struct update_opts
{
  const char *resources_file;
  struct oci_resources r;
  bool any_flag;
};

static int
parse_int (const char *opt, const char *s, int64_t min, int64_t *out, struct sbx_error *err)
{
  char *end;
  long long v;
  errno = 0;
  v = strtoll (s, &end, 10);
  if (!*s || *end || errno || v < min)
    return cli_usage_error (err, "%s: '%s' is not a valid number", opt, s);
  *out = v;
  return 0;
}

static int
update_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct update_opts *u = data;
  struct oci_resources *r = &u->r;
  int64_t v = 0;
  if (key == UK_RESOURCES)
    {
      u->resources_file = arg;
      return 0;
    }
  u->any_flag = true;
  switch (key)
    {
    case UK_MEMORY:
      if (cli_parse_bytes ("--memory", arg, &v, err) < 0)
        return -1;
      r->has_memory = r->memory.has_limit = true;
      r->memory.limit = v;
      return 0;
    case UK_MEMORY_RESERVATION:
      if (cli_parse_bytes ("--memory-reservation", arg, &v, err) < 0)
        return -1;
      r->has_memory = r->memory.has_reservation = true;
      r->memory.reservation = v;
      return 0;
    case UK_MEMORY_SWAP:
      if (cli_parse_bytes ("--memory-swap", arg, &v, err) < 0)
        return -1;
      r->has_memory = r->memory.has_swap = true;
      r->memory.swap = v;
      return 0;
    case UK_KERNEL_MEMORY:
    case UK_KERNEL_MEMORY_TCP:
      return cli_usage_error (err, "--kernel-memory: not supported by the kernel");
    case UK_CPU_SHARE:
      if (parse_int ("--cpu-share", arg, 0, &v, err) < 0)
        return -1;
      r->has_cpu = r->cpu.has_shares = true;
      r->cpu.shares = (uint64_t) v;
      return 0;
    case UK_CPU_QUOTA:
      if (parse_int ("--cpu-quota", arg, -1, &v, err) < 0)
        return -1;
      r->has_cpu = r->cpu.has_quota = true;
      r->cpu.quota = v;
      return 0;
    case UK_CPU_PERIOD:
      if (parse_int ("--cpu-period", arg, 0, &v, err) < 0)
        return -1;
      r->has_cpu = r->cpu.has_period = true;
      r->cpu.period = (uint64_t) v;
      return 0;
    case UK_CPU_RT_PERIOD:
      if (parse_int ("--cpu-rt-period", arg, 0, &v, err) < 0)
        return -1;
      r->has_cpu = r->cpu.has_realtime_period = true;
      r->cpu.realtime_period = (uint64_t) v;
      return 0;
    case UK_CPU_RT_RUNTIME:
      if (parse_int ("--cpu-rt-runtime", arg, -1, &v, err) < 0)
        return -1;
      r->has_cpu = r->cpu.has_realtime_runtime = true;
      r->cpu.realtime_runtime = v;
      return 0;
    case UK_CPUSET_CPUS:
      r->has_cpu = true;
      r->cpu.cpus = arg;
      return 0;
    case UK_CPUSET_MEMS:
      r->has_cpu = true;
      r->cpu.mems = arg;
      return 0;
    case UK_PIDS_LIMIT:
      if (parse_int ("--pids-limit", arg, -1, &v, err) < 0)
        return -1;
      r->has_pids = r->has_pids_limit = true;
      r->pids_limit = v;
      return 0;
    case UK_BLKIO_WEIGHT:
      if (parse_int ("--blkio-weight", arg, 10, &v, err) < 0 || v > 1000)
        return v > 1000 ? cli_usage_error (err, "--blkio-weight: must be 10-1000") : -1;
      r->has_blkio = r->blkio.has_weight = true;
      r->blkio.weight = (uint16_t) v;
      return 0;
    case UK_L3:
    case UK_MEMBW:
      return cli_usage_error (err, "Intel RDT is not supported by sbx-oci");
    default:
      return 0;
    }
}

static int
run_update (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct update_opts u = { 0 };
  struct oci_resources from_file;
  _cleanup_free_ char *buf = NULL;
  yajl_val tree = NULL;
  size_t len = 0;
  int first = cli_parse (cmd, argc, argv, update_opt, &u, err), ret;
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "update: expected exactly one container id");
  if (u.resources_file && u.any_flag)
    return cli_usage_error (err, "update: --resources and the individual flags cannot be combined");
  if (!u.resources_file && !u.any_flag)
    return cli_usage_error (err, "update: nothing to update (give --resources FILE or a flag such as --memory)");
  if (!u.resources_file)
    return container_update (ctx, argv[first], &u.r, err) < 0 ? -1 : 0;
  if (strcmp (u.resources_file, "-") == 0)
    ret = json_read_fd (0, "stdin", SBX_JSON_MAX_SIZE, &buf, &len, err);
  else
    ret = json_read_file (AT_FDCWD, u.resources_file, SBX_JSON_MAX_SIZE, &buf, &len, err);
  if (ret < 0)
    return sbx_error_wrap (err, "--resources");
  tree = json_parse (buf, len, "--resources", err);
  if (!tree)
    return -1;
  ret = oci_resources_parse (tree, "resources", &from_file, err);
  if (ret == 0)
    ret = container_update (ctx, argv[first], &from_file, err);
  oci_resources_clear (&from_file);
  json_free (tree);
  return ret < 0 ? -1 : 0;
}

static const struct cli_opt update_opts[] = {
  { "resources", UK_RESOURCES, required_argument, "FILE", "LinuxResources JSON ('-' reads stdin)" },
  { "memory", UK_MEMORY, required_argument, "SIZE", "memory limit (e.g. 96m; -1 for none)" },
  { "memory-reservation", UK_MEMORY_RESERVATION, required_argument, "SIZE", "memory soft limit" },
  { "memory-swap", UK_MEMORY_SWAP, required_argument, "SIZE", "memory+swap limit" },
  { "kernel-memory", UK_KERNEL_MEMORY, required_argument, "SIZE", NULL },
  { "kernel-memory-tcp", UK_KERNEL_MEMORY_TCP, required_argument, "SIZE", NULL },
  { "cpu-share", UK_CPU_SHARE, required_argument, "N", "CPU shares (relative weight)" },
  { "cpu-quota", UK_CPU_QUOTA, required_argument, "USEC", "CPU time per period (-1 for none)" },
  { "cpu-period", UK_CPU_PERIOD, required_argument, "USEC", "CPU period" },
  { "cpu-rt-period", UK_CPU_RT_PERIOD, required_argument, "USEC", "realtime period (v1)" },
  { "cpu-rt-runtime", UK_CPU_RT_RUNTIME, required_argument, "USEC", "realtime runtime (v1)" },
  { "cpuset-cpus", UK_CPUSET_CPUS, required_argument, "LIST", "CPUs (e.g. 0-1)" },
  { "cpuset-mems", UK_CPUSET_MEMS, required_argument, "LIST", "memory nodes" },
  { "pids-limit", UK_PIDS_LIMIT, required_argument, "N", "maximum number of tasks (-1 for none)" },
  { "blkio-weight", UK_BLKIO_WEIGHT, required_argument, "N", "block I/O weight (10-1000)" },
  { "l3-cache-schema", UK_L3, required_argument, "S", NULL },
  { "mem-bw-schema", UK_MEMBW, required_argument, "S", NULL },
  { NULL },
};

const struct command cmd_update = {
  .name = "update",
  .args = "[OPTIONS] <container-id>",
  .summary = "change the resource limits of a running container",
  .opts = update_opts,
  .run = run_update,
  .permute = true,
};
