#include "build-config.h"
#include "oci/seccomp_config.h"

#include <stdio.h>
#include <string.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

static bool
action_takes_errno (enum sbx_seccomp_action a)
{
  return a == SCMP_A_ERRNO || a == SCMP_A_TRACE;
}

static int
parse_action (yajl_val obj, const char *path, const char *key, enum sbx_seccomp_action *out, struct sbx_error *err)
{
  const char *name = NULL;
  int i;
  if (json_get_string (obj, path, key, true, &name, err) < 0)
    return -1;
  i = sbx_name_index (sbx_seccomp_actions, SCMP_A_COUNT, name);
  if (i < 0)
    return sbx_error_set (err, 0, "%s.%s: unknown seccomp action '%s'", path, key, name);
  *out = (enum sbx_seccomp_action) i;
  return 0;
}

static int
parse_args (yajl_val rule, const char *path, struct oci_seccomp_rule *r, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (rule, path, "args", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  if (arr->u.array.len > 6)
    return sbx_error_set (err, 0, "%s.args: a syscall has at most 6 arguments", path);
  r->args = xmalloc0 ((arr->u.array.len + 1) * sizeof *r->args);
  r->n_args = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_seccomp_arg *a = &r->args[i];
      yajl_val e = arr->u.array.values[i];
      char ap_buf[JSON_PATH_MAX];
      const char *ap = json_path_elem (ap_buf, path, "args", i);
      const char *op = NULL;
      uint64_t idx;
      int o;
      if (json_expect_object (e, ap, err) < 0 || json_get_u64 (e, ap, "index", true, 5, &idx, NULL, err) < 0
          || json_get_u64 (e, ap, "value", true, UINT64_MAX, &a->value, NULL, err) < 0
          || json_get_u64 (e, ap, "valueTwo", false, UINT64_MAX, &a->value_two, NULL, err) < 0
          || json_get_string (e, ap, "op", true, &op, err) < 0)
        return -1;
      a->index = (uint32_t) idx;
      o = sbx_name_index (sbx_seccomp_ops, SCMP_OP_COUNT, op);
      if (o < 0)
        return sbx_error_set (err, 0, "%s.op: unknown seccomp operator '%s'", ap, op);
      a->op = (enum sbx_seccomp_op) o;
    }
  return 0;
}

static int
parse_rules (yajl_val arr, const char *path, struct oci_seccomp *s, struct sbx_error *err)
{
  s->rules = xmalloc0 ((arr->u.array.len + 1) * sizeof *s->rules);
  s->n_rules = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_seccomp_rule *r = &s->rules[i];
      yajl_val e = arr->u.array.values[i];
      char rp_buf[JSON_PATH_MAX];
      const char *rp = json_path_elem (rp_buf, path, "syscalls", i);
      uint64_t v;
      if (json_expect_object (e, rp, err) < 0 || json_get_strv (e, rp, "names", true, &r->names, &r->n_names, err) < 0
          || parse_action (e, rp, "action", &r->action, err) < 0
          || json_get_u64 (e, rp, "errnoRet", false, 4095, &v, &r->has_errno_ret, err) < 0
          || parse_args (e, rp, r, err) < 0)
        return -1;
      r->errno_ret = (uint32_t) v;
      if (r->n_names == 0)
        return sbx_error_set (err, 0, "%s.names: must contain at least one entry", rp);
      for (size_t j = 0; j < r->n_names; j++)
        if (!r->names[j][0])
          return sbx_error_set (err, 0, "%s.names[%zu]: empty syscall name", rp, j);
      /* config-linux.md: an errno on an action without one MUST be an error. */
      if (r->has_errno_ret && !action_takes_errno (r->action))
        return sbx_error_set (err, 0, "%s.errnoRet: %s does not take an errno", rp, sbx_seccomp_actions[r->action]);
      s->uses_notify |= r->action == SCMP_A_NOTIFY;
    }
  return 0;
}

/* What needs the rules and the rest of the section together. */
static int
check_listener (const struct oci_seccomp *s, const char *path, struct sbx_error *err)
{
  if (s->uses_notify && !s->listener_path)
    return sbx_error_set (err, 0, "%s.listenerPath: SCMP_ACT_NOTIFY needs a listener socket", path);
  return 0;
}

