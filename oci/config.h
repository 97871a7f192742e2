/* The typed form of config.json (runtime spec v1.3.0, config.md + config-linux.md).
 *
 * oci_config_parse() fills these structs; oci_config_validate() then checks the
 * cross-field rules of the spec (and our fail-closed rules) before anything is created.
 * All `const char *` members point into `tree`, which the config owns.
 * Optional scalars carry a has_<x> flag.
 */
#ifndef SBX_OCI_CONFIG_H
#define SBX_OCI_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

#include "oci/vocab.h"
#include "runtime/base/error.h"

struct oci_id_mapping
{
  uint32_t container_id, host_id, size;
};

struct oci_mount
{
  const char *destination;
  const char *source; /* may be NULL */
  const char *type;   /* may be NULL */
  const char **options;
  size_t n_options;
  struct oci_id_mapping *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
};

struct oci_rlimit
{
  const char *type;
  int resource;
  uint64_t soft, hard;
};

struct oci_user
{
  uint32_t uid, gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
};

/* Capability sets as bit masks (bit N = capability N); unknown names are dropped
 * with a warning at parse time, as config.md requires. */
struct oci_capabilities
{
  uint64_t bounding, effective, inheritable, permitted, ambient;
};

struct oci_scheduler
{
  const char *policy;
  int policy_value;
  int32_t nice, priority;
  uint64_t flags; /* SCHED_FLAG_* */
  uint64_t runtime, deadline, period;
};

struct oci_io_priority
{
  const char *class_name;
  int class_value; /* IOPRIO_CLASS_* */
  int64_t priority;
};

struct oci_process
{
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  struct oci_user user;
  const char **args;
  size_t n_args;
  const char **env;
  size_t n_env;
  const char *cwd;
  bool has_capabilities;
  struct oci_capabilities caps;
  struct oci_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  const char *apparmor_profile;
  const char *selinux_label;
  bool has_oom_score_adj;
  int oom_score_adj;
  bool has_scheduler;
  struct oci_scheduler scheduler;
  bool has_io_priority;
  struct oci_io_priority io_priority;
  const char *exec_cpu_affinity_initial, *exec_cpu_affinity_final;
};

struct oci_hook
{
  const char *path;
  const char **args;
  size_t n_args;
  const char **env;
  size_t n_env;
  bool has_timeout;
  int64_t timeout;
};

struct oci_hook_list
{
  struct oci_hook *hooks;
  size_t n;
};

struct oci_device
{
  char type; /* 'c', 'b', 'u', 'p' */
  const char *path;
  int64_t major, minor;
  bool has_file_mode, has_uid, has_gid;
  uint32_t file_mode, uid, gid;
};

struct oci_time_offset
{
  const char *clock; /* "monotonic" or "boottime" */
  int64_t secs;
  uint32_t nanosecs;
};

struct oci_kv
{
  const char *key, *value;
};

struct oci_namespace
{
  bool present;     /* listed in linux.namespaces */
  const char *path; /* join this one; NULL = create a new one */
  size_t index;     /* position in linux.namespaces, for error messages */
};

/* Memory nodes linux.memoryPolicy.nodes may name: 0 .. this - 1. */
#define OCI_MEMPOLICY_MAX_NODES 1024

struct oci_linux
{
  struct oci_namespace ns[SBX_NS_COUNT];
  struct oci_id_mapping *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
  struct oci_time_offset *time_offsets;
  size_t n_time_offsets;
  struct oci_device *devices;
  size_t n_devices;
  const char *cgroups_path;
  yajl_val resources; /* parsed by oci/resources.c */
  struct oci_kv *sysctl;
  size_t n_sysctl;
  yajl_val seccomp; /* parsed by oci/seccomp_config.c */
  const char *rootfs_propagation;
  unsigned long rootfs_propagation_flags;
  const char **masked_paths;
  size_t n_masked_paths;
  const char **readonly_paths;
  size_t n_readonly_paths;
  const char *mount_label;
  bool has_personality;
  unsigned long personality; /* PER_LINUX or PER_LINUX32 */
  struct oci_memory_policy
  {
    bool present;
    unsigned mode;  /* MPOL_*, with the MPOL_F_* flags or'ed in */
    unsigned long nodemask[OCI_MEMPOLICY_MAX_NODES / (8 * sizeof (unsigned long))];
    bool has_nodes;
  } memory_policy;
};

struct oci_config
{
  yajl_val tree;     /* owns every string below */
  char *raw;         /* the bytes read, kept to snapshot the config into the state dir */
  size_t raw_len;

  const char *oci_version;
  const char *root_path;
  bool root_readonly;
  struct oci_mount *mounts;
  size_t n_mounts;
  struct oci_process *process; /* NULL when absent (allowed at create, not at start) */
  const char *hostname;
  const char *domainname;
  struct oci_hook_list hooks[SBX_HOOK_COUNT];
  yajl_val annotations; /* object of strings, or NULL */
  bool has_linux;
  struct oci_linux linux_;
};

/* Warnings found while parsing (unknown capability names, deprecated relative mount
 * destinations, ...) are reported through this callback, which may be NULL. */
typedef void (*oci_warn_fn) (void *data, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

struct oci_parse_ctx
{
  oci_warn_fn warn;
  void *warn_data;
  /* The caller cannot take a terminal (create or run -d without --console-socket):
     process.terminal true is refused first, before the rest of the process is read,
     as runc and crun check their command line before the config's contents. */
  bool no_terminal;
};

/* Parse `raw` (takes ownership of it) into a config. */
struct oci_config *oci_config_parse (char *raw, size_t len, const char *what, const struct oci_parse_ctx *ctx,
                                     struct sbx_error *err);
/* Read and parse BUNDLE/config.json (or `path` when absolute). */
struct oci_config *oci_config_load (int dirfd, const char *path, const struct oci_parse_ctx *ctx,
                                    struct sbx_error *err);
void oci_config_free (struct oci_config *c);

/* Parse a "process" object (config.json's process, or an `exec --process` file). */
int oci_process_parse (yajl_val obj, const char *path, const struct oci_parse_ctx *ctx, struct oci_process *p,
                       struct sbx_error *err);
void oci_process_clear (struct oci_process *p);

/* Cross-field checks of the spec; run before any side effect. */
int oci_config_validate (const struct oci_config *c, bool running_as_root, struct sbx_error *err);
int oci_process_validate (const struct oci_process *p, const char *path, struct sbx_error *err);
/* The namespace (SBX_NS_*) a linux.sysctl key belongs to, -1 if none. */
int oci_sysctl_namespace (const char *key);

/* Look up an annotation value (NULL if absent). */
const char *oci_config_annotation (const struct oci_config *c, const char *key);
/* run.oci.keep_original_groups (crun's; podman's --group-add keep-groups sends "1"):
   the process keeps the supplementary groups of whoever ran the runtime instead of
   process.user.additionalGids. Set: any value but "0" and "false". */
#define OCI_KEEP_GROUPS_ANNOTATION "run.oci.keep_original_groups"
bool oci_keep_original_groups (const struct oci_config *c);

/* Internal to oci/: the linux section parser (config_linux.c). */
int oci_linux_parse (yajl_val obj, const char *path, const struct oci_parse_ctx *ctx, struct oci_linux *l,
                     struct sbx_error *err);
void oci_linux_clear (struct oci_linux *l);
int oci_id_mappings_parse (yajl_val obj, const char *path, const char *key, struct oci_id_mapping **out,
                           size_t *n, struct sbx_error *err);

#endif
