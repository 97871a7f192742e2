/* The one-shot Python sandbox: a policy (the options of `sbx-oci python` and
 * `sbx-oci bundle --python`) turned into an OCI bundle over the host's read-only system
 * paths. Each concern in its own file:
 *   sandbox_opts.c     the shared command-line options and their defaults
 *   sandbox_interp.c   asking the interpreter where it lives (prefixes, site-packages)
 *   sandbox_rootfs.c   the rootfs skeleton (mount points, a generated minimal /etc), cached
 *   sandbox_limits.c   which limit is enforced how (cgroup, rlimit) and what is degraded
 *   sandbox_config.c   config.json, built with yajl_gen
 *   sandbox_workdir.c  the writable workdir: ownership, and what the run changed in it
 *   sandbox_output.c   the program's output relayed with a cap per stream
 *   sandbox_result.c   the result JSON
 * and the subcommands python.c, bundle.c and check.c. */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <getopt.h>

#include "runtime/base/cli.h"
#include "runtime/base/context.h"
#include "runtime/base/error.h"

/* Inside the sandbox: who runs, and where the workdir is. */
#define SANDBOX_UID 1000
#define SANDBOX_GID 1000
#define SANDBOX_USER "sandbox"
#define SANDBOX_WORKDIR "/work"
#define SANDBOX_HOSTNAME "sandbox"
/* As root, the sandbox user is this host id (100000 + 1000: the subordinate-id
 * convention of the container engines): unprivileged, and no login's. */
#define SANDBOX_HOST_ID_DEFAULT 101000

enum sandbox_network
{
  SANDBOX_NET_NONE,     /* private net namespace (lo only); sockets: AF_UNIX only */
  SANDBOX_NET_LOOPBACK, /* private net namespace with lo up */
  SANDBOX_NET_FULL,     /* the host's network */
};

struct sandbox_mount
{
  const char *source; /* host path (absolute once resolved; for --rw, the mount source) */
  const char *dest;   /* path in the sandbox */
  bool writable;
  bool idmap; /* --rw of a path not the sandbox user's: its owner is seen as the sandbox user */
  uid_t owner;
  gid_t group;
};

struct sandbox_policy
{
  const char *python;  /* --python; NULL: /usr/bin/python3, else python3 on PATH */
  const char *rootfs;  /* --rootfs: an image's root instead of the host's system paths */
  const char *workdir; /* --workdir (host); NULL: a fresh one per run */
  uint64_t memory;     /* bytes */
  uint64_t cpu_time;   /* seconds of CPU per process (RLIMIT_CPU) */
  uint64_t pids;
  unsigned lib_threads; /* OMP/OPENBLAS/MKL/NUMEXPR_NUM_THREADS unless --env sets them */
  uint64_t nofile;
  uint64_t fsize; /* bytes, the largest file a process may write (RLIMIT_FSIZE) */
  uint64_t tmp_size; /* bytes, /tmp (a tmpfs); /dev/shm gets the same cap */
  enum sandbox_network network;
  double timeout;   /* wall clock seconds; 0: none */
  const char **env; /* --env K=V (on top of the scrubbed environment) */
  size_t n_env;
  struct sandbox_mount *mounts; /* --ro, --rw */
  size_t n_mounts;
  bool allow_degraded;
  uid_t host_uid; /* as root: the host id of the sandbox user (--host-id) */
};

void sandbox_policy_defaults (struct sandbox_policy *p);
/* Options shared by `python` and `bundle`: the entries of a cli_opt table, and the
 * handler (sandbox_opts.c). */
#define SANDBOX_OPT_BASE 512
enum
{
  SO_PYTHON = SANDBOX_OPT_BASE,
  SO_ROOTFS,
  SO_WORKDIR,
  SO_MEMORY,
  SO_CPU_TIME,
  SO_PIDS,
  SO_NOFILE,
  SO_FSIZE,
  SO_TMP_SIZE,
  SO_NETWORK,
  SO_TIMEOUT,
  SO_ENV,
  SO_RO,
  SO_RW,
  SO_ALLOW_DEGRADED,
  SO_HOST_ID,
};

