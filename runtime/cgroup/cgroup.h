/* Cgroups: one interface, two backends (cgroup_v1.c, cgroup_v2.c), chosen once after
 * detecting how the host mounts cgroups:
 *   unified  /sys/fs/cgroup is cgroup2
 *   hybrid   v1 controllers under /sys/fs/cgroup/<ctrl> plus cgroup2 at
 *            /sys/fs/cgroup/unified (our dev and CI machines: the v2 mount holds only
 *            hugetlb). Every controller bound to v1 is used through v1; we never
 *            refuse such a host.
 *   legacy   v1 only
 * Call sites never test the mode: they call through cg->ops. */
#ifndef SBX_CGROUP_H
#define SBX_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/resources.h"
#include "oci/state.h"
#include "runtime/base/context.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"

struct cgroup_device_defaults;

enum cgroup_mode
{
  CGROUP_MODE_NONE = 0, /* no cgroup for this container (--cgroup-manager disabled, rootless) */
  CGROUP_MODE_UNIFIED = 1,
  CGROUP_MODE_HYBRID = 2,
  CGROUP_MODE_LEGACY = 3,
};

/* v1 hierarchies we may use, by controller name (as in /proc/self/cgroup). */
enum cgroup_v1_ctrl
{
  CG1_FREEZER, /* always: membership, kill-all, pause */
  CG1_MEMORY,
  CG1_PIDS,
  CG1_CPU,
  CG1_CPUACCT,
  CG1_CPUSET,
  CG1_BLKIO,
  CG1_DEVICES,
  CG1_NET_CLS,
  CG1_NET_PRIO,
  CG1_HUGETLB,
  CG1_RDMA,
  CG1_COUNT
};

struct cgroup_stats
{
  bool has_memory, has_oom, has_pids, has_cpu;
  uint64_t memory_usage, memory_peak, memory_limit, memory_failcnt;
  uint64_t memory_max_events; /* times the limit was hit */
  uint64_t oom_kill;          /* processes killed by the OOM killer */
  uint64_t pids_current, pids_limit; /* UINT64_MAX = max */
  uint64_t pids_max_events;          /* forks refused at the limit (pids.events "max") */
  uint64_t cpu_usage_ns, cpu_user_ns, cpu_system_ns, cpu_throttled_periods, cpu_throttled_ns;
};

struct cgroup
{
  enum cgroup_mode mode;
  const struct cgroup_ops *ops;
  char *path; /* e.g. "/sbx-oci/ID", relative to each hierarchy's root */
  int owned_from; /* path components from this index on were made by this create */
  bool aborting;  /* destroy also removes those (cgroup_rmdir_made): the create failed */
#define CGROUP_OWNS_NOTHING (1 << 20)
  /* v2 (unified, or hybrid's cgroup2 mount when used) */
  int v2_dirfd;
  /* v2, a recycled cgroup: memory.peak, open since its reset (a reset holds only for
     reads through the fd that wrote it); -1 */
  int v2_peak_fd;
  /* v2: clone3(CLONE_INTO_CGROUP) would fail (pids.max 0 counts the clone itself);
   * the init is cloned outside and moved, which no pids limit stops. */
  bool no_clone_into;
  /* v1: one dir per hierarchy we joined, -1 when not used */
  int v1_dirfd[CG1_COUNT];
  /* v1: the hierarchies' roots (O_PATH) kept from create to destroy in one process
   * (run), so that removing the cgroup does not walk /sys/fs/cgroup again; -1 */
  int v1_rootfd[CG1_COUNT]; /* the init drops them first thing (cgroup_drop_roots) */
  uint32_t v1_mask;     /* controllers joined */
  uint32_t v1_required; /* of those, the ones the config's resources need (must exist) */
  uint32_t v1_made;     /* of those, the ones whose cgroup this create made (fresh files) */
  /* The systemd driver's (cgroup_systemd.c): the transient scope that holds the cgroup,
     its slice, and whether the user's manager (not the system's) runs it; NULL:
     cgroupfs. The path is known once the scope is started (systemd_started). */
  char *systemd_unit, *systemd_slice;
  bool systemd_user, systemd_started;
  /* A run whose numbers are read after its init has gone (a watched foreground run):
     systemd stops an empty scope and removes its cgroup at once, counters and all, so
     a keeper of ours (a paused child of the runtime, outside the container's
     namespaces) holds the scope from its start until end. */
  bool systemd_hold;
  pid_t systemd_keeper;
  /* a kept cgroup (cgroup_kept.c) recycled for this container: its counters that
     cannot be reset, as they were when it was adopted; stats subtract them */
  bool has_base;
  struct cgroup_stats base;
};

