/* config.json: top level, root, mounts, process, hooks, annotations.
 * The linux section is in config_linux.c. */
#include "build-config.h"
#include "oci/config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

#ifndef SCHED_ISO
#define SCHED_ISO 4
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

static void
warn (const struct oci_parse_ctx *ctx, const char *fmt, ...)
{
  char *msg;
  va_list ap;
  if (!ctx || !ctx->warn)
    return;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) >= 0)
    {
      ctx->warn (ctx->warn_data, "%s", msg);
      free (msg);
    }
  va_end (ap);
}

/* ------------------------------------------------------------------- mounts */

static int
parse_mounts (yajl_val root, const struct oci_parse_ctx *ctx, struct oci_config *c, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (root, "", "mounts", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  c->mounts = xmalloc0 (arr->u.array.len * sizeof *c->mounts);
  c->n_mounts = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_mount *m = &c->mounts[i];
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *p = xasprintf ("mounts[%zu]", i);
      if (json_expect_object (e, p, err) < 0 || json_get_string (e, p, "destination", true, &m->destination, err) < 0
          || json_get_string (e, p, "source", false, &m->source, err) < 0
          || json_get_string (e, p, "type", false, &m->type, err) < 0
          || json_get_strv (e, p, "options", false, &m->options, &m->n_options, err) < 0
          || oci_id_mappings_parse (e, p, "uidMappings", &m->uid_mappings, &m->n_uid_mappings, err) < 0
          || oci_id_mappings_parse (e, p, "gidMappings", &m->gid_mappings, &m->n_gid_mappings, err) < 0)
        return -1;
      /* Only for a destination validation will accept: an invalid one gets its error
       * alone, not a warning first. */
      if (m->destination[0] && m->destination[0] != '/' && !strstr (m->destination, ".."))
        warn (ctx, "%s.destination: relative path '%s' is deprecated; it is resolved from the container's /", p,
              m->destination);
    }
  return 0;
}

/* ------------------------------------------------------------------ process */

static int
parse_user (yajl_val proc, const char *path, struct oci_user *u, struct sbx_error *err)
{
  yajl_val obj = NULL, gids = NULL;
  uint64_t v;
  _cleanup_free_ char *p = xasprintf ("%s.user", path);
  if (json_get_object (proc, path, "user", false, &obj, err) < 0)
    return -1;
  if (!obj)
    return 0; /* uid 0, gid 0 */
  if (json_get_u64 (obj, p, "uid", true, UINT32_MAX, &v, NULL, err) < 0)
    return -1;
  u->uid = v;
  if (json_get_u64 (obj, p, "gid", true, UINT32_MAX, &v, NULL, err) < 0)
    return -1;
  u->gid = v;
  if (json_get_u64 (obj, p, "umask", false, 07777, &v, &u->has_umask, err) < 0)
    return -1;
  u->umask = v;
  if (json_get_array (obj, p, "additionalGids", false, &gids, err) < 0)
    return -1;
  if (gids)
    {
      u->additional_gids = xmalloc0 (gids->u.array.len * sizeof (uint32_t) + 1);
      u->n_additional_gids = gids->u.array.len;
      for (size_t i = 0; i < gids->u.array.len; i++)
        {
          _cleanup_free_ char *ep = xasprintf ("%s.additionalGids[%zu]", p, i);
          if (json_value_u64 (gids->u.array.values[i], ep, UINT32_MAX, &v, err) < 0)
            return -1;
          u->additional_gids[i] = v;
        }
    }
  return 0;
}