/* (`bundle` spells the interpreter option --interpreter: its --python names the bundle) */
#define SANDBOX_CLI_OPT_INTERPRETER(name) \
  { name, SO_PYTHON, required_argument, "PATH", "the interpreter (default /usr/bin/python3, else python3 on PATH)" }
/* The options `python` and `bundle` share; each adds --workdir, --timeout and
 * --allow-degraded with its own text (a bundle keeps DIR/work, has no run to time,
 * and no result to name anything in). */
#define SANDBOX_CLI_OPTS \
  { "rootfs", SO_ROOTFS, required_argument, "DIR", "an image's root filesystem instead of the host's system paths" }, \
  { "memory", SO_MEMORY, required_argument, "SIZE", "memory for the whole sandbox (default 2048M)" }, \
  { "cpu-time", SO_CPU_TIME, required_argument, "SEC", "CPU seconds per process (default 300)" }, \
  { "pids", SO_PIDS, required_argument, "N", "processes and threads (default 8 per CPU, at least 1024)" }, \
  { "nofile", SO_NOFILE, required_argument, "N", "open files per process (default 1024)" }, \
  { "fsize", SO_FSIZE, required_argument, "SIZE", "largest file a process may write (default 256M)" }, \
  { "tmp-size", SO_TMP_SIZE, required_argument, "SIZE", "size of the /tmp and /dev/shm tmpfs (default 256M)" }, \
  { "network", SO_NETWORK, required_argument, "MODE", "none, loopback (default: only lo) or full (the host's)" }, \
  { "env", SO_ENV, required_argument, "K=V", "set a variable (the environment is otherwise scrubbed)" }, \
  { "ro", SO_RO, required_argument, "PATH[:DEST]", "bind a host path read-only (DEST defaults to PATH)" }, \
  { "rw", SO_RW, required_argument, "PATH[:DEST]", "bind a host path writable" }, \
  { "host-id", SO_HOST_ID, required_argument, "ID", "as root: the host uid/gid of the sandbox user (default 101000)" }
#define SANDBOX_CLI_OPT_WORKDIR(text) { "workdir", SO_WORKDIR, required_argument, "DIR", text }
#define SANDBOX_CLI_OPT_TIMEOUT(text) { "timeout", SO_TIMEOUT, required_argument, "SEC", text }
#define SANDBOX_CLI_OPT_ALLOW_DEGRADED(text) { "allow-degraded", SO_ALLOW_DEGRADED, no_argument, NULL, text }

/* Returns 1 if key is not a sandbox option (the caller handles it), 0 or -1. */
int sandbox_cli_opt (struct sandbox_policy *p, int key, const char *arg, struct sbx_error *err);
void sandbox_policy_free (struct sandbox_policy *p);

/* ---------------------------------------------------------------- interpreter */

struct sandbox_interp
{
  char *executable; /* sys.executable: the same path inside (it is bound there) */
  char *version;    /* "3.11.2" */
  char **binds;     /* host directories outside /usr to bind read-only at the same path */
  size_t n_binds;
  char *etc_python; /* /etc/pythonX.Y if the host has it (Debian's sitecustomize) */
};

char *sandbox_default_python (struct sbx_error *err);
/* Run the interpreter (as the caller, environment scrubbed) and ask it. */
int sandbox_interp_query (const char *python, struct sandbox_interp *in, struct sbx_error *err);
/* The line format kept in the skeleton cache, and back. */
char *sandbox_interp_serialize (const struct sandbox_interp *in);
int sandbox_interp_parse (const char *text, struct sandbox_interp *in, struct sbx_error *err);
void sandbox_interp_free (struct sandbox_interp *in);

/* ---------------------------------------------------------------- rootfs */

/* The cached skeleton for this interpreter: CACHE/<key>/rootfs, built once (atomically:
 * parallel first runs race to a rename). *bundle is CACHE/<key>. With --ro/--rw
 * destinations it is a variant, CACHE/<key>-<hash of them>, with their mount points. */
int sandbox_skeleton_ensure (const char *cache, const char *python, const struct sandbox_policy *p, char **bundle,
                             struct sandbox_interp *in, struct sbx_error *err);
