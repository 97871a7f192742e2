/* Cross-field validation of a parsed config: the MUSTs of config.md and
 * config-linux.md that a single field cannot check, plus sbx-oci's fail-closed rules.
 * Runs after parsing and before any side effect, so a bad config never leaves a
 * state dir, cgroup or mount behind. Every message names the JSON path. */
#include "build-config.h"
#include "oci/config.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

#define MAX_ID_MAPPINGS 340 /* kernel limit on uid_map lines */

/* Does `path` contain a ".." component? We refuse those in container paths: the
 * resolver would clamp them at the root anyway, but a config that says "../../etc"
 * is a mistake or an attack and deserves a clear error. */
static bool
has_dotdot (const char *path)
{
  const char *p = path;
  while (*p)
    {
      const char *end = strchrnul (p, '/');
      if (end - p == 2 && p[0] == '.' && p[1] == '.')
        return true;
      p = *end ? end + 1 : end;
    }
  return false;
}

static int
check_container_path (const char *path, const char *what, bool must_be_absolute, struct sbx_error *err)
{
  if (!*path)
    return sbx_error_set (err, 0, "%s: must not be empty", what);
  if (must_be_absolute && path[0] != '/')
    return sbx_error_set (err, 0, "%s: '%s' must be an absolute path", what, path);
  if (has_dotdot (path))
    return sbx_error_set (err, 0, "%s: '%s' must not contain '..'", what, path);
  if (strlen (path) >= PATH_MAX)
    return sbx_error_set (err, 0, "%s: path is too long", what);
  return 0;
}

static int
check_version (const char *v, struct sbx_error *err)
{
  unsigned major, minor, patch;
  char tail;
  int n = sscanf (v, "%u.%u.%u%c", &major, &minor, &patch, &tail);
  if (n < 3 || (n == 4 && tail != '-' && tail != '+'))
    return sbx_error_set (err, 0, "ociVersion: '%s' is not a semantic version", v);
  /* config.md: a config for 1.4 is not compatible with a runtime that only knows 1.3:
   * it may carry fields (security ones included) that we would silently ignore. */
  if (major != 1 || minor > 3)
    return sbx_error_set (err, 0, "ociVersion: '%s' is not supported (sbx-oci supports 1.0.0 to %s)", v,
                          SBX_OCI_VERSION);
  return 0;
}

int
oci_process_validate (const struct oci_process *p, const char *path, struct sbx_error *err)
{
  if (p->n_args == 0)
    return sbx_error_set (err, 0, "%s.args: must contain at least one entry", path);
  if (p->args[0][0] == '\0')
    return sbx_error_set (err, 0, "%s.args[0]: must not be empty", path);
  if (p->cwd[0] != '/')
    return sbx_error_set (err, 0, "%s.cwd: '%s' must be an absolute path", path, p->cwd);
  for (size_t i = 0; i < p->n_env; i++)
    if (!strchr (p->env[i], '=') || p->env[i][0] == '=')
      return sbx_error_set (err, 0, "%s.env[%zu]: '%s' is not of the form NAME=VALUE", path, i, p->env[i]);
  if (p->user.n_additional_gids > 65536)
    return sbx_error_set (err, 0, "%s.user.additionalGids: more than 65536 groups", path);
  if (p->has_scheduler)
    {
      const struct oci_scheduler *s = &p->scheduler;
      bool rt = s->policy_value == SCHED_FIFO || s->policy_value == SCHED_RR;
      if (rt && (s->priority < 1 || s->priority > 99))
        return sbx_error_set (err, 0, "%s.scheduler.priority: %s needs a priority in [1, 99]", path, s->policy);
      if (!rt && s->priority != 0)
        return sbx_error_set (err, 0, "%s.scheduler.priority: must be 0 for %s", path, s->policy);
      /* A period of 0 is the kernel's "same as the deadline" (sched_setattr(2)). */
      if (s->policy_value == 6 /* SCHED_DEADLINE */ && (!s->runtime || !s->deadline))
        return sbx_error_set (err, 0, "%s.scheduler: SCHED_DEADLINE needs runtime and deadline", path);
    }
  return 0;
}

