#include "build-config.h"
#include "oci/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

int
oci_state_gen_fields (yajl_gen g, const struct sbx_state *s, const char *status)
{
  GEN (gen_key_string (g, "ociVersion", SBX_OCI_VERSION));
  GEN (gen_key_string (g, "id", s->id));
  /* runtime.md: pid is REQUIRED when created or running; runc reports 0 once stopped. */
  GEN (gen_key_int (g, "pid", strcmp (status, "stopped") == 0 ? 0 : s->pid));
  GEN (gen_key_string (g, "status", status));
  GEN (gen_key_string (g, "bundle", s->bundle));
  GEN (gen_key_string (g, "rootfs", s->rootfs));
  GEN (gen_key_string (g, "created", s->created));
  GEN (gen_key_string (g, "owner", s->owner ? s->owner : ""));
  if (s->annotations)
    {
      GEN (gen_string (g, "annotations"));
      GEN (gen_tree (g, s->annotations));
    }
  return 0;
gen_fail:
  return -1;
}

char *
oci_state_public_json (const struct sbx_state *s, const char *status, bool pretty, size_t *len)
{
  yajl_gen g = gen_new (pretty);
  char *out = NULL;
  GEN (yajl_gen_map_open (g));
  if (oci_state_gen_fields (g, s, status) < 0)
    goto gen_fail;
  GEN (yajl_gen_map_close (g));
  out = gen_finish (g, len);
gen_fail:
  yajl_gen_free (g);
  return out;
}

char *
oci_state_file_json (const struct sbx_state *s, size_t *len)
{
  yajl_gen g = gen_new (false);
  char *out = NULL;
  char start[32];
  GEN (yajl_gen_map_open (g));
  if (oci_state_gen_fields (g, s, "created") < 0)
    goto gen_fail;
  GEN (gen_string (g, "sbx"));
  GEN (yajl_gen_map_open (g));
  /* uint64 as a string: yajl integers are signed. */
  snprintf (start, sizeof start, "%" PRIu64, s->init_start_time);
  GEN (gen_key_string (g, "initStartTime", start));
  GEN (gen_key_string (g, "cgroupPath", s->cgroup_path ? s->cgroup_path : ""));
  GEN (gen_key_int (g, "cgroupMode", s->cgroup_mode));
  GEN (gen_key_int (g, "cgroupV1Mask", s->cgroup_v1_mask));
  if (s->systemd_unit && *s->systemd_unit)
    {
      GEN (gen_key_string (g, "systemdUnit", s->systemd_unit));
      GEN (gen_key_bool (g, "systemdUser", s->systemd_user));
    }
  GEN (gen_key_bool (g, "hasProcess", s->has_process));
  GEN (gen_key_bool (g, "cgroupns", s->has_cgroupns));
  GEN (gen_key_bool (g, "userns", s->userns));
  GEN (gen_key_int (g, "hooksMask", s->hooks_mask));
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_map_close (g));
  out = gen_finish (g, len);
gen_fail:
  yajl_gen_free (g);
  return out;
}

static char *
dup_member (yajl_val obj, const char *key, const char *path, bool required, struct sbx_error *err, int *failed)
{
  const char *v = NULL;
  if (*failed)
    return NULL;
  if (json_get_string (obj, path, key, required, &v, err) < 0)
    {
      *failed = 1;
      return NULL;
    }
  return v ? xstrdup (v) : NULL;
}

int
oci_state_parse (const char *buf, size_t len, struct sbx_state *s, struct sbx_error *err)
{
  yajl_val priv = NULL;
  int64_t pid = 0, mode = 0, mask = 0, hooks = 0;
  const char *start = NULL;
  int failed = 0;

  memset (s, 0, sizeof *s);
  s->tree = json_parse (buf, len, "state.json", err);
  if (!s->tree)
    return -1;
  if (json_expect_object (s->tree, "state.json", err) < 0)
    return -1;
  s->id = dup_member (s->tree, "id", "state.json", true, err, &failed);
  s->bundle = dup_member (s->tree, "bundle", "state.json", true, err, &failed);
  s->rootfs = dup_member (s->tree, "rootfs", "state.json", true, err, &failed);
  s->created = dup_member (s->tree, "created", "state.json", true, err, &failed);
  s->owner = dup_member (s->tree, "owner", "state.json", false, err, &failed);
  if (failed || json_get_i64 (s->tree, "state.json", "pid", true, 0, INT32_MAX, &pid, NULL, err) < 0
      || json_get_object (s->tree, "state.json", "sbx", true, &priv, err) < 0
      || json_get_string (priv, "state.json.sbx", "initStartTime", true, &start, err) < 0
      || json_get_i64 (priv, "state.json.sbx", "cgroupMode", true, 0, 16, &mode, NULL, err) < 0
      || json_get_i64 (priv, "state.json.sbx", "cgroupV1Mask", true, 0, UINT32_MAX, &mask, NULL, err) < 0
      || json_get_bool (priv, "state.json.sbx", "hasProcess", &s->has_process, NULL, err) < 0
      || json_get_bool (priv, "state.json.sbx", "cgroupns", &s->has_cgroupns, NULL, err) < 0
      || json_get_bool (priv, "state.json.sbx", "userns", &s->userns, NULL, err) < 0
      || json_get_i64 (priv, "state.json.sbx", "hooksMask", true, 0, 63, &hooks, NULL, err) < 0)
    return -1;
  s->cgroup_path = dup_member (priv, "cgroupPath", "state.json.sbx", true, err, &failed);
  s->systemd_unit = dup_member (priv, "systemdUnit", "state.json.sbx", false, err, &failed);
  if (failed || (s->systemd_unit
                 && json_get_bool (priv, "state.json.sbx", "systemdUser", &s->systemd_user, NULL, err) < 0))
    return -1;
  s->pid = (pid_t) pid;
  s->cgroup_mode = (int) mode;
  s->cgroup_v1_mask = (uint32_t) mask;
  s->hooks_mask = (uint32_t) hooks;
  s->init_start_time = strtoull (start, NULL, 10);
  s->annotations = json_member (s->tree, "annotations");
  return 0;
}

void
oci_state_clear (struct sbx_state *s)
{
  free (s->id);
  free (s->bundle);
  free (s->rootfs);
  free (s->created);
  free (s->owner);
  free (s->cgroup_path);
  free (s->systemd_unit);
  json_free (s->tree);
  memset (s, 0, sizeof *s);
}
