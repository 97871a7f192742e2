/* config.json "linux": namespaces, id mappings, time offsets, devices, cgroupsPath,
 * sysctl, propagation, masked/readonly paths, personality.
 * linux.resources and linux.seccomp are kept as subtrees here and parsed by
 * oci/resources.c and oci/seccomp_config.c. */
#include "build-config.h"
#include "oci/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

/* uidMappings/gidMappings: of linux (the user namespace) and of an idmapped mount
 * (config.c's mounts). */
int
oci_id_mappings_parse (yajl_val obj, const char *path, const char *key, struct oci_id_mapping **out, size_t *n,
                       struct sbx_error *err)
{
  yajl_val arr = NULL;
  struct oci_id_mapping *m;
  if (json_get_array (obj, path, key, false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  m = xmalloc0 (arr->u.array.len * sizeof *m + 1);
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *p = xasprintf ("%s.%s[%zu]", path, key, i);
      uint64_t cid, hid, size;
      if (json_expect_object (e, p, err) < 0 || json_get_u64 (e, p, "containerID", true, UINT32_MAX, &cid, NULL, err) < 0
          || json_get_u64 (e, p, "hostID", true, UINT32_MAX, &hid, NULL, err) < 0
          || json_get_u64 (e, p, "size", true, UINT32_MAX, &size, NULL, err) < 0)
        {
          free (m);
          return -1;
        }
      m[i] = (struct oci_id_mapping) { (uint32_t) cid, (uint32_t) hid, (uint32_t) size };
    }
  *out = m;
  *n = arr->u.array.len;
  return 0;
}

static int
parse_namespaces (yajl_val obj, const char *path, struct oci_linux *l, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (obj, path, "namespaces", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *p = xasprintf ("%s.namespaces[%zu]", path, i);
      const char *type = NULL, *nspath = NULL;
      int ns;
      if (json_expect_object (e, p, err) < 0 || json_get_string (e, p, "type", true, &type, err) < 0
          || json_get_string (e, p, "path", false, &nspath, err) < 0)
        return -1;
      ns = sbx_ns_from_oci_name (type);
      if (ns < 0)
        return sbx_error_set (err, 0, "%s.type: unknown namespace '%s'", p, type);
      if (l->ns[ns].present)
        return sbx_error_set (err, 0, "%s.type: duplicate namespace '%s'", p, type);
      if (nspath && nspath[0] != '/')
        return sbx_error_set (err, 0, "%s.path: '%s' must be an absolute path", p, nspath);
      l->ns[ns].present = true;
      l->ns[ns].path = nspath && *nspath ? nspath : NULL;
      l->ns[ns].index = i;
    }
  return 0;
}

static int
parse_time_offsets (yajl_val obj, const char *path, struct oci_linux *l, struct sbx_error *err)
{
  yajl_val offs = NULL;
  if (json_get_object (obj, path, "timeOffsets", false, &offs, err) < 0)
    return -1;
  if (!offs)
    return 0;
  l->time_offsets = xmalloc0 (offs->u.object.len * sizeof *l->time_offsets + 1);
  l->n_time_offsets = offs->u.object.len;
  for (size_t i = 0; i < offs->u.object.len; i++)
    {
      struct oci_time_offset *t = &l->time_offsets[i];
      _cleanup_free_ char *p = xasprintf ("%s.timeOffsets.%s", path, offs->u.object.keys[i]);
      yajl_val e = offs->u.object.values[i];
      uint64_t ns = 0;
      t->clock = offs->u.object.keys[i];
      if (strcmp (t->clock, "monotonic") != 0 && strcmp (t->clock, "boottime") != 0)
        return sbx_error_set (err, 0, "%s: unknown clock (expected monotonic or boottime)", p);
      if (json_expect_object (e, p, err) < 0
          || json_get_i64 (e, p, "secs", false, INT64_MIN, INT64_MAX, &t->secs, NULL, err) < 0
          || json_get_u64 (e, p, "nanosecs", false, 999999999, &ns, NULL, err) < 0)
        return -1;
      t->nanosecs = (uint32_t) ns;
    }
  return 0;
}

static int
parse_devices (yajl_val obj, const char *path, struct oci_linux *l, struct sbx_error *err)
{
  yajl_val arr = NULL;
  if (json_get_array (obj, path, "devices", false, &arr, err) < 0)
    return -1;
  if (!arr)
    return 0;
  l->devices = xmalloc0 (arr->u.array.len * sizeof *l->devices + 1);
  l->n_devices = arr->u.array.len;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_device *d = &l->devices[i];
      yajl_val e = arr->u.array.values[i];
      _cleanup_free_ char *p = xasprintf ("%s.devices[%zu]", path, i);
      const char *type = NULL;
      uint64_t v;
      bool need_numbers;
      if (json_expect_object (e, p, err) < 0 || json_get_string (e, p, "type", true, &type, err) < 0
          || json_get_string (e, p, "path", true, &d->path, err) < 0)
        return -1;
      if (strlen (type) != 1 || !strchr ("cbup", type[0]))
        return sbx_error_set (err, 0, "%s.type: '%s' is not one of c, b, u, p", p, type);
      d->type = type[0];
      need_numbers = d->type != 'p';
      if (json_get_i64 (e, p, "major", need_numbers, 0, 0xfff, &d->major, NULL, err) < 0
          || json_get_i64 (e, p, "minor", need_numbers, 0, 0xfffff, &d->minor, NULL, err) < 0)
        return -1;
      /* podman --privileged writes the whole st_mode of the host's node (8612 =
         S_IFCHR | 0644), as runc and crun accept: the file-type bits may be there if
         they are the entry's own type; only the permission bits are used. */
      v = 0;
      if (json_get_u64 (e, p, "fileMode", false, 0177777, &v, &d->has_file_mode, err) < 0)
        return -1;
      if (d->has_file_mode && (v & ~(uint64_t) 07777))
        {
          uint64_t want = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
          if ((v & ~(uint64_t) 07777) != want)
            return sbx_error_set (err, 0, "%s.fileMode: %llu (0%llo) has file-type bits that are not those of type '%c'",
                                  p, (unsigned long long) v, (unsigned long long) v, d->type);
          v &= 07777;
        }
      d->file_mode = v;
      v = 0;
      if (json_get_u64 (e, p, "uid", false, UINT32_MAX, &v, &d->has_uid, err) < 0)
        return -1;
      d->uid = v;
      v = 0;
      if (json_get_u64 (e, p, "gid", false, UINT32_MAX, &v, &d->has_gid, err) < 0)
        return -1;
      d->gid = v;
      if (d->path[0] != '/')
        return sbx_error_set (err, 0, "%s.path: '%s' must be an absolute path", p, d->path);
    }
  return 0;
}