struct cgroup_ops
{
  /* Make the cgroup dirs (for the controllers in cg->v1_mask on v1). */
  int (*create) (struct cgroup *cg, struct sbx_error *err);
  /* Open an existing cgroup (for kill, delete, state). */
  int (*open) (struct cgroup *cg, struct sbx_error *err);
  /* Move pid into the cgroup (v2 usually uses CLONE_INTO_CGROUP instead). */
  int (*enter) (struct cgroup *cg, pid_t pid, struct sbx_error *err);
  /* Move the calling single-threaded process in (v1: the cheap way, see cgroup_v1.c);
   * NULL where the backend has no cheaper way than enter. */
  int (*enter_self) (struct cgroup *cg, struct sbx_error *err);
  int (*freeze) (struct cgroup *cg, bool frozen, struct sbx_error *err);
  int (*is_frozen) (struct cgroup *cg);
  /* Signal every process in the cgroup. */
  int (*kill_all) (struct cgroup *cg, int sig, struct sbx_error *err);
  /* Host PIDs of every process in the cgroup. */
  int (*pids) (struct cgroup *cg, pid_t **pids, size_t *n, struct sbx_error *err);
  /* Remove the cgroup dirs, killing leftover tasks first (bounded retries). */
  int (*destroy) (struct cgroup *cg, struct sbx_error *err);
  /* Apply linux.resources. With defaults, the device allow-list is installed even if
   * the resources have no devices (create); without, only if they do (update). */
  int (*apply) (struct cgroup *cg, const struct oci_resources *r, const struct cgroup_device_defaults *defaults,
                struct sbx_log *log, struct sbx_error *err);
  int (*stats) (struct cgroup *cg, struct cgroup_stats *s);
  /* A kept cgroup that create found in place (not made), made as fresh as a new one
     for the next container (cgroup_kept.c): no task and no sub-cgroup, not frozen,
     what the last one charged reclaimed, the counters reset, and those that cannot
     be taken as the baseline stats subtract (has_base). -1, ERR saying what stands in
     the way: the caller removes it and makes a new one. NULL: the backend keeps none. */
  int (*recycle) (struct cgroup *cg, struct sbx_error *err);
  /* The end of a container in a kept cgroup: every task killed and gone, the cgroup
     left for the next one. */
  int (*release) (struct cgroup *cg, struct sbx_error *err);
};

extern const struct cgroup_ops cgroup_v1_ops;
/* The v1 controllers' names, by CG1_* (as in /proc/self/cgroup). */
extern const char *const cgroup_v1_names[CG1_COUNT];
extern const struct cgroup_ops cgroup_v2_ops;

enum cgroup_mode cgroup_detect_mode (void);
const char *cgroup_mode_name (enum cgroup_mode m);

/* Resolve config cgroupsPath (absolute, relative, systemd "slice:prefix:name", or
 * absent) into a cgroupfs path. */
char *cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd, const char *parent,
                           struct sbx_error *err);

void cgroup_init (struct cgroup *cg, enum cgroup_mode mode, const char *path);
void cgroup_close (struct cgroup *cg);
/* Close and forget the v1 hierarchy roots and v2_peak_fd: for a clone that closes every
 * fd it does not keep (the init), so that cgroup_close later does not close those
 * numbers again. */
void cgroup_drop_roots (struct cgroup *cg);
/* Open the cgroup recorded in a container state; returns 0 with mode NONE if none. */
int cgroup_open_from_state (const struct sbx_state *s, struct cgroup *cg, struct sbx_error *err);
bool cgroup_is_frozen (const struct sbx_state *s);
/* exec --cgroup [CONTROLLER[,...]:]SUB: the opened cgroup becomes SUB beneath it
 * (cgroup.c says how it stays beneath). */
