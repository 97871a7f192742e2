/* The Python sandbox as an OCI config.json, built with yajl_gen (never printf):
 *   - root: the skeleton (sandbox_rootfs.c), read-only; /usr and the interpreter's own
 *     directories bound read-only, nosuid, nodev; a generated /etc;
 *   - one writable workdir at /work (cwd and HOME), size-capped tmpfs /tmp and /dev/shm;
 *   - namespaces user (the sandbox user alone is mapped), mount, pid, ipc, uts, cgroup,
 *     and net unless --network full;
 *   - no capabilities, no_new_privs, masked and read-only /proc paths, the python.json
 *     seccomp profile (sockets narrowed to AF_UNIX for --network none), Landlock;
 *   - limits: cgroup memory and pids where the runtime manages a cgroup, rlimits for
 *     the per-process ones (sandbox_limits.c decides).
 *   - the environment scrubbed to an allow-list. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/spec_default.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/sandbox/sandbox_exec_guard.h"
#include "runtime/linux/landlock.h"

/* Copied from the caller's environment when set; PATH, HOME and TMPDIR are the
 * sandbox's own. Nothing else of the caller's gets in: no token, no key. */
static const char *const env_allowed[] = { "LANG", "TERM", "TZ", "PYTHONHASHSEED", "PYTHONIOENCODING",
                                           "PYTHONUNBUFFERED" };

/* Thread counts of OpenMP, OpenBLAS, MKL and numexpr. */
static const char *const lib_thread_vars[] = { "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                               "NUMEXPR_NUM_THREADS" };

static bool
env_name_allowed (const char *kv)
{
  size_t n = strcspn (kv, "=");
  if (strncmp (kv, "LC_", 3) == 0)
    return true;
  for (size_t i = 0; i < ARRAY_SIZE (env_allowed); i++)
    if (strlen (env_allowed[i]) == n && strncmp (kv, env_allowed[i], n) == 0)
      return true;
  return false;
}

/* --------------------------------------------------------------- helpers */

/* one yajl_gen step of a function returning yajl_gen_status */
#define T(call)                                                                                              \
  if ((st = (call)) != yajl_gen_status_ok)                                                                   \
  return st

static yajl_gen_status
gen_mount (yajl_gen g, const char *dest, const char *type, const char *source, const char *const *opts)
{
  yajl_gen_status st;
  if ((st = yajl_gen_map_open (g)) != yajl_gen_status_ok || (st = gen_key_string (g, "destination", dest))
      || (st = gen_key_string (g, "type", type)) || (st = gen_key_string (g, "source", source))
      || (st = gen_string (g, "options")) || (st = yajl_gen_array_open (g)))
    return st;
  for (size_t i = 0; opts[i]; i++)
    if ((st = gen_string (g, opts[i])) != yajl_gen_status_ok)
      return st;
  if ((st = yajl_gen_array_close (g)) != yajl_gen_status_ok)
    return st;
  return yajl_gen_map_close (g);
}

static const char *const ro_bind[] = { "rbind", "ro", "nosuid", "nodev", NULL };
static const char *const ro_file_bind[] = { "bind", "ro", "nosuid", "nodev", NULL };

static yajl_gen_status
gen_ro_bind_if_exists (yajl_gen g, const char *path)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return yajl_gen_status_ok;
  return gen_mount (g, path, "bind", path, S_ISDIR (st.st_mode) ? ro_bind : ro_file_bind);
}

static yajl_gen_status
gen_id_mapping (yajl_gen g, const char *key, unsigned container_id, unsigned host_id)
{
  yajl_gen_status st;
  if ((st = gen_string (g, key)) || (st = yajl_gen_array_open (g)) || (st = yajl_gen_map_open (g))
      || (st = gen_key_int (g, "containerID", container_id)) || (st = gen_key_int (g, "hostID", host_id))
      || (st = gen_key_int (g, "size", 1)) || (st = yajl_gen_map_close (g)))
    return st;
  return yajl_gen_array_close (g);
}