static int
parse_sysctl (yajl_val obj, const char *path, struct oci_linux *l, struct sbx_error *err)
{
  yajl_val map = NULL;
  if (json_get_object (obj, path, "sysctl", false, &map, err) < 0)
    return -1;
  if (!map)
    return 0;
  l->sysctl = xmalloc0 (map->u.object.len * sizeof *l->sysctl + 1);
  l->n_sysctl = map->u.object.len;
  for (size_t i = 0; i < map->u.object.len; i++)
    {
      yajl_val v = map->u.object.values[i];
      if (!v || v->type != yajl_t_string)
        return sbx_error_set (err, 0, "%s.sysctl.%s: expected a string, got %s", path, map->u.object.keys[i],
                              json_type_name (v));
      l->sysctl[i].key = map->u.object.keys[i];
      l->sysctl[i].value = v->u.string;
    }
  return 0;
}

static int
parse_personality (yajl_val obj, const char *path, struct oci_linux *l, struct sbx_error *err)
{
  yajl_val pers = NULL;
  const char *domain = NULL;
  _cleanup_free_ const char **flags = NULL;
  size_t n_flags = 0;
  _cleanup_free_ char *p = xasprintf ("%s.personality", path);
  if (json_get_object (obj, path, "personality", false, &pers, err) < 0)
    return -1;
  if (!pers)
    return 0;
  if (json_get_string (pers, p, "domain", true, &domain, err) < 0
      || json_get_strv (pers, p, "flags", false, &flags, &n_flags, err) < 0)
    return -1;
  if (strcmp (domain, "LINUX") == 0)
    l->personality = PER_LINUX;
  else if (strcmp (domain, "LINUX32") == 0)
    l->personality = PER_LINUX32;
  else
    return sbx_error_set (err, 0, "%s.domain: unknown personality domain '%s'", p, domain);
  if (n_flags > 0)
    return sbx_error_set (err, 0, "%s.flags[0]: unknown personality flag '%s' (no flags are defined)", p, flags[0]);
  l->has_personality = true;
  return 0;
}

/* "0-3,7": each node below OCI_MEMPOLICY_MAX_NODES, ranges ascending. */
static int
parse_node_list (const char *s, const char *what, struct oci_memory_policy *mp, struct sbx_error *err)
{
  const char *c = s;
  if (!*c)
    return sbx_error_set (err, 0, "%s: empty node list", what);
  while (*c)
    {
      char *end;
      unsigned long lo, hi;
      if (*c < '0' || *c > '9')
        return sbx_error_set (err, 0, "%s: '%s' is not a list of nodes such as 0-3,7", what, s);
      lo = hi = strtoul (c, &end, 10);
      if (*end == '-')
        {
          if (end[1] < '0' || end[1] > '9')
            return sbx_error_set (err, 0, "%s: '%s' is not a list of nodes such as 0-3,7", what, s);
          hi = strtoul (end + 1, &end, 10);
        }
      if (hi < lo || hi >= OCI_MEMPOLICY_MAX_NODES)
        return sbx_error_set (err, 0, "%s: '%s': nodes are 0 to %d, ranges ascending", what, s,
                              OCI_MEMPOLICY_MAX_NODES - 1);
      for (unsigned long n = lo; n <= hi; n++)
        mp->nodemask[n / (8 * sizeof (unsigned long))] |= 1UL << (n % (8 * sizeof (unsigned long)));
      if (*end == ',' && end[1])
        end++;
      else if (*end)
        return sbx_error_set (err, 0, "%s: '%s' is not a list of nodes such as 0-3,7", what, s);
      c = end;
    }
  mp->has_nodes = true;
  return 0;
}