static int
check_mappings (const struct oci_id_mapping *m, size_t n, const char *what, struct sbx_error *err)
{
  if (n > MAX_ID_MAPPINGS)
    return sbx_error_set (err, 0, "%s: more than %d ranges", what, MAX_ID_MAPPINGS);
  for (size_t i = 0; i < n; i++)
    {
      if (m[i].size == 0)
        return sbx_error_set (err, 0, "%s[%zu].size: must be greater than zero", what, i);
      if ((uint64_t) m[i].container_id + m[i].size > (uint64_t) UINT32_MAX + 1
          || (uint64_t) m[i].host_id + m[i].size > (uint64_t) UINT32_MAX + 1)
        return sbx_error_set (err, 0, "%s[%zu]: range overflows 32 bits", what, i);
      for (size_t j = 0; j < i; j++)
        {
          bool c_overlap = m[i].container_id < (uint64_t) m[j].container_id + m[j].size
                           && m[j].container_id < (uint64_t) m[i].container_id + m[i].size;
          bool h_overlap = m[i].host_id < (uint64_t) m[j].host_id + m[j].size
                           && m[j].host_id < (uint64_t) m[i].host_id + m[i].size;
          if (c_overlap || h_overlap)
            return sbx_error_set (err, 0, "%s[%zu]: overlaps %s[%zu]", what, i, what, j);
        }
    }
  return 0;
}

static int
check_user_namespace (const struct oci_config *c, bool as_root, struct sbx_error *err)
{
  const struct oci_linux *l = &c->linux_;
  const struct oci_namespace *user = &l->ns[SBX_NS_USER];
  bool mappings = l->n_uid_mappings || l->n_gid_mappings;
  if (!user->present)
    {
      if (mappings)
        return sbx_error_set (err, 0, "linux.%s: mappings are set but linux.namespaces has no user namespace",
                              l->n_uid_mappings ? "uidMappings" : "gidMappings");
      if (!as_root)
        return sbx_error_set (err, 0,
                              "linux.namespaces: running as an unprivileged user needs a user namespace "
                              "(add {\"type\": \"user\"} and uid/gid mappings, or use `sbx-oci spec --rootless`)");
      return 0;
    }
  if (user->path)
    {
      if (mappings)
        return sbx_error_set (err, 0, "linux.%s: must not be set when joining the user namespace %s",
                              l->n_uid_mappings ? "uidMappings" : "gidMappings", user->path);
      return 0;
    }
  if (!l->n_uid_mappings || !l->n_gid_mappings)
    return sbx_error_set (err, 0, "linux.%s: a new user namespace needs both uidMappings and gidMappings",
                          l->n_uid_mappings ? "gidMappings" : "uidMappings");
  if (check_mappings (l->uid_mappings, l->n_uid_mappings, "linux.uidMappings", err) < 0
      || check_mappings (l->gid_mappings, l->n_gid_mappings, "linux.gidMappings", err) < 0)
    return -1;
  return 0;
}