int
oci_seccomp_parse (yajl_val obj, const char *path, struct oci_seccomp *s, struct sbx_error *err)
{
  _cleanup_free_ const char **archs = NULL, **flags = NULL;
  size_t n_archs = 0, n_flags = 0;
  uint64_t v;
  yajl_val rules = NULL;
  memset (s, 0, sizeof *s);
  if (!obj)
    return 0;
  s->tree = obj;
  s->path = path;
  if (json_expect_object (obj, path, err) < 0 || parse_action (obj, path, "defaultAction", &s->default_action, err) < 0
      || json_get_u64 (obj, path, "defaultErrnoRet", false, 4095, &v, &s->has_default_errno_ret, err) < 0
      || json_get_strv (obj, path, "architectures", false, &archs, &n_archs, err) < 0
      || json_get_strv (obj, path, "flags", false, &flags, &n_flags, err) < 0
      || json_get_string (obj, path, "listenerPath", false, &s->listener_path, err) < 0
      || json_get_string (obj, path, "listenerMetadata", false, &s->listener_metadata, err) < 0
      || json_get_array (obj, path, "syscalls", false, &rules, err) < 0)
    return -1;
  if (json_is_deferred (rules))
    s->deferred_rules = rules; /* oci_seccomp_load_rules */
  else if (rules && parse_rules (rules, path, s, err) < 0)
    return -1;
  s->default_errno_ret = (uint32_t) v;
  if (s->has_default_errno_ret && !action_takes_errno (s->default_action))
    return sbx_error_set (err, 0, "%s.defaultErrnoRet: %s does not take an errno", path,
                          sbx_seccomp_actions[s->default_action]);
  s->uses_notify |= s->default_action == SCMP_A_NOTIFY;
  s->archs = xmalloc0 ((n_archs + 1) * sizeof (int));
  for (size_t i = 0; i < n_archs; i++)
    {
      int a = sbx_name_index (sbx_seccomp_archs, sbx_seccomp_archs_count, archs[i]);
      if (a < 0)
        return sbx_error_set (err, 0, "%s.architectures[%zu]: unknown architecture '%s'", path, i, archs[i]);
      s->archs[s->n_archs++] = a;
    }
  for (size_t i = 0; i < n_flags; i++)
    {
      int f = sbx_name_index (sbx_seccomp_flags, sbx_seccomp_flags_count, flags[i]);
      if (f < 0)
        return sbx_error_set (err, 0, "%s.flags[%zu]: unknown seccomp flag '%s'", path, i, flags[i]);
      s->flags |= 1u << f;
    }
  if (s->listener_metadata && !s->listener_path)
    return sbx_error_set (err, 0, "%s.listenerMetadata: must not be set without listenerPath", path);
  if ((!s->deferred_rules && check_listener (s, path, err) < 0))
    return -1;
  if (s->listener_path && s->listener_path[0] != '/')
    return sbx_error_set (err, 0, "%s.listenerPath: must be an absolute path", path);
  return 0;
}

int
oci_seccomp_load_rules (struct oci_seccomp *s, struct sbx_error *err)
{
  if (!s->deferred_rules)
    return 0;
  if (!s->text)
    return sbx_error_set (err, 0, "%s.syscalls: internal error: the document's text is not set", s->path);
  s->rules_doc = json_parse_deferred (s->text, s->deferred_rules, "config.json", err);
  if (!s->rules_doc)
    return -1;
  s->deferred_rules = NULL;
  if (parse_rules (s->rules_doc, s->path, s, err) < 0 || check_listener (s, s->path, err) < 0)
    return -1;
  return 0;
}

bool
oci_seccomp_allows_unconditionally (const struct oci_seccomp *s, const char *name)
{
  bool named = false;
  for (size_t i = 0; i < s->n_rules; i++)
    for (size_t j = 0; j < s->rules[i].n_names; j++)
      if (strcmp (s->rules[i].names[j], name) == 0)
        {
          if (s->rules[i].action != SCMP_A_ALLOW || s->rules[i].n_args)
            return false;
          named = true;
        }
  return named || s->default_action == SCMP_A_ALLOW;
}

void
oci_seccomp_clear (struct oci_seccomp *s)
{
  for (size_t i = 0; i < s->n_rules; i++)
    {
      free (s->rules[i].names);
      free (s->rules[i].args);
    }
  free (s->rules);
  free (s->archs);
  json_free (s->rules_doc);
  memset (s, 0, sizeof *s);
}