static yajl_gen_status
gen_rlimit (yajl_gen g, const char *type, int resource, uint64_t soft, uint64_t hard, bool as_root)
{
  yajl_gen_status st;
  struct rlimit cur;
  /* Unprivileged, a hard limit cannot be raised: never ask for more than we have
     (less is only stricter). */
  if (!as_root && getrlimit (resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY)
    {
      if (hard > cur.rlim_max)
        hard = cur.rlim_max;
      if (soft > hard)
        soft = hard;
    }
  if ((st = yajl_gen_map_open (g)) || (st = gen_key_string (g, "type", type))
      || (st = gen_key_int (g, "soft", (long long) soft)) || (st = gen_key_int (g, "hard", (long long) hard)))
    return st;
  return yajl_gen_map_close (g);
}

/* "a:b:c" of the Landlock write annotation: the writable places. */
static char *
landlock_writable (const struct sandbox_policy *p)
{
  char *s = xstrdup (SANDBOX_WORKDIR ":/tmp:/dev/shm");
  for (size_t i = 0; i < p->n_mounts; i++)
    if (p->mounts[i].writable)
      {
        char *t = xasprintf ("%s:%s", s, p->mounts[i].dest);
        free (s);
        s = t;
      }
  return s;
}

/* Whether --env sets the variable of ENTRY ("NAME=..."), from the I-th --env on. */
static bool
env_given_from (const struct sandbox_policy *p, size_t i, const char *entry)
{
  size_t len = strcspn (entry, "=");
  for (; i < p->n_env; i++)
    if (strncmp (p->env[i], entry, len) == 0 && p->env[i][len] == '=')
      return true;
  return false;
}

/* process.env: the sandbox's PATH (the interpreter's own bin dir first, a venv's, so
   `python3` and its scripts resolve), HOME and TMPDIR, the caller's allow-listed
   variables, --env, a LANG, and the numeric libraries' thread counts. Each name
   once: a --env replaces the others of its name, and the last --env of a name wins
   (a server's, then its client's: a warm run's options come in that order), since
   which of two entries a reader takes differs (CPython's os.environ the first, a
   warm fork's the last). */
char **
sandbox_process_env (const struct sandbox_policy *p, const char *python, const char *const *caller_env, size_t *n_out)
{
  char **env = NULL;
  size_t n = 0;
  char *path_env, *slash;
  bool has_lang = false;
#define ADD(s) (env = xrealloc (env, (n + 2) * sizeof *env), env[n++] = (s), env[n] = NULL)
#define ADD_UNLESS_GIVEN(s)                                                                                           \
  do                                                                                                                  \
    {                                                                                                                 \
      char *entry_ = (s);                                                                                             \
      if (env_given_from (p, 0, entry_))                                                                              \
        free (entry_);                                                                                                \
      else                                                                                                            \
        ADD (entry_);                                                                                                 \
    }                                                                                                                 \
  while (0)
  path_env = xasprintf ("PATH=%s", python);
  slash = strrchr (path_env, '/');
  if (slash && slash > path_env + 5)
    *slash = '\0';
  else
    path_env[5] = '\0';
  if (strcmp (path_env + 5, "/usr/bin") == 0 || strcmp (path_env + 5, "/usr/local/bin") == 0
      || strcmp (path_env + 5, "/bin") == 0)
    path_env[5] = '\0';
  ADD_UNLESS_GIVEN (xasprintf ("%s%s/usr/local/bin:/usr/bin:/bin", path_env, path_env[5] ? ":" : ""));
  free (path_env);
  ADD_UNLESS_GIVEN (xstrdup ("HOME=" SANDBOX_WORKDIR));
  ADD_UNLESS_GIVEN (xstrdup ("TMPDIR=/tmp"));
  for (const char *const *e = caller_env; e && *e; e++)
    if (env_name_allowed (*e))
      {
        has_lang |= strncmp (*e, "LANG=", 5) == 0;
        ADD_UNLESS_GIVEN (xstrdup (*e));
      }
  for (size_t i = 0; i < p->n_env; i++)
    if (!env_given_from (p, i + 1, p->env[i]))
      {
        ADD (xstrdup (p->env[i]));
        has_lang |= strncmp (p->env[i], "LANG=", 5) == 0;
      }
  if (!has_lang)
    ADD (xstrdup ("LANG=C.UTF-8"));
  /* matplotlib draws without a display: Agg, unless --env says otherwise (a warm run's
     plt.show() hands the figures to the result: runtime/warm/zygote.py) */
  {
    bool given = false;
    for (size_t i = 0; i < p->n_env; i++)
      given |= strncmp (p->env[i], "MPLBACKEND=", 11) == 0;
    if (!given)
      ADD (xstrdup ("MPLBACKEND=Agg"));
  }
  /* numeric libraries' threads per process (sandbox_opts.c says why) */
  for (size_t k = 0; k < ARRAY_SIZE (lib_thread_vars) && p->lib_threads; k++)
    {
      size_t len = strlen (lib_thread_vars[k]);
      bool given = false;
      for (size_t i = 0; i < p->n_env; i++)
        given |= strncmp (p->env[i], lib_thread_vars[k], len) == 0 && p->env[i][len] == '=';
      if (!given)
        ADD (xasprintf ("%s=%u", lib_thread_vars[k], p->lib_threads));
    }
#undef ADD_UNLESS_GIVEN
#undef ADD
  *n_out = n;
  return env;
}

/* --------------------------------------------------------------- parts */

static yajl_gen_status
gen_process (yajl_gen g, const struct sandbox_policy *p, const struct sandbox_limits *l,
             const struct sandbox_run_spec *r, bool as_root)
{
  static const char *const no_caps[] = { NULL };
  static const char *const cap_sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
  char **env;
  size_t n_env;
  yajl_gen_status st = yajl_gen_status_ok;
  T (gen_string (g, "process"));
  T (yajl_gen_map_open (g));
  T (gen_key_bool (g, "terminal", false));
  T (gen_string (g, "user"));
  T (yajl_gen_map_open (g));
  T (gen_key_int (g, "uid", SANDBOX_UID));
  T (gen_key_int (g, "gid", SANDBOX_GID));
  T (gen_key_int (g, "umask", 022));
  T (yajl_gen_map_close (g));
  T (gen_string (g, "args"));
  T (gen_string_array (g, (const char *const *) r->args, r->n_args));

  T (gen_string (g, "env"));
  T (yajl_gen_array_open (g));
  env = sandbox_process_env (p, r->python, r->caller_env, &n_env);
  for (size_t i = 0; i < n_env && st == yajl_gen_status_ok; i++)
    st = gen_string (g, env[i]);
  for (size_t i = 0; i < n_env; i++)
    free (env[i]);
  free (env);
  if (st != yajl_gen_status_ok)
    return st;
  T (yajl_gen_array_close (g));
  T (gen_key_string (g, "cwd", SANDBOX_WORKDIR));
  T (gen_string (g, "capabilities"));
  T (yajl_gen_map_open (g));
  for (size_t i = 0; i < ARRAY_SIZE (cap_sets); i++)
    {
      T (gen_string (g, cap_sets[i]));
      T (gen_string_array (g, no_caps, 0));
    }
  T (yajl_gen_map_close (g));
  T (gen_string (g, "rlimits"));
  T (yajl_gen_array_open (g));
  /* SIGXCPU at the limit (a clear cause in the result), SIGKILL a second later */
  T (gen_rlimit (g, "RLIMIT_CPU", RLIMIT_CPU, p->cpu_time, p->cpu_time + 1, as_root));
  T (gen_rlimit (g, "RLIMIT_NOFILE", RLIMIT_NOFILE, p->nofile, p->nofile, as_root));
  T (gen_rlimit (g, "RLIMIT_FSIZE", RLIMIT_FSIZE, p->fsize, p->fsize, as_root));
  T (gen_rlimit (g, "RLIMIT_CORE", RLIMIT_CORE, 0, 0, as_root));
  if (l->pids == LIMIT_RLIMIT)
    /* counted per user per user namespace: the sandbox's own tasks only */
    T (gen_rlimit (g, "RLIMIT_NPROC", RLIMIT_NPROC, p->pids, p->pids, as_root));
  if (l->memory == LIMIT_RLIMIT_INSTEAD)
    T (gen_rlimit (g, "RLIMIT_AS", RLIMIT_AS, p->memory, p->memory, as_root));
  T (yajl_gen_array_close (g));
  T (gen_key_bool (g, "noNewPrivileges", true));
  return yajl_gen_map_close (g);
}

/* A bind the sandbox writes: nosuid and nodev, and idmapped when its owner is not the
   sandbox user (sandbox_workdir.c). An idmapped one is not recursive: a file system
   mounted below it may not support idmapping, and unmapped it would be writable as is. */
static yajl_gen_status
gen_writable_bind (yajl_gen g, const char *dest, const char *source, bool recursive, bool idmap, uid_t owner,
                   gid_t group, const struct sandbox_run_spec *r)
{
  static const char *const opts[] = { "rw", "nosuid", "nodev", "idmap" };
  yajl_gen_status st;
  T (yajl_gen_map_open (g));
  T (gen_key_string (g, "destination", dest));
  T (gen_key_string (g, "type", "bind"));
  T (gen_key_string (g, "source", source));
  T (gen_string (g, "options"));
  T (yajl_gen_array_open (g));
  T (gen_string (g, recursive && !idmap ? "rbind" : "bind"));
  for (size_t i = 0; i < ARRAY_SIZE (opts) - (idmap ? 0 : 1); i++)
    T (gen_string (g, opts[i]));
  T (yajl_gen_array_close (g));
  if (idmap)
    {
      T (gen_id_mapping (g, "uidMappings", owner, r->host_uid));
      T (gen_id_mapping (g, "gidMappings", group, r->host_gid));
    }
  return yajl_gen_map_close (g);
}

static yajl_gen_status
gen_mounts (yajl_gen g, const struct sandbox_policy *p, const struct sandbox_run_spec *r)
{
  static const char *const proc_opts[] = { "nosuid", "noexec", "nodev", NULL };
  /* The tmpfs are owned by the sandbox user (uid=/gid= are read in the container's
     user namespace): root is not mapped there, and the setup creates /dev's entries
     as the sandbox user (FS_CREATE in fs.h). */
  static const char *const dev_opts[] = { "nosuid", "strictatime", "mode=755", "size=65536k", "uid=1000", "gid=1000",
                                          NULL };
  static const char *const pts_opts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
  static const char *const usr_links[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };
  _cleanup_free_ char *tmp_size = xasprintf ("size=%llu", (unsigned long long) p->tmp_size);
  const char *const shm_opts[] = { "nosuid", "noexec", "nodev", "mode=1777", tmp_size, "uid=1000", "gid=1000", NULL };
  const char *const tmp_opts[] = { "nosuid", "nodev", "mode=1777", tmp_size, "uid=1000", "gid=1000", NULL };
  yajl_gen_status st;

  T (gen_string (g, "mounts"));
  T (yajl_gen_array_open (g));
  T (gen_mount (g, "/proc", "proc", "proc", proc_opts));
  if (r->meminfo) /* the memory limit, not the host's memory (sandbox_meminfo.c) */
    T (gen_mount (g, "/proc/meminfo", "bind", r->meminfo, ro_file_bind));
  T (gen_mount (g, "/dev", "tmpfs", "tmpfs", dev_opts));
  T (gen_mount (g, "/dev/pts", "devpts", "devpts", pts_opts));
  T (gen_mount (g, "/dev/shm", "tmpfs", "shm", shm_opts));
  /* No /dev/mqueue (CPython's multiprocessing uses /dev/shm) and no /sys: less to
     set up, and less of the host to describe (CPU counts come from /proc). */
  if (r->interp)
    {
      struct stat st_;
      T (gen_mount (g, "/usr", "bind", "/usr", ro_bind));
      for (size_t i = 0; i < ARRAY_SIZE (usr_links); i++)
        if (lstat (usr_links[i], &st_) == 0 && S_ISDIR (st_.st_mode))
          T (gen_mount (g, usr_links[i], "bind", usr_links[i], ro_bind));
      T (gen_ro_bind_if_exists (g, "/etc/ld.so.cache"));
      T (gen_ro_bind_if_exists (g, "/etc/ssl/certs"));
      T (gen_ro_bind_if_exists (g, "/etc/ssl/openssl.cnf"));
      T (gen_ro_bind_if_exists (g, "/etc/alternatives"));
      /* fontconfig's configuration: matplotlib lists the fonts with fc-list, which
         without it complains on stderr and finds none (Jupyter shows the complaint) */
      T (gen_ro_bind_if_exists (g, "/etc/fonts"));
      if (r->interp->etc_python)
        T (gen_ro_bind_if_exists (g, r->interp->etc_python));
    }
  if (p->network == SANDBOX_NET_FULL)
    {
      char real[PATH_MAX];
      if (realpath ("/etc/resolv.conf", real))
        T (gen_mount (g, "/etc/resolv.conf", "bind", real, ro_file_bind));
    }
  T (gen_mount (g, "/tmp", "tmpfs", "tmpfs", tmp_opts));
  /* after /tmp: an interpreter (a venv) may live under the host's /tmp */
  for (size_t i = 0; r->interp && i < r->interp->n_binds; i++)
    T (gen_mount (g, r->interp->binds[i], "bind", r->interp->binds[i], ro_bind));

  /* the workdir and --rw binds; owned by someone else on the host, they are idmapped
     so that the owner is the sandbox user inside and what it writes stays the owner's */
  T (gen_writable_bind (g, SANDBOX_WORKDIR, r->workdir, false, r->workdir_idmap, r->workdir_owner, r->workdir_group, r));
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct sandbox_mount *m = &p->mounts[i];
      if (m->writable)
        {
          T (gen_writable_bind (g, m->dest, m->source, true, m->idmap, m->owner, m->group, r));
        }
      else
        {
          T (gen_mount (g, m->dest, "bind", m->source, ro_bind));
        }
    }
  if (r->script_source)
    {
      /* in a tmpfs of this run's: its mount point, the script's name, is in no
         skeleton a later run sees */
      static const char *const sbx_opts[] = { "nosuid", "nodev", "noexec", "mode=555", "size=64k", "nr_inodes=16",
                                              "uid=1000", "gid=1000", NULL };
      T (gen_mount (g, "/sbx", "tmpfs", "tmpfs", sbx_opts));
      T (gen_mount (g, r->script_dest, "bind", r->script_source, ro_file_bind));
    }
  return yajl_gen_array_close (g);
}

