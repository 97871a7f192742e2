#include "build-config.h"
#include "oci/features.h"

#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "oci/vocab.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"

struct mount_option_gen
{
  yajl_gen g;
  bool failed;
};

static void
gen_mount_option (const char *name, void *data)
{
  struct mount_option_gen *mo = data;
  mo->failed |= gen_string (mo->g, name) != yajl_gen_status_ok;
}

static int
gen_linux (yajl_gen g)
{
  GEN (gen_string (g, "linux"));
  GEN (yajl_gen_map_open (g));

  GEN (gen_string (g, "namespaces"));
  GEN (yajl_gen_array_open (g));
  for (int i = 0; i < SBX_NS_COUNT; i++)
    GEN (gen_string (g, sbx_namespaces[i].oci_name));
  GEN (yajl_gen_array_close (g));

  GEN (gen_string (g, "capabilities"));
  GEN (yajl_gen_array_open (g));
  {
    char names[64][SBX_CAP_NAME_MAX];
    size_t n = sbx_capability_known_names (names);
    for (size_t i = 0; i < n; i++)
      GEN (gen_string (g, names[i]));
  }
  GEN (yajl_gen_array_close (g));

  GEN (gen_string (g, "cgroup"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "v1", true));
  GEN (gen_key_bool (g, "v2", true));
  /* systemd-style cgroupsPath is mapped to cgroupfs; we do not talk to systemd. */
  GEN (gen_key_bool (g, "systemd", false));
  GEN (gen_key_bool (g, "systemdUser", false));
  GEN (gen_key_bool (g, "rdma", true));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "seccomp"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "enabled", true));
  GEN (gen_string (g, "actions"));
  GEN (gen_string_array (g, sbx_seccomp_actions, SCMP_A_COUNT));
  GEN (gen_string (g, "operators"));
  GEN (gen_string_array (g, sbx_seccomp_ops, SCMP_OP_COUNT));
  GEN (gen_string (g, "archs"));
  GEN (yajl_gen_array_open (g));
  /* the ones this build's libseccomp can compile (runtime/linux/seccomp.c refuses the rest) */
  for (size_t i = 0; i < sbx_seccomp_archs_count; i++)
    if (strcmp (sbx_seccomp_archs[i], "SCMP_ARCH_LOONGARCH64") && strcmp (sbx_seccomp_archs[i], "SCMP_ARCH_M68K")
        && strcmp (sbx_seccomp_archs[i], "SCMP_ARCH_SH") && strcmp (sbx_seccomp_archs[i], "SCMP_ARCH_SHEB"))
      GEN (gen_string (g, sbx_seccomp_archs[i]));
  GEN (yajl_gen_array_close (g));
  GEN (gen_string (g, "knownFlags"));
  GEN (gen_string_array (g, sbx_seccomp_flags, sbx_seccomp_flags_count));
  /* passed to seccomp(2) by us, not through libseccomp: all are supported */
  GEN (gen_string (g, "supportedFlags"));
  GEN (gen_string_array (g, sbx_seccomp_flags, sbx_seccomp_flags_count));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "apparmor"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "enabled", true));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "selinux"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "enabled", false));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "intelRdt"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "enabled", false));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "mountExtensions"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_string (g, "idmap"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "enabled", true));
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "memoryPolicy"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_string (g, "modes"));
  GEN (gen_string_array (g, sbx_mempolicy_modes, sbx_mempolicy_modes_count));
  GEN (gen_string (g, "flags"));
  GEN (yajl_gen_array_open (g));
  for (size_t i = 0; i < sbx_mempolicy_flags_count; i++)
    GEN (gen_string (g, sbx_mempolicy_flags[i].name));
  GEN (yajl_gen_array_close (g));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "netDevices"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_bool (g, "enabled", false));
  GEN (yajl_gen_map_close (g));

  GEN (yajl_gen_map_close (g));
  return 0;
gen_fail:
  return -1;
}

char *
oci_features_json (void)
{
  yajl_gen g = gen_new (true);
  const struct scmp_version *v = seccomp_version ();
  char seccomp_ver[32];
  char *out = NULL;
  struct mount_option_gen mo = { .g = g };

  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "ociVersionMin", "1.0.0"));
  GEN (gen_key_string (g, "ociVersionMax", SBX_OCI_VERSION));
  GEN (gen_string (g, "hooks"));
  GEN (gen_string_array (g, sbx_hook_names, SBX_HOOK_COUNT));
  GEN (gen_string (g, "mountOptions"));
  GEN (yajl_gen_array_open (g));
  sbx_mount_opt_each (gen_mount_option, &mo);
  if (mo.failed)
    goto gen_fail;
  GEN (yajl_gen_array_close (g));
  if (gen_linux (g) < 0)
    goto gen_fail;
  GEN (gen_string (g, "annotations"));
  GEN (yajl_gen_map_open (g));
  snprintf (seccomp_ver, sizeof seccomp_ver, "%u.%u.%u", v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);
  GEN (gen_key_string (g, "io.github.seccomp.libseccomp.version", seccomp_ver));
  GEN (gen_key_string (g, "org.sbx-oci.version", PACKAGE_VERSION));
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_map_close (g));
  out = gen_finish (g, NULL);
gen_fail:
  yajl_gen_free (g);
  return out;
}