static int
check_mounts (const struct oci_config *c, struct sbx_error *err)
{
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      const struct oci_mount *m = &c->mounts[i];
      char what[64];
      bool bind = false, idmap = false;
      /* "mounts[I]" without printf: every mount of every run passes here */
      {
        size_t n = 7;
        char dwhat[80];
        memcpy (what, "mounts[", n);
        n += fmt_u64 (what + n, i);
        what[n++] = ']';
        what[n] = '\0';
        memcpy (dwhat, what, n);
        memcpy (dwhat + n, ".destination", sizeof ".destination");
        if (check_container_path (m->destination, dwhat, false, err) < 0)
          return -1;
      }
      for (size_t j = 0; j < m->n_options; j++)
        {
          struct sbx_mount_opt_info o;
          bool known = sbx_mount_opt_lookup (m->options[j], &o);
          if (known && (o.kind == MO_BIND || o.kind == MO_RBIND))
            bind = true;
          if (known && (o.kind == MO_IDMAP || o.kind == MO_RIDMAP))
            idmap = true;
          if (!m->options[j][0])
            return sbx_error_set (err, 0, "%s.options[%zu]: empty option", what, j);
          /* crun's own syntax for a mount's mapping; taken for a data option, it
             would be dropped and the mount made without the mapping asked for. */
          if (strncmp (m->options[j], "idmap=", 6) == 0 || strncmp (m->options[j], "ridmap=", 7) == 0)
            return sbx_error_set (err, 0, "%s.options[%zu]: '%s' is crun's mapping syntax: give the mount's "
                                          "uidMappings and gidMappings (with 'idmap') instead", what, j,
                                  m->options[j]);
        }
      if (bind && (!m->source || !*m->source))
        return sbx_error_set (err, 0, "%s.source: a bind mount needs a source", what);
      if (!bind && (!m->type || !*m->type))
        return sbx_error_set (err, 0, "%s.type: required for a mount that is not a bind mount", what);
      if (!!m->n_uid_mappings != !!m->n_gid_mappings)
        return sbx_error_set (err, 0, "%s: uidMappings and gidMappings must be given together", what);
      /* config.md: uidMappings SHOULD come with idmap or ridmap; without, they still
         ask for an idmapped mount (crun applies them too): mounts.c plans one. */
      if (m->n_uid_mappings && !idmap && !bind)
        return sbx_error_set (err, 0, "%s: uidMappings are only supported on bind mounts", what);
      idmap |= m->n_uid_mappings > 0;
      if (idmap && !bind)
        return sbx_error_set (err, 0, "%s.options: 'idmap' is only supported on bind mounts", what);
      if (idmap && !m->n_uid_mappings && !c->linux_.ns[SBX_NS_USER].present)
        return sbx_error_set (err, 0, "%s.options: 'idmap' needs uidMappings/gidMappings or a user namespace", what);
      if (m->n_uid_mappings)
        {
          char mw[96];
          snprintf (mw, sizeof mw, "%s.uidMappings", what);
          if (check_mappings (m->uid_mappings, m->n_uid_mappings, mw, err) < 0)
            return -1;
          snprintf (mw, sizeof mw, "%s.gidMappings", what);
          if (check_mappings (m->gid_mappings, m->n_gid_mappings, mw, err) < 0)
            return -1;
        }
    }
  return 0;
}

/* Only sysctls that are namespaced may be set, and only in a namespace that is the
 * container's own (config-linux.md leaves this to the runtime; runc does the same). */
int
oci_sysctl_namespace (const char *key)
{
  static const char *const ipc_names[] = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
                                           "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
                                           "kernel.shm_rmid_forced" };
  for (size_t j = 0; j < ARRAY_SIZE (ipc_names); j++)
    if (strcmp (key, ipc_names[j]) == 0)
      return SBX_NS_IPC;
  if (str_has_prefix (key, "fs.mqueue."))
    return SBX_NS_IPC;
  if (str_has_prefix (key, "net."))
    return SBX_NS_NET;
  if (strcmp (key, "kernel.domainname") == 0)
    return SBX_NS_UTS;
  return -1;
}