/* linux.memoryPolicy: names checked here; whether the kernel takes the combination
 * (nodes it has, flags a mode allows) is set_mempolicy's answer, in the init. */
static int
parse_memory_policy (yajl_val obj, const char *path, struct oci_linux *l, struct sbx_error *err)
{
  yajl_val mp = NULL;
  const char *mode = NULL, *nodes = NULL;
  _cleanup_free_ const char **flags = NULL;
  size_t n_flags = 0;
  _cleanup_free_ char *p = xasprintf ("%s.memoryPolicy", path);
  int m;
  if (json_get_object (obj, path, "memoryPolicy", false, &mp, err) < 0)
    return -1;
  if (!mp)
    return 0;
  if (json_get_string (mp, p, "mode", true, &mode, err) < 0 || json_get_string (mp, p, "nodes", false, &nodes, err) < 0
      || json_get_strv (mp, p, "flags", false, &flags, &n_flags, err) < 0)
    return -1;
  m = sbx_name_index (sbx_mempolicy_modes, sbx_mempolicy_modes_count, mode);
  if (m < 0)
    return sbx_error_set (err, 0, "%s.mode: unknown memory policy '%s'", p, mode);
  l->memory_policy.mode = (unsigned) m;
  for (size_t i = 0; i < n_flags; i++)
    {
      size_t k = 0;
      while (k < sbx_mempolicy_flags_count && strcmp (sbx_mempolicy_flags[k].name, flags[i]) != 0)
        k++;
      if (k == sbx_mempolicy_flags_count)
        return sbx_error_set (err, 0, "%s.flags[%zu]: unknown memory policy flag '%s'", p, i, flags[i]);
      l->memory_policy.mode |= sbx_mempolicy_flags[k].value;
    }
  if (nodes)
    {
      _cleanup_free_ char *what = xasprintf ("%s.nodes", p);
      if (parse_node_list (nodes, what, &l->memory_policy, err) < 0)
        return -1;
    }
  l->memory_policy.present = true;
  return 0;
}

/* Fields of config-linux.md that sbx-oci does not implement: rather than run with
 * less than was asked for, refuse (fail closed). */
static int
refuse_unsupported (yajl_val obj, const char *path, struct sbx_error *err)
{
  static const char *const unsupported[] = { "intelRdt", "netDevices" };
  for (size_t i = 0; i < ARRAY_SIZE (unsupported); i++)
    if (json_member (obj, unsupported[i]))
      return sbx_error_set (err, 0, "%s.%s: not supported by sbx-oci", path, unsupported[i]);
  return 0;
}

int
oci_linux_parse (yajl_val obj, const char *path, const struct oci_parse_ctx *ctx, struct oci_linux *l,
                 struct sbx_error *err)
{
  yajl_val v = NULL;
  (void) ctx;
  if (parse_namespaces (obj, path, l, err) < 0
      || oci_id_mappings_parse (obj, path, "uidMappings", &l->uid_mappings, &l->n_uid_mappings, err) < 0
      || oci_id_mappings_parse (obj, path, "gidMappings", &l->gid_mappings, &l->n_gid_mappings, err) < 0
      || parse_time_offsets (obj, path, l, err) < 0 || parse_devices (obj, path, l, err) < 0
      || json_get_string (obj, path, "cgroupsPath", false, &l->cgroups_path, err) < 0
      || json_get_object (obj, path, "resources", false, &l->resources, err) < 0
      || parse_sysctl (obj, path, l, err) < 0 || json_get_object (obj, path, "seccomp", false, &v, err) < 0
      || json_get_string (obj, path, "rootfsPropagation", false, &l->rootfs_propagation, err) < 0
      || json_get_strv (obj, path, "maskedPaths", false, &l->masked_paths, &l->n_masked_paths, err) < 0
      || json_get_strv (obj, path, "readonlyPaths", false, &l->readonly_paths, &l->n_readonly_paths, err) < 0
      || json_get_string (obj, path, "mountLabel", false, &l->mount_label, err) < 0
      || parse_personality (obj, path, l, err) < 0 || parse_memory_policy (obj, path, l, err) < 0
      || refuse_unsupported (obj, path, err) < 0)
    return -1;
  l->seccomp = v;
  if (l->rootfs_propagation)
    {
      l->rootfs_propagation_flags = sbx_propagation_from_name (l->rootfs_propagation);
      if (!l->rootfs_propagation_flags)
        return sbx_error_set (err, 0, "%s.rootfsPropagation: '%s' is not one of shared, slave, private, unbindable (or rshared, rslave, rprivate, runbindable)",
                              path, l->rootfs_propagation);
    }
  return 0;
}

void
oci_linux_clear (struct oci_linux *l)
{
  free (l->uid_mappings);
  free (l->gid_mappings);
  free (l->time_offsets);
  free (l->devices);
  free (l->sysctl);
  free (l->masked_paths);
  free (l->readonly_paths);
}
