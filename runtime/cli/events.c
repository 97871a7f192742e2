/* sbx-oci events [--stats] [--interval SEC] <container-id>
 * --stats: one JSON snapshot (runc's "stats" event shape). Without it: a stats event
 * every interval and an "oom" event when the OOM killer strikes, until the
 * container stops. */
#include "build-config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cli/commands.h"
#include "runtime/container/container.h"

struct events_opts
{
  bool stats;
  unsigned interval;
};

static int
events_opt (void *data, int key, const char *arg, struct sbx_error *err)
{
  struct events_opts *o = data;
  if (key == 256)
    o->stats = true;
  else if (key == 257)
    {
      /* "5s" or "5" */
      char buf[32];
      snprintf (buf, sizeof buf, "%s", arg);
      if (buf[0] && buf[strlen (buf) - 1] == 's')
        buf[strlen (buf) - 1] = '\0';
      if (cli_parse_uint ("--interval", buf, 86400, &o->interval, err) < 0)
        return -1;
      if (o->interval == 0)
        return cli_usage_error (err, "--interval: must be at least 1s");
    }
  return 0;
}

static yajl_gen_status
key_u64 (yajl_gen g, const char *key, uint64_t v)
{
  yajl_gen_status st = gen_string (g, key);
  return st != yajl_gen_status_ok ? st : yajl_gen_integer (g, v == UINT64_MAX ? -1 : (long long) v);
}

static char *
event_json (const char *type, const char *id, const struct cgroup_stats *s)
{
  yajl_gen g = gen_new (false);
  char *out = NULL;
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "type", type));
  GEN (gen_key_string (g, "id", id));
  GEN (gen_string (g, "data"));
  GEN (yajl_gen_map_open (g));
  if (s->has_cpu)
    {
      GEN (gen_string (g, "cpu"));
      GEN (yajl_gen_map_open (g));
      GEN (gen_string (g, "usage"));
      GEN (yajl_gen_map_open (g));
      GEN (key_u64 (g, "total", s->cpu_usage_ns));
      GEN (key_u64 (g, "user", s->cpu_user_ns));
      GEN (key_u64 (g, "kernel", s->cpu_system_ns));
      GEN (yajl_gen_map_close (g));
      GEN (gen_string (g, "throttling"));
      GEN (yajl_gen_map_open (g));
      GEN (key_u64 (g, "throttledPeriods", s->cpu_throttled_periods));
      GEN (key_u64 (g, "throttledTime", s->cpu_throttled_ns));
      GEN (yajl_gen_map_close (g));
      GEN (yajl_gen_map_close (g));
    }
  if (s->has_memory)
    {
      GEN (gen_string (g, "memory"));
      GEN (yajl_gen_map_open (g));
      GEN (gen_string (g, "usage"));
      GEN (yajl_gen_map_open (g));
      GEN (key_u64 (g, "usage", s->memory_usage));
      GEN (key_u64 (g, "max", s->memory_peak));
      GEN (key_u64 (g, "limit", s->memory_limit));
      GEN (key_u64 (g, "failcnt", s->memory_max_events));
      GEN (yajl_gen_map_close (g));
      GEN (key_u64 (g, "oomKill", s->oom_kill));
      GEN (yajl_gen_map_close (g));
    }
  if (s->has_pids)
    {
      GEN (gen_string (g, "pids"));
      GEN (yajl_gen_map_open (g));
      GEN (key_u64 (g, "current", s->pids_current));
      GEN (key_u64 (g, "limit", s->pids_limit));
      GEN (yajl_gen_map_close (g));
    }
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_map_close (g));
  out = gen_finish (g, NULL);
gen_fail:
  yajl_gen_free (g);
  return out;
}

static int
run_events (struct sbx_ctx *ctx, const struct command *cmd, int argc, char **argv, struct sbx_error *err)
{
  struct events_opts o = { .interval = 5 };
  struct cgroup_stats s;
  bool running = false;
  uint64_t last_oom = 0;
  int first = cli_parse (cmd, argc, argv, events_opt, &o, err);
  if (first == CLI_HELP_SHOWN)
    return 0;
  if (first < 0)
    return -1;
  if (argc - first != 1)
    return cli_usage_error (err, "events: expected exactly one container id");
  for (bool once = true;; once = false)
    {
      _cleanup_free_ char *json = NULL;
      if (container_stats (ctx, argv[first], &s, &running, err) < 0)
        return once ? -1 : 0; /* deleted meanwhile: the stream ends */
      if (!once && s.oom_kill > last_oom)
        {
          _cleanup_free_ char *oom = event_json ("oom", argv[first], &s);
          printf ("%s\n", oom ? oom : "");
        }
      last_oom = s.oom_kill;
      json = event_json ("stats", argv[first], &s);
      printf ("%s\n", json ? json : "");
      fflush (stdout);
      if (o.stats || !running)
        return 0;
      sleep (o.interval);
    }
}

static const struct cli_opt events_opts[] = {
  { "stats", 256, no_argument, NULL, "print one stats snapshot and exit" },
  { "interval", 257, required_argument, "SEC", "seconds between stats events (default 5)" },
  { NULL },
};

const struct command cmd_events = {
  .name = "events",
  .args = "[OPTIONS] <container-id>",
  .summary = "print resource usage (and OOM events) of a container as JSON",
  .opts = events_opts,
  .run = run_events,
  .permute = true,
};