static yajl_gen_status
gen_linux (yajl_gen g, const struct sandbox_policy *p, const struct sandbox_limits *l,
           const struct sandbox_run_spec *r, size_t *seccomp_at)
{
  static const char *const ns[] = { "user", "mount", "pid", "ipc", "uts", "cgroup", "network" };
  size_t n_ns = p->network == SANDBOX_NET_FULL ? ARRAY_SIZE (ns) - 1 : ARRAY_SIZE (ns);
  yajl_gen_status st;
  T (gen_string (g, "linux"));
  T (yajl_gen_map_open (g));
  /* the sandbox user alone: no root inside, so nothing can be owned by root there */
  T (gen_id_mapping (g, "uidMappings", SANDBOX_UID, r->host_uid));
  T (gen_id_mapping (g, "gidMappings", SANDBOX_GID, r->host_gid));
  T (gen_string (g, "namespaces"));
  T (yajl_gen_array_open (g));
  for (size_t i = 0; i < n_ns; i++)
    {
      T (yajl_gen_map_open (g));
      T (gen_key_string (g, "type", ns[i]));
      T (yajl_gen_map_close (g));
    }
  T (yajl_gen_array_close (g));
  if (l->cgroup)
    {
      T (gen_string (g, "resources"));
      T (yajl_gen_map_open (g));
      if (l->memory == LIMIT_CGROUP)
        {
          T (gen_string (g, "memory"));
          T (yajl_gen_map_open (g));
          T (gen_key_int (g, "limit", (long long) p->memory));
          T (gen_key_int (g, "swap", (long long) p->memory)); /* memory+swap: no swap on top */
          T (yajl_gen_map_close (g));
        }
      if (l->pids == LIMIT_CGROUP)
        {
          T (gen_string (g, "pids"));
          T (yajl_gen_map_open (g));
          T (gen_key_int (g, "limit", (long long) p->pids));
          T (yajl_gen_map_close (g));
        }
      T (yajl_gen_map_close (g));
    }
  T (gen_string (g, "maskedPaths"));
  T (yajl_gen_array_open (g));
  for (size_t i = 0; oci_default_masked_paths[i]; i++)
    T (gen_string (g, oci_default_masked_paths[i]));
  T (yajl_gen_array_close (g));
  T (gen_string (g, "readonlyPaths"));
  T (yajl_gen_array_open (g));
  for (size_t i = 0; oci_default_readonly_paths[i]; i++)
    T (gen_string (g, oci_default_readonly_paths[i]));
  T (yajl_gen_array_close (g));
  T (gen_string (g, "seccomp"));
  {
    const unsigned char *buf;
    T (yajl_gen_get_buf (g, &buf, seccomp_at)); /* the profile goes here (splice_profile) */
  }
  T (yajl_gen_null (g));
  return yajl_gen_map_close (g);
}