static int
check_sysctls (const struct oci_config *c, struct sbx_error *err)
{
  const struct oci_linux *l = &c->linux_;
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      const char *k = l->sysctl[i].key;
      int ns;
      if (!*k || strchr (k, '/') || strstr (k, "..") || k[0] == '.' || k[strlen (k) - 1] == '.')
        return sbx_error_set (err, 0, "linux.sysctl.%s: invalid sysctl name", k);
      /* As runc and crun: kernel.hostname has its own field, so the sysctl is refused;
         kernel.domainname is taken unless it contradicts the domainname field. */
      if (strcmp (k, "kernel.hostname") == 0)
        return sbx_error_set (err, 0, "linux.sysctl.%s: not allowed, it conflicts with the hostname field", k);
      if (strcmp (k, "kernel.domainname") == 0 && c->domainname && strcmp (c->domainname, l->sysctl[i].value) != 0)
        return sbx_error_set (err, 0, "linux.sysctl.%s: '%s' conflicts with the domainname field ('%s')", k,
                              l->sysctl[i].value, c->domainname);
      ns = oci_sysctl_namespace (k);
      if (ns < 0)
        return sbx_error_set (err, 0, "linux.sysctl.%s: not a namespaced sysctl; it would change the host", k);
      /* A joined namespace is checked at create not to be the runtime's own
         (ns_plan_build): a namespaced sysctl is safe anywhere but there. */
      if (!l->ns[ns].present)
        return sbx_error_set (err, 0, "linux.sysctl.%s: needs a %s namespace", k, sbx_namespaces[ns].oci_name);
      if (strchr (l->sysctl[i].value, '\n'))
        return sbx_error_set (err, 0, "linux.sysctl.%s: value must not contain a newline", k);
    }
  return 0;
}

static int
check_cgroups_path (const char *p, struct sbx_error *err)
{
  if (!p)
    return 0;
  if (has_dotdot (p))
    return sbx_error_set (err, 0, "linux.cgroupsPath: '%s' must not contain '..'", p);
  if (strlen (p) >= PATH_MAX / 2)
    return sbx_error_set (err, 0, "linux.cgroupsPath: path is too long");
  return 0;
}

int
oci_config_validate (const struct oci_config *c, bool as_root, struct sbx_error *err)
{
  const struct oci_linux *l = &c->linux_;

  if (check_version (c->oci_version, err) < 0)
    return -1;
  if (!*c->root_path)
    return sbx_error_set (err, 0, "root.path: must not be empty");
  if (c->process && oci_process_validate (c->process, "process", err) < 0)
    return -1;
  if (c->process && c->process->user.n_additional_gids && oci_keep_original_groups (c))
    return sbx_error_set (err, 0, "annotations." OCI_KEEP_GROUPS_ANNOTATION ": keeps the caller's groups, so "
                                  "process.user.additionalGids cannot be set too");
  if ((c->hostname || c->domainname) && !l->ns[SBX_NS_UTS].present)
    return sbx_error_set (err, 0, "%s: setting it needs a UTS namespace in linux.namespaces",
                          c->hostname ? "hostname" : "domainname");
  if (check_user_namespace (c, as_root, err) < 0 || check_mounts (c, err) < 0 || check_sysctls (c, err) < 0
      || check_cgroups_path (l->cgroups_path, err) < 0)
    return -1;
  if (l->n_time_offsets && (!l->ns[SBX_NS_TIME].present || l->ns[SBX_NS_TIME].path))
    return sbx_error_set (err, 0, "linux.timeOffsets: needs a new time namespace");
  if ((l->n_masked_paths || l->n_readonly_paths || c->n_mounts || c->root_readonly) && !l->ns[SBX_NS_MNT].present)
    return sbx_error_set (err, 0, "linux.namespaces: mounts, maskedPaths, readonlyPaths and root.readonly need a "
                                  "mount namespace");
  if (!l->ns[SBX_NS_MNT].present)
    return sbx_error_set (err, 0, "linux.namespaces: sbx-oci needs a mount namespace to set up the root filesystem");
  for (size_t i = 0; i < l->n_masked_paths; i++)
    {
      char what[JSON_PATH_MAX];
      json_path_elem (what, "linux", "maskedPaths", i);
      if (check_container_path (l->masked_paths[i], what, true, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < l->n_readonly_paths; i++)
    {
      char what[JSON_PATH_MAX];
      json_path_elem (what, "linux", "readonlyPaths", i);
      if (check_container_path (l->readonly_paths[i], what, true, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < l->n_devices; i++)
    {
      char what[64];
      snprintf (what, sizeof what, "linux.devices[%zu].path", i);
      if (check_container_path (l->devices[i].path, what, true, err) < 0)
        return -1;
    }
  return 0;
}