/* A skeleton written into DIR (for `bundle`): DIR/rootfs. */
int sandbox_skeleton_build (const char *dir, const struct sandbox_interp *in, struct sbx_error *err);
/* The mount points of the policy's --ro/--rw binds in a rootfs of a bundle or an image
 * (--rootfs): the sandbox's setup cannot create them in a root-owned tree. */
int sandbox_skeleton_add_mount_points (const char *rootfs, const struct sandbox_policy *p, struct sbx_error *err);
/* --rootfs: the sandbox's own mount points (/proc, /dev, /tmp, /work, /sbx) in
 * the image, made as the caller for the same reason. */
int sandbox_image_add_mount_points (const char *rootfs, struct sbx_error *err);
/* ---------------------------------------------------------------- limits */

enum sandbox_limit_how
{
  LIMIT_CGROUP,   /* a cgroup limit for the whole sandbox */
  LIMIT_RLIMIT,   /* an rlimit: per process, as the option says */
  LIMIT_RLIMIT_INSTEAD, /* degraded: a per-process rlimit where a cgroup limit was meant */
};

struct sandbox_limits
{
  bool cgroup;  /* the runtime will manage a cgroup (root, cgroups mounted; a systemd host) */
  bool systemd; /* that cgroup is a scope systemd makes (--systemd-cgroup implied) */
  enum sandbox_limit_how memory, pids;
  char *degraded[4]; /* human-readable, one per degraded layer */
  size_t n_degraded;
};

/* Decide how each limit is enforced here; an unenforceable one is an error unless
 * --allow-degraded, and then it is listed in degraded[]. SYSTEMD_OK: this process
 * makes the sandbox itself, and may ask systemd for its scope (not a bundle written
 * for another runtime, nor a warm run, whose cgroup is one of the server's). */
/* systemd is PID 1 and runs a manager for this caller (the system's for root, else
 * the user's own), on a hierarchy where it can delegate; --cgroup-manager cgroupfs
 * or disabled, given, says no. */
bool sandbox_systemd_host (const struct sbx_ctx *ctx);
int sandbox_limits_plan (const struct sbx_ctx *ctx, const struct sandbox_policy *p, bool systemd_ok,
                         struct sandbox_limits *l, struct sbx_error *err);
void sandbox_limits_free (struct sandbox_limits *l);

/* ---------------------------------------------------------------- config */

struct sandbox_run_spec
{
  const char *rootfs; /* absolute: the skeleton's or --rootfs */
  const struct sandbox_interp *interp; /* NULL with --rootfs */
  const char *python;                  /* the executable inside */
  char **args;                         /* process.args */
  size_t n_args;
  const char *workdir; /* host */
  uid_t host_uid, host_gid;            /* the sandbox user outside */
  bool workdir_idmap;                  /* workdir_owner is seen as the sandbox user */
  uid_t workdir_owner;
  gid_t workdir_group;
  const char *script_source, *script_dest; /* SCRIPT bound read-only, or NULL */
  const char *const *caller_env;       /* environ: the allow-listed names are copied */
  const char *owner;        /* sandbox_owner_annotation(), or NULL (a bundle) */
  const char *temp_workdir; /* the workdir if it is ours to remove, or NULL */
  const char *exec_listener; /* --no-subprocess: the exec supervisor's socket, or NULL */
  const char *meminfo;       /* the file bound over /proc/meminfo, or NULL */
  bool hold;                 /* a warm run: the init holds, the program joins (reaper.h) */
};

/* sandbox_meminfo.c: DIR/meminfo-BYTES, what /proc/meminfo shows a sandbox limited to
 * BYTES, written on first use (malloc'd path). */
char *sandbox_meminfo_file (const char *dir, uint64_t memory, struct sbx_error *err);
/* A run's own file in DIR (*path, malloc'd; the caller unlinks it after the run):
 * nothing in use yet. Returns its fd, open for sandbox_meminfo_update. */
int sandbox_meminfo_run_open (const char *dir, uint64_t memory, char **path, struct sbx_error *err);
/* Rewrite it for USED bytes of the limit in use. */
void sandbox_meminfo_update (int fd, uint64_t memory, uint64_t used);