/* The shipped profile goes in as the text it is: parsing its 20 KB and generating
 * them again was a third of `sbx-oci python`'s own work. The generator stopped at
 * byte `at` after the "seccomp" key and wrote a null for the value ("seccomp":null,
 * or ": null" when pretty); the text replaces that null. The runtime hashes the
 * section as written for its filter cache, so the text only has to be the same. */
static char *
splice_profile (char *doc, size_t *len, size_t at, const char *profile)
{
  size_t v = at, plen = strlen (profile), rest;
  char *out;
  if (v < *len && doc[v] == ':')
    v++;
  if (v < *len && doc[v] == ' ')
    v++;
  if (*len - v < 4 || memcmp (doc + v, "null", 4) != 0)
    return NULL;
  rest = *len - v - 4;
  out = xmalloc0 (v + plen + rest + 1);
  memcpy (out, doc, v);
  memcpy (out + v, profile, plen);
  memcpy (out + v + plen, doc + v + 4, rest);
  *len = v + plen + rest;
  return out;
}

char *
sandbox_config_json (const struct sandbox_policy *p, const struct sandbox_limits *l, const struct sandbox_run_spec *r,
                     bool pretty, size_t *len, struct sbx_error *err)
{
  const char *profile = p->network == SANDBOX_NET_NONE ? sbx_profile_python_network_none_json : sbx_profile_python_json;
  _cleanup_free_ char *writable = landlock_writable (p);
  _cleanup_free_ char *doc = NULL;
  bool as_root = geteuid () == 0;
  size_t seccomp_at = 0;
  yajl_gen g;
  char *out = NULL;
  g = gen_new (pretty);
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "ociVersion", "1.3.0"));
  GEN (gen_process (g, p, l, r, as_root));
  GEN (gen_string (g, "root"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "path", r->rootfs));
  GEN (gen_key_bool (g, "readonly", true));
  GEN (yajl_gen_map_close (g));
  GEN (gen_key_string (g, "hostname", SANDBOX_HOSTNAME));
  GEN (gen_mounts (g, p, r));
  GEN (gen_linux (g, p, l, r, &seccomp_at));
  GEN (gen_string (g, "annotations"));
  GEN (yajl_gen_map_open (g));
  /* a second filesystem layer, where the kernel has it (best effort: the result and
     `sbx-oci check` say whether it is there) */
  GEN (gen_key_string (g, LANDLOCK_ANNOTATION_PREFIX "read", "/"));
  GEN (gen_key_string (g, LANDLOCK_ANNOTATION_PREFIX "write-files", "/dev:/proc"));
  GEN (gen_key_string (g, LANDLOCK_ANNOTATION_PREFIX "write", writable));
  GEN (gen_key_string (g, LANDLOCK_ANNOTATION_PREFIX "best-effort", "true"));
  /* our own pid 1: the interpreter gets its signals (kill -TERM, abort, SIGXCPU) */
  /* our own pid 1 (reaper.h); for a warm run it holds the sandbox for the
     interpreter that joins (python.c) */
  GEN (gen_key_string (g, "run.sbx-oci.init", r->hold ? "hold" : "true"));
  GEN (gen_key_string (g, "run.sbx-oci.sandbox", "python"));
  if (r->owner)
    GEN (gen_key_string (g, SANDBOX_OWNER_ANNOTATION, r->owner));
  if (r->temp_workdir)
    GEN (gen_key_string (g, SANDBOX_TEMP_WORKDIR_ANNOTATION, r->temp_workdir));
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_map_close (g));
  doc = gen_finish (g, len);
  if (doc && r->exec_listener)
    {
      _cleanup_free_ char *guarded = exec_guard_profile (profile, r->exec_listener);
      out = guarded ? splice_profile (doc, len, seccomp_at, guarded) : NULL;
    }
  else if (doc)
    out = splice_profile (doc, len, seccomp_at, profile);
gen_fail:
  if (!out)
    sbx_error_set (err, 0, "sandbox: generating config.json failed");
  yajl_gen_free (g);
  return out;
}
#undef T
