/* Usage numbers of a container's cgroup, for `events --stats`, the OOM report of
 * `run`, and the one-shot result. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"

static bool
read_text (int dirfd, const char *file, char *buf, size_t len)
{
  _cleanup_close_ int fd = dirfd >= 0 ? openat (dirfd, file, O_RDONLY | O_CLOEXEC) : -1;
  ssize_t n;
  if (fd < 0)
    return false;
  n = read (fd, buf, len - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return true;
}

static bool
read_u64 (int dirfd, const char *file, uint64_t *out)
{
  char buf[64];
  if (!read_text (dirfd, file, buf, sizeof buf))
    return false;
  if (strncmp (buf, "max", 3) == 0)
    *out = UINT64_MAX;
  else
    *out = strtoull (buf, NULL, 10);
  return true;
}

/* From an fd kept open (cgroup.v2_peak_fd). */
static bool
pread_u64 (int fd, uint64_t *out)
{
  char buf[64];
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  *out = strtoull (buf, NULL, 10);
  return true;
}

/* "key value" lines (memory.events, cpu.stat, memory.oom_control, cpuacct.stat). */
static bool
read_keyed (int dirfd, const char *file, const char *key, uint64_t *out)
{
  char buf[4096];
  size_t klen = strlen (key);
  if (!read_text (dirfd, file, buf, sizeof buf))
    return false;
  for (char *line = buf; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL)
    if (strncmp (line, key, klen) == 0 && line[klen] == ' ')
      {
        *out = strtoull (line + klen + 1, NULL, 10);
        return true;
      }
  return false;
}

static void
minus (uint64_t *v, uint64_t base)
{
  *v = *v > base ? *v - base : 0;
}

/* A recycled cgroup's (cgroup_kept.c): what was there before its container. */
void
cgroup_subtract_base (const struct cgroup *cg, struct cgroup_stats *s)
{
  const struct cgroup_stats *b = &cg->base;
  if (!cg->has_base)
    return;
  /* what the last container left charged (at most the recycle's slack) is not this
     one's: its usage, its peak and its /proc/meminfo start from nothing */
  minus (&s->memory_usage, b->memory_usage);
  minus (&s->memory_peak, b->memory_usage);
  minus (&s->memory_failcnt, b->memory_failcnt);
  minus (&s->memory_max_events, b->memory_max_events);
  minus (&s->oom_kill, b->oom_kill);
  minus (&s->pids_max_events, b->pids_max_events);
  minus (&s->cpu_usage_ns, b->cpu_usage_ns);
  minus (&s->cpu_user_ns, b->cpu_user_ns);
  minus (&s->cpu_system_ns, b->cpu_system_ns);
  minus (&s->cpu_throttled_periods, b->cpu_throttled_periods);
  minus (&s->cpu_throttled_ns, b->cpu_throttled_ns);
}

int
cgroup_v1_stats (struct cgroup *cg, struct cgroup_stats *s)
{
  int mem = cg->v1_dirfd[CG1_MEMORY], pids = cg->v1_dirfd[CG1_PIDS];
  int acct = cg->v1_dirfd[CG1_CPUACCT], cpu = cg->v1_dirfd[CG1_CPU];
  long hz = sysconf (_SC_CLK_TCK);
  uint64_t v;
  memset (s, 0, sizeof *s);
  s->has_memory = read_u64 (mem, "memory.usage_in_bytes", &s->memory_usage);
  read_u64 (mem, "memory.max_usage_in_bytes", &s->memory_peak);
  read_u64 (mem, "memory.limit_in_bytes", &s->memory_limit);
  read_u64 (mem, "memory.failcnt", &s->memory_failcnt);
  s->has_oom = read_keyed (mem, "memory.oom_control", "oom_kill", &s->oom_kill);
  s->memory_max_events = s->memory_failcnt;
  s->has_pids = read_u64 (pids, "pids.current", &s->pids_current);
  read_u64 (pids, "pids.max", &s->pids_limit);
  read_keyed (pids, "pids.events", "max", &s->pids_max_events);
  s->has_cpu = read_u64 (acct, "cpuacct.usage", &s->cpu_usage_ns);
  if (hz <= 0)
    hz = 100;
  /* nanoseconds where the kernel has them (4.16+); else cpuacct.stat's ticks */
  if (!read_u64 (acct, "cpuacct.usage_user", &s->cpu_user_ns) && read_keyed (acct, "cpuacct.stat", "user", &v))
    s->cpu_user_ns = v * (1000000000 / (uint64_t) hz);
  if (!read_u64 (acct, "cpuacct.usage_sys", &s->cpu_system_ns) && read_keyed (acct, "cpuacct.stat", "system", &v))
    s->cpu_system_ns = v * (1000000000 / (uint64_t) hz);
  read_keyed (cpu, "cpu.stat", "nr_throttled", &s->cpu_throttled_periods);
  read_keyed (cpu, "cpu.stat", "throttled_time", &s->cpu_throttled_ns);
  cgroup_subtract_base (cg, s);
  return 0;
}

int
cgroup_v2_stats (struct cgroup *cg, struct cgroup_stats *s)
{
  int fd = cg->v2_dirfd;
  uint64_t v;
  memset (s, 0, sizeof *s);
  s->has_memory = read_u64 (fd, "memory.current", &s->memory_usage);
  /* a recycled cgroup's own peak, not the one of all its containers */
  if (cg->v2_peak_fd >= 0)
    pread_u64 (cg->v2_peak_fd, &s->memory_peak);
  else
    read_u64 (fd, "memory.peak", &s->memory_peak);
  read_u64 (fd, "memory.max", &s->memory_limit);
  read_keyed (fd, "memory.events", "max", &s->memory_max_events);
  s->has_oom = read_keyed (fd, "memory.events", "oom_kill", &s->oom_kill);
  s->has_pids = read_u64 (fd, "pids.current", &s->pids_current);
  read_u64 (fd, "pids.max", &s->pids_limit);
  read_keyed (fd, "pids.events", "max", &s->pids_max_events);
  s->has_cpu = read_keyed (fd, "cpu.stat", "usage_usec", &v);
  s->cpu_usage_ns = v * 1000;
  if (read_keyed (fd, "cpu.stat", "user_usec", &v))
    s->cpu_user_ns = v * 1000;
  if (read_keyed (fd, "cpu.stat", "system_usec", &v))
    s->cpu_system_ns = v * 1000;
  read_keyed (fd, "cpu.stat", "nr_throttled", &s->cpu_throttled_periods);
  if (read_keyed (fd, "cpu.stat", "throttled_usec", &v))
    s->cpu_throttled_ns = v * 1000;
  cgroup_subtract_base (cg, s);
  return 0;
}

bool
cgroup_oom_kills (struct cgroup *cg, uint64_t *kills, uint64_t *limit)
{
  bool v2 = cg->mode == CGROUP_MODE_UNIFIED;
  int fd = v2 ? cg->v2_dirfd : cg->v1_dirfd[CG1_MEMORY];
  *kills = *limit = 0;
  if (!read_keyed (fd, v2 ? "memory.events" : "memory.oom_control", "oom_kill", kills))
    return false;
  if (cg->has_base)
    *kills = *kills > cg->base.oom_kill ? *kills - cg->base.oom_kill : 0;
  if (*kills)
    read_u64 (fd, v2 ? "memory.max" : "memory.limit_in_bytes", limit);
  return true;
}