int cgroup_descend (struct cgroup *cg, const char *spec, struct sbx_error *err);

/* The systemd driver (cgroup_systemd.c). Plan: cgroupsPath ("slice:prefix:name", or
   empty for system.slice, or user.slice with USER, and sbx-oci-ID.scope) into CG's
   unit and slice; an error naming the flag when no manager runs. Start: the scope
   made with PID in it (the job waited for), and CG's path read back from PID and
   opened (v1: the hierarchies systemd left out made and joined); the caller applies
   the limits to the files. End: every task killed, the unit stopped and reset, what
   is left removed. Update: the unit's properties set to the limits too. */
int cgroup_systemd_plan (struct cgroup *cg, const char *cgroups_path, const char *id, bool user,
                         struct sbx_error *err);
int cgroup_systemd_start (struct cgroup *cg, pid_t pid, const char *id, const struct oci_resources *r,
                          yajl_val annotations, struct sbx_error *err);
int cgroup_systemd_end (struct cgroup *cg, struct sbx_error *err);
/* In the init, once systemd has moved it: CG's path read from itself, and opened. */
int cgroup_systemd_adopt (struct cgroup *cg, struct sbx_error *err);
int cgroup_systemd_update (const struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err);
/* The calling process in a scope of its own, UNIT, with Delegate=yes (a server whose
   sandboxes' cgroups go inside it); *PATH its cgroup. */
int cgroup_systemd_own_scope (const char *unit, bool user, char **path, struct sbx_error *err);

/* Kept cgroups (cgroup_kept.c): one per slot of `serve`, reused by one sandbox after
 * another instead of made and removed with each. */
/* True if CG's leaf was there before its create, in any hierarchy: a kept one to
   recycle. */
bool cgroup_was_there (const struct cgroup *cg);
/* Whether PATH is a kept cgroup's (its last component "@serve-..."): the cgroup is the
   slot's, not the container's, and a container's delete leaves it alone. */
bool cgroup_path_is_kept (const char *path);
/* PATH, the caller's own, emptied (every task killed) and removed from every
   hierarchy it is in. */
void cgroup_empty_and_remove (const char *path);
/* Each cgroup directly under PARENT whose name STALE says is no one's any more
   removed from every hierarchy, if empty (nothing is killed). */
void cgroup_sweep_children (const char *parent, bool (*stale) (const char *name));

/* Backend parts in their own files. */
int cgroup_v1_apply (struct cgroup *cg, const struct oci_resources *r, const struct cgroup_device_defaults *defaults,
                     struct sbx_log *log, struct sbx_error *err);
int cgroup_v2_apply (struct cgroup *cg, const struct oci_resources *r, const struct cgroup_device_defaults *defaults,
                     struct sbx_log *log, struct sbx_error *err);
int cgroup_v1_stats (struct cgroup *cg, struct cgroup_stats *s);
/* (cgroup_stats.c) The counters a recycled cgroup's baseline holds, subtracted from S. */
void cgroup_subtract_base (const struct cgroup *cg, struct cgroup_stats *s);
int cgroup_v1_recycle (struct cgroup *cg, struct sbx_error *err);
int cgroup_v2_stats (struct cgroup *cg, struct cgroup_stats *s);
int cgroup_v2_recycle (struct cgroup *cg, struct sbx_error *err);
/* Only what the OOM report of a plain `run` needs (two files instead of a dozen):
 * false when the cgroup has no memory controller. */
bool cgroup_oom_kills (struct cgroup *cg, uint64_t *kills, uint64_t *limit);
/* v1 hierarchies to join for these resources (one_shot: a foreground run, deleted
 * when it ends; cpu_numbers: its caller reads the cgroup's CPU time), and the subset
 * that must exist. */
uint32_t cgroup_v1_mask_for (const struct oci_resources *r, bool one_shot, bool cpu_numbers);
uint32_t cgroup_v1_required_for (const struct oci_resources *r);

#endif
