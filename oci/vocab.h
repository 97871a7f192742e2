/* The vocabularies of the OCI spec, each defined exactly once and shared by the
 * parser, the validator and `sbx-oci features` (so the features output can never
 * drift from what the parser accepts). */
#ifndef SBX_OCI_VOCAB_H
#define SBX_OCI_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- namespaces ---- */
enum sbx_ns
{
  SBX_NS_USER, /* first: it must exist before the others are created inside it */
  SBX_NS_PID,
  SBX_NS_NET,
  SBX_NS_MNT,
  SBX_NS_IPC,
  SBX_NS_UTS,
  SBX_NS_CGROUP,
  SBX_NS_TIME,
  SBX_NS_COUNT
};

struct sbx_ns_info
{
  const char *oci_name;  /* "network" */
  const char *proc_name; /* "net", as in /proc/PID/ns/<proc_name> */
  int clone_flag;        /* CLONE_NEWNET */
};
extern const struct sbx_ns_info sbx_namespaces[SBX_NS_COUNT];
int sbx_ns_from_oci_name (const char *name); /* -1 if unknown */

/* ---- signals ---- */
/* The kernel's real-time signals as the rest of the world numbers them (glibc,
 * runc, Python's signal.SIGRTMIN): 34..64. Not the C library's SIGRTMIN, which
 * musl puts at 35 (it keeps 32-34 for itself) and glibc at 34. */
#define SBX_SIGRTMIN 34
#define SBX_SIGRTMAX 64
/* Accepts "KILL", "SIGKILL", "kill", "9", "RTMIN+3", "SIGRTMAX-1". Returns -1 if invalid. */
int sbx_signal_parse (const char *s);
const char *sbx_signal_name (int sig); /* "KILL"; NULL for real-time signals */

/* ---- rlimits ---- */
struct sbx_rlimit_info
{
  const char *name; /* "RLIMIT_NOFILE" */
  int resource;
};
extern const struct sbx_rlimit_info sbx_rlimits[];
extern const size_t sbx_rlimits_count;
int sbx_rlimit_from_name (const char *name); /* -1 if unknown */

/* ---- capabilities (oci/vocab_caps.c: libcap's names) ---- */
int sbx_capability_from_name (const char *name); /* "CAP_CHOWN" -> 0; -1 if unknown */
/* The capabilities the running kernel has (libcap probes the bounding set once,
 * before main): their numbers are 0..count-1. */
int sbx_capability_count (void);
/* "CAP_CHOWN" for 0, into buf; "capability N" for one libcap has no name for. */
#define SBX_CAP_NAME_MAX 48
const char *sbx_capability_name (int cap, char buf[SBX_CAP_NAME_MAX]);
/* The names libcap knows, in number order: the features document lists them. */
size_t sbx_capability_known_names (char names[64][SBX_CAP_NAME_MAX]);

/* ---- mount options (config.md "Linux mount options"; oci/vocab_mount.c) ---- */
enum sbx_mount_opt_kind
{
  MO_NOOP,        /* "defaults", "silent", "loud" */
  MO_ATTR_SET,    /* per-mount attribute (MOUNT_ATTR_*) */
  MO_ATTR_CLEAR,
  MO_REC_ATTR_SET, /* the recursive "r" forms (AT_RECURSIVE) */
  MO_REC_ATTR_CLEAR,
  MO_SB_FLAG,      /* superblock flag passed to the filesystem ("sync", "dirsync", "mand", ...) */
  MO_SB_FLAG_CLEAR,
  MO_PROPAGATION,  /* value: MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE */
  MO_REC_PROPAGATION,
  MO_BIND,
  MO_RBIND,
  MO_REMOUNT,
  MO_IDMAP,
  MO_RIDMAP,
  MO_TMPCOPYUP,
};

struct sbx_mount_opt_info
{
  enum sbx_mount_opt_kind kind;
  uint64_t value;   /* MOUNT_ATTR_* for attributes, MS_* for propagation */
  uint64_t ms_flag; /* the classic MS_* flag libmount maps the name to (0 if none) */
};
/* What a mounts[].options word means, from libmount's option maps (plus the "r"
 * recursive attribute forms and the OCI words idmap, ridmap, tmpcopyup); false: not a
 * VFS option (filesystem data). */
bool sbx_mount_opt_lookup (const char *name, struct sbx_mount_opt_info *out);
/* Every word sbx_mount_opt_lookup knows, for the features document: calls fn on each. */
void sbx_mount_opt_each (void (*fn) (const char *name, void *data), void *data);

/* ---- hooks ---- */
enum sbx_hook_kind
{
  SBX_HOOK_PRESTART,
  SBX_HOOK_CREATE_RUNTIME,
  SBX_HOOK_CREATE_CONTAINER,
  SBX_HOOK_START_CONTAINER,
  SBX_HOOK_POSTSTART,
  SBX_HOOK_POSTSTOP,
  SBX_HOOK_COUNT
};
extern const char *const sbx_hook_names[SBX_HOOK_COUNT];

/* ---- seccomp (config-linux.md "Seccomp"; values as of libseccomp 2.6) ---- */
enum sbx_seccomp_action
{
  SCMP_A_KILL, /* = KILL_THREAD */
  SCMP_A_KILL_PROCESS,
  SCMP_A_KILL_THREAD,
  SCMP_A_TRAP,
  SCMP_A_ERRNO,
  SCMP_A_TRACE,
  SCMP_A_ALLOW,
  SCMP_A_LOG,
  SCMP_A_NOTIFY,
  SCMP_A_COUNT
};
extern const char *const sbx_seccomp_actions[SCMP_A_COUNT];
enum sbx_seccomp_op
{
  SCMP_OP_NE,
  SCMP_OP_LT,
  SCMP_OP_LE,
  SCMP_OP_EQ,
  SCMP_OP_GE,
  SCMP_OP_GT,
  SCMP_OP_MASKED_EQ,
  SCMP_OP_COUNT
};
extern const char *const sbx_seccomp_ops[SCMP_OP_COUNT];
extern const char *const sbx_seccomp_archs[];
extern const size_t sbx_seccomp_archs_count;
extern const char *const sbx_seccomp_flags[];
extern const size_t sbx_seccomp_flags_count;
int sbx_name_index (const char *const *table, size_t n, const char *name); /* -1 if absent */

/* ---- linux.memoryPolicy (set_mempolicy(2)) ---- */
extern const char *const sbx_mempolicy_modes[]; /* indexed by MPOL_* value */
extern const size_t sbx_mempolicy_modes_count;
struct sbx_mempolicy_flag
{
  const char *name;
  unsigned value;
};
extern const struct sbx_mempolicy_flag sbx_mempolicy_flags[];
extern const size_t sbx_mempolicy_flags_count;

/* ---- rootfs propagation ---- */
/* "shared" or "rshared" -> MS_SHARED, ...; returns 0 if unknown. */
unsigned long sbx_propagation_from_name (const char *name);

#endif