/* pretty: for a bundle people read; compact for `python` (less to parse and hash). */
char *sandbox_config_json (const struct sandbox_policy *p, const struct sandbox_limits *l,
                           const struct sandbox_run_spec *r, bool pretty, size_t *len, struct sbx_error *err);
/* The process's environment (KEY=VALUE, NULL-terminated, *n of them; malloc'd). */
char **sandbox_process_env (const struct sandbox_policy *p, const char *python, const char *const *caller_env,
                            size_t *n);
/* The seccomp profiles shipped in the binary (config/seccomp/python.json, and
 * python-network-none.json for --network none: sockets of AF_UNIX only). */
extern const char sbx_profile_python_json[];
extern const char sbx_profile_python_network_none_json[];

/* ---------------------------------------------------------------- janitor */

/* Annotations that let a later run clean up after one that was SIGKILLed. */
#define SANDBOX_OWNER_ANNOTATION "run.sbx-oci.sandbox.owner"
#define SANDBOX_TEMP_WORKDIR_ANNOTATION "run.sbx-oci.sandbox.workdir"
char *sandbox_owner_annotation (void); /* "PID STARTTIME" of this process */
/* Delete the containers (and temporary workdirs) of `sbx-oci python` runs whose
 * runtime process is gone (sandbox_janitor.c). */
void sandbox_sweep_orphans (struct sbx_ctx *ctx);

/* ---------------------------------------------------------------- workdir */

struct workdir_entry
{
  char *path; /* relative */
  uint64_t size;
  int64_t mtime_ns, ctime_ns;
  ino_t ino;
  mode_t mode;
};

struct workdir_snapshot
{
  struct workdir_entry *e;
  size_t n;
  bool truncated; /* more than the walk's bound */
  size_t path_bytes;
};

/* A host path the sandbox writes (the workdir, a --rw bind), resolved once and held
 * open for the run (sandbox_workdir.c says how the sandbox user comes to own it). */
struct host_writable
{
  char *path; /* absolute, resolved */
  int fd;     /* the path itself (O_RDONLY), for the mount and for putting its mode back */
  bool is_dir;
  bool idmap; /* bound with an idmap: owner is seen as the sandbox user */
  uid_t owner;
  gid_t group;
  mode_t mode; /* permission bits when opened */
};
/* opt names the option in errors. A fifo or device is refused, and so is a system
 * path (syspaths_check). */
int host_writable_open (const struct sbx_ctx *ctx, const char *opt, const char *given, uid_t host_uid,
                        struct host_writable *h, struct sbx_error *err);
/* What the config mounts: the held fd (/proc/self/fd/N, read by this process) when
 * idmapped, so that a swapped path component cannot redirect it; else the path. */
char *host_writable_mount_source (const struct host_writable *h);
/* Refuses (one error naming `opt` and `given`) a path the sandbox may not write: a
 * system directory, the runtime's state root or a directory holding it or the binary
 * (sandbox_syspaths.c has the list). `fd` is the path opened at `real`, resolved. */
int syspaths_check (const struct sbx_ctx *ctx, const char *opt, const char *given, const char *real, int fd,
                    struct sbx_error *err);
/* After the run: the path's mode as it was (the sandbox owned it meanwhile). */
int host_writable_restore (const char *opt, struct host_writable *h, struct sbx_error *err);
void host_writable_close (struct host_writable *h);

/* Make or check the workdir. */
struct workdir
{
  struct host_writable h;
  bool temporary; /* made by us: removed after the run */
};
int workdir_prepare (const struct sbx_ctx *ctx, const char *given, uid_t host_uid, gid_t host_gid,
                     struct workdir *w, struct sbx_error *err);
void workdir_finish (struct workdir *w); /* removes a temporary one */
int workdir_snapshot_take (int dirfd, struct workdir_snapshot *s);
void workdir_snapshot_free (struct workdir_snapshot *s);
/* Calls fn for each entry created, deleted or modified (files; directories only when
 * created or deleted), in path order. */
void workdir_diff (const struct workdir_snapshot *before, const struct workdir_snapshot *after,
                   void (*fn) (void *data, const struct workdir_entry *e, const char *change), void *data);

#endif