static int
parse_cap_set (yajl_val caps, const char *path, const char *key, const struct oci_parse_ctx *ctx, uint64_t *mask,
               struct sbx_error *err)
{
  _cleanup_free_ const char **names = NULL;
  size_t n = 0;
  if (json_get_strv (caps, path, key, false, &names, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      int cap = sbx_capability_from_name (names[i]);
      if (cap < 0)
        {
          /* config.md: a value that cannot be mapped MUST be logged as a warning and
           * SHOULD NOT fail. Dropping it fails safe (fewer privileges). */
          warn (ctx, "%s.%s[%zu]: unknown capability '%s' ignored", path, key, i, names[i]);
          continue;
        }
      *mask |= UINT64_C (1) << cap;
    }
  return 0;
}

static int
parse_capabilities (yajl_val proc, const char *path, const struct oci_parse_ctx *ctx, struct oci_process *p,
                    struct sbx_error *err)
{
  yajl_val caps = NULL;
  _cleanup_free_ char *cp = xasprintf ("%s.capabilities", path);
  if (json_get_object (proc, path, "capabilities", false, &caps, err) < 0)
    return -1;
  if (!caps)
    return 0;
  p->has_capabilities = true;
  if (parse_cap_set (caps, cp, "bounding", ctx, &p->caps.bounding, err) < 0
      || parse_cap_set (caps, cp, "effective", ctx, &p->caps.effective, err) < 0
      || parse_cap_set (caps, cp, "inheritable", ctx, &p->caps.inheritable, err) < 0
      || parse_cap_set (caps, cp, "permitted", ctx, &p->caps.permitted, err) < 0
      || parse_cap_set (caps, cp, "ambient", ctx, &p->caps.ambient, err) < 0)
    return -1;
  return 0;
}

static int
parse_rlimits (yajl_val proc, const char *path, struct oci_process *p, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (proc, path, "rlimits", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  p->rlimits = xmalloc0 (arr->u.array.len * sizeof *p->rlimits + 1);
  p->n_rlimits = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_rlimit *r = &p->rlimits[i];
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *ep = xasprintf ("%s.rlimits[%zu]", path, i);
      if (json_expect_object (e, ep, err) < 0 || json_get_string (e, ep, "type", true, &r->type, err) < 0
          || json_get_u64 (e, ep, "soft", true, UINT64_MAX, &r->soft, NULL, err) < 0
          || json_get_u64 (e, ep, "hard", true, UINT64_MAX, &r->hard, NULL, err) < 0)
        return -1;
      r->resource = sbx_rlimit_from_name (r->type);
      if (r->resource < 0)
        return sbx_error_set (err, 0, "%s.type: unknown rlimit '%s'", ep, r->type);
      if (r->soft > r->hard)
        return sbx_error_set (err, 0, "%s: soft limit %llu is greater than hard limit %llu", ep,
                              (unsigned long long) r->soft, (unsigned long long) r->hard);
      for (size_t j = 0; j < i; j++)
        if (p->rlimits[j].resource == r->resource)
          return sbx_error_set (err, 0, "%s.type: duplicate rlimit '%s'", ep, r->type);
    }
  return 0;
}

static const struct
{
  const char *name;
  int value;
} sched_policies[] = {
  { "SCHED_OTHER", SCHED_OTHER }, { "SCHED_FIFO", SCHED_FIFO },   { "SCHED_RR", SCHED_RR },
  { "SCHED_BATCH", SCHED_BATCH }, { "SCHED_ISO", SCHED_ISO },     { "SCHED_IDLE", SCHED_IDLE },
  { "SCHED_DEADLINE", SCHED_DEADLINE },
};

static const struct
{
  const char *name;
  uint64_t value;
} sched_flags[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

static int
parse_scheduler (yajl_val proc, const char *path, struct oci_process *p, struct sbx_error *err)
{
  yajl_val obj = NULL;
  struct oci_scheduler *s = &p->scheduler;
  _cleanup_free_ char *sp = xasprintf ("%s.scheduler", path);
  _cleanup_free_ const char **flags = NULL;
  size_t n_flags = 0;
  int64_t v;
  bool found = false;
  if (json_get_object (proc, path, "scheduler", false, &obj, err) < 0)
    return -1;
  if (!obj)
    return 0;
  p->has_scheduler = true;
  if (json_get_string (obj, sp, "policy", true, &s->policy, err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (sched_policies); i++)
    if (strcmp (sched_policies[i].name, s->policy) == 0)
      {
        s->policy_value = sched_policies[i].value;
        found = true;
      }
  if (!found)
    return sbx_error_set (err, 0, "%s.policy: unknown scheduling policy '%s'", sp, s->policy);
  if (json_get_i64 (obj, sp, "nice", false, -20, 19, &v, NULL, err) < 0)
    return -1;
  s->nice = json_member (obj, "nice") ? (int32_t) v : 0;
  if (json_get_i64 (obj, sp, "priority", false, 0, 99, &v, NULL, err) < 0)
    return -1;
  s->priority = json_member (obj, "priority") ? (int32_t) v : 0;
  if (json_get_u64 (obj, sp, "runtime", false, UINT64_MAX, &s->runtime, NULL, err) < 0
      || json_get_u64 (obj, sp, "deadline", false, UINT64_MAX, &s->deadline, NULL, err) < 0
      || json_get_u64 (obj, sp, "period", false, UINT64_MAX, &s->period, NULL, err) < 0
      || json_get_strv (obj, sp, "flags", false, &flags, &n_flags, err) < 0)
    return -1;
  for (size_t i = 0; i < n_flags; i++)
    {
      bool known = false;
      for (size_t j = 0; j < ARRAY_SIZE (sched_flags); j++)
        if (strcmp (sched_flags[j].name, flags[i]) == 0)
          {
            s->flags |= sched_flags[j].value;
            known = true;
          }
      if (!known)
        return sbx_error_set (err, 0, "%s.flags[%zu]: unknown scheduler flag '%s'", sp, i, flags[i]);
    }
  return 0;
}

static int
parse_io_priority (yajl_val proc, const char *path, struct oci_process *p, struct sbx_error *err)
{
  yajl_val obj = NULL;
  _cleanup_free_ char *ip = xasprintf ("%s.ioPriority", path);
  struct oci_io_priority *io = &p->io_priority;
  if (json_get_object (proc, path, "ioPriority", false, &obj, err) < 0)
    return -1;
  if (!obj)
    return 0;
  p->has_io_priority = true;
  if (json_get_string (obj, ip, "class", true, &io->class_name, err) < 0
      || json_get_i64 (obj, ip, "priority", true, 0, 7, &io->priority, NULL, err) < 0)
    return -1;
  if (strcmp (io->class_name, "IOPRIO_CLASS_RT") == 0)
    io->class_value = IOPRIO_CLASS_RT;
  else if (strcmp (io->class_name, "IOPRIO_CLASS_BE") == 0)
    io->class_value = IOPRIO_CLASS_BE;
  else if (strcmp (io->class_name, "IOPRIO_CLASS_IDLE") == 0)
    io->class_value = IOPRIO_CLASS_IDLE;
  else
    return sbx_error_set (err, 0, "%s.class: unknown I/O priority class '%s'", ip, io->class_name);
  return 0;
}

int
oci_process_parse (yajl_val obj, const char *path, const struct oci_parse_ctx *ctx, struct oci_process *p,
                   struct sbx_error *err)
{
  yajl_val console = NULL, affinity = NULL;
  int64_t oom;
  uint64_t v;
  if (json_expect_object (obj, path, err) < 0)
    return -1;
  if (json_get_bool (obj, path, "terminal", &p->terminal, NULL, err) < 0
      || json_get_object (obj, path, "consoleSize", false, &console, err) < 0)
    return -1;
  if (console)
    {
      _cleanup_free_ char *cp = xasprintf ("%s.consoleSize", path);
      p->has_console_size = true;
      if (json_get_u64 (console, cp, "height", true, UINT16_MAX, &v, NULL, err) < 0)
        return -1;
      p->console_height = v;
      if (json_get_u64 (console, cp, "width", true, UINT16_MAX, &v, NULL, err) < 0)
        return -1;
      p->console_width = v;
    }
  if (parse_user (obj, path, &p->user, err) < 0
      || json_get_strv (obj, path, "args", false, &p->args, &p->n_args, err) < 0
      || json_get_strv (obj, path, "env", false, &p->env, &p->n_env, err) < 0
      || json_get_string (obj, path, "cwd", true, &p->cwd, err) < 0 || parse_capabilities (obj, path, ctx, p, err) < 0
      || parse_rlimits (obj, path, p, err) < 0
      || json_get_bool (obj, path, "noNewPrivileges", &p->no_new_privileges, NULL, err) < 0
      || json_get_string (obj, path, "apparmorProfile", false, &p->apparmor_profile, err) < 0
      || json_get_string (obj, path, "selinuxLabel", false, &p->selinux_label, err) < 0
      || json_get_i64 (obj, path, "oomScoreAdj", false, -1000, 1000, &oom, &p->has_oom_score_adj, err) < 0
      || parse_scheduler (obj, path, p, err) < 0 || parse_io_priority (obj, path, p, err) < 0
      || json_get_object (obj, path, "execCPUAffinity", false, &affinity, err) < 0)
    return -1;
  p->oom_score_adj = (int) oom;
  if (affinity)
    {
      _cleanup_free_ char *ap = xasprintf ("%s.execCPUAffinity", path);
      if (json_get_string (affinity, ap, "initial", false, &p->exec_cpu_affinity_initial, err) < 0
          || json_get_string (affinity, ap, "final", false, &p->exec_cpu_affinity_final, err) < 0)
        return -1;
    }
  return 0;
}

void
oci_process_clear (struct oci_process *p)
{
  if (!p)
    return;
  free (p->user.additional_gids);
  free (p->args);
  free (p->env);
  free (p->rlimits);
  memset (p, 0, sizeof *p);
}

/* -------------------------------------------------------------------- hooks */

static int
parse_hooks (yajl_val root, struct oci_config *c, struct sbx_error *err)
{
  yajl_val hooks = NULL;
  if (json_get_object (root, "", "hooks", false, &hooks, err) < 0)
    return -1;
  if (!hooks)
    return 0;
  for (int k = 0; k < SBX_HOOK_COUNT; k++)
    {
      yajl_val arr = NULL;
      _cleanup_free_ char *kp = xasprintf ("hooks.%s", sbx_hook_names[k]);
      if (json_get_array (hooks, "hooks", sbx_hook_names[k], false, &arr, err) < 0)
        return -1;
      if (!arr)
        continue;
      c->hooks[k].hooks = xmalloc0 (arr->u.array.len * sizeof (struct oci_hook) + 1);
      c->hooks[k].n = arr->u.array.len;
      for (size_t i = 0; i < arr->u.array.len; i++)
        {
          struct oci_hook *h = &c->hooks[k].hooks[i];
          yajl_val e = arr->u.array.values[i];
          _cleanup_free_ char *hp = xasprintf ("%s[%zu]", kp, i);
          if (json_expect_object (e, hp, err) < 0 || json_get_string (e, hp, "path", true, &h->path, err) < 0
              || json_get_strv (e, hp, "args", false, &h->args, &h->n_args, err) < 0
              || json_get_strv (e, hp, "env", false, &h->env, &h->n_env, err) < 0
              || json_get_i64 (e, hp, "timeout", false, INT32_MIN, INT32_MAX, &h->timeout, &h->has_timeout, err) < 0)
            return -1;
          if (h->path[0] != '/')
            return sbx_error_set (err, 0, "%s.path: '%s' must be an absolute path", hp, h->path);
          if (h->has_timeout && h->timeout <= 0)
            return sbx_error_set (err, 0, "%s.timeout: must be greater than zero", hp);
        }
    }
  return 0;
}

/* -------------------------------------------------------------- annotations */

static int
parse_annotations (yajl_val root, struct oci_config *c, struct sbx_error *err)
{
  yajl_val obj = NULL;
  if (json_get_object (root, "", "annotations", false, &obj, err) < 0)
    return -1;
  if (!obj)
    return 0;
  for (size_t i = 0; i < obj->u.object.len; i++)
    {
      yajl_val v = obj->u.object.values[i];
      if (obj->u.object.keys[i][0] == '\0')
        return sbx_error_set (err, 0, "annotations: keys must not be empty");
      if (!v || v->type != yajl_t_string)
        return sbx_error_set (err, 0, "annotations.%s: expected a string, got %s", obj->u.object.keys[i],
                              json_type_name (v));
    }
  c->annotations = obj;
  return 0;
}

const char *
oci_config_annotation (const struct oci_config *c, const char *key)
{
  yajl_val v = json_member (c->annotations, key);
  return v && v->type == yajl_t_string ? v->u.string : NULL;
}

bool
oci_keep_original_groups (const struct oci_config *c)
{
  const char *v = oci_config_annotation (c, OCI_KEEP_GROUPS_ANNOTATION);
  return v && strcmp (v, "0") != 0 && strcmp (v, "false") != 0;
}

/* --------------------------------------------------------------- top level */

static int
refuse_terminal (yajl_val proc, struct sbx_error *err)
{
  bool terminal = false;
  if (json_get_bool (proc, "process", "terminal", &terminal, NULL, err) < 0)
    return -1;
  if (terminal)
    return sbx_error_set (err, 0, "process.terminal is true: use --console-socket to receive the terminal (or run in "
                                  "the foreground, which relays it)");
  return 0;
}

struct oci_config *
oci_config_parse (char *raw, size_t len, const char *what, const struct oci_parse_ctx *ctx, struct sbx_error *err)
{
  struct oci_config *c = xmalloc0 (sizeof *c);
  yajl_val root_obj = NULL, proc = NULL, linux_obj = NULL;

  c->raw = raw;
  c->raw_len = len;
  c->tree = json_parse_config (raw, len, what, err); /* the seccomp rules when needed */
  if (!c->tree)
    goto fail;
  if (c->tree->type != yajl_t_object)
    {
      sbx_error_set (err, 0, "%s: expected a JSON object at the top level, got %s", what, json_type_name (c->tree));
      goto fail;
    }
  if (json_get_string (c->tree, "", "ociVersion", true, &c->oci_version, err) < 0
      || json_get_object (c->tree, "", "root", true, &root_obj, err) < 0
      || json_get_string (root_obj, "root", "path", true, &c->root_path, err) < 0
      || json_get_bool (root_obj, "root", "readonly", &c->root_readonly, NULL, err) < 0
      || parse_mounts (c->tree, ctx, c, err) < 0 || json_get_object (c->tree, "", "process", false, &proc, err) < 0)
    goto fail;
  if (proc && ctx && ctx->no_terminal && refuse_terminal (proc, err) < 0)
    goto fail;
  if (proc)
    {
      c->process = xmalloc0 (sizeof *c->process);
      if (oci_process_parse (proc, "process", ctx, c->process, err) < 0)
        goto fail;
    }
  if (json_get_string (c->tree, "", "hostname", false, &c->hostname, err) < 0
      || json_get_string (c->tree, "", "domainname", false, &c->domainname, err) < 0
      || parse_hooks (c->tree, c, err) < 0 || parse_annotations (c->tree, c, err) < 0
      || json_get_object (c->tree, "", "linux", false, &linux_obj, err) < 0)
    goto fail;
  if (linux_obj)
    {
      c->has_linux = true;
      if (oci_linux_parse (linux_obj, "linux", ctx, &c->linux_, err) < 0)
        goto fail;
    }
  return c;

fail:
  oci_config_free (c);
  return NULL;
}

struct oci_config *
oci_config_load (int dirfd, const char *path, const struct oci_parse_ctx *ctx, struct sbx_error *err)
{
  char *raw = NULL;
  size_t len = 0;
  if (json_read_file (dirfd, path, SBX_JSON_MAX_SIZE, &raw, &len, err) < 0)
    return NULL;
  return oci_config_parse (raw, len, path, ctx, err);
}

void
oci_config_free (struct oci_config *c)
{
  if (!c)
    return;
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      free (c->mounts[i].options);
      free (c->mounts[i].uid_mappings);
      free (c->mounts[i].gid_mappings);
    }
  free (c->mounts);
  if (c->process)
    {
      oci_process_clear (c->process);
      free (c->process);
    }
  for (int k = 0; k < SBX_HOOK_COUNT; k++)
    {
      for (size_t i = 0; i < c->hooks[k].n; i++)
        {
          free (c->hooks[k].hooks[i].args);
          free (c->hooks[k].hooks[i].env);
        }
      free (c->hooks[k].hooks);
    }
  oci_linux_clear (&c->linux_);
  json_free (c->tree);
  free (c->raw);
  free (c);
}
