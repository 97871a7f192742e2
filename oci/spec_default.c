#include "build-config.h"
#include "oci/spec_default.h"

#include "runtime/base/json.h"
#include "runtime/base/util.h"

static const char *const default_caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" };

/* runc's defaults (libcontainer/specconv/example.go): hide kernel state that is not
 * namespaced, and make the rest of /proc's writable knobs read-only. */
const char *const oci_default_masked_paths[] = {
  "/proc/acpi", "/proc/asound",       "/proc/kcore",       "/proc/keys",      "/proc/latency_stats",
  "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
  "/sys/devices/virtual/powercap", NULL,
};
const char *const oci_default_readonly_paths[] = {
  "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

struct mount_def
{
  const char *dest, *type, *source;
  const char *opts[8];
};

static const struct mount_def mounts[] = {
  { "/proc", "proc", "proc", { NULL } },
  { "/dev", "tmpfs", "tmpfs", { "nosuid", "strictatime", "mode=755", "size=65536k", NULL } },
  { "/dev/pts", "devpts", "devpts", { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL } },
  { "/dev/shm", "tmpfs", "shm", { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL } },
  { "/dev/mqueue", "mqueue", "mqueue", { "nosuid", "noexec", "nodev", NULL } },
  { "/sys", "sysfs", "sysfs", { "nosuid", "noexec", "nodev", "ro", NULL } },
  { "/sys/fs/cgroup", "cgroup", "cgroup", { "nosuid", "noexec", "nodev", "relatime", "ro", NULL } },
};

static yajl_gen_status
gen_mapping (yajl_gen g, const char *key, unsigned host_id)
{
  yajl_gen_status st = gen_string (g, key);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_open (g);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_map_open (g);
  if (st == yajl_gen_status_ok)
    st = gen_key_int (g, "containerID", 0);
  if (st == yajl_gen_status_ok)
    st = gen_key_int (g, "hostID", host_id);
  if (st == yajl_gen_status_ok)
    st = gen_key_int (g, "size", 1);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_map_close (g);
  return st == yajl_gen_status_ok ? yajl_gen_array_close (g) : st;
}

char *
oci_default_spec_json (bool rootless, uid_t uid, gid_t gid, size_t *len)
{
  yajl_gen g = gen_new (true);
  char *out = NULL;
  static const char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                     "TERM=xterm" };
  static const char *const args[] = { "sh" };
  static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup" };

  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "ociVersion", SBX_OCI_VERSION));

  GEN (gen_string (g, "process"));
  GEN (yajl_gen_map_open (g));
  /* Not a terminal: the runtime is for non-interactive programs first. */
  GEN (gen_key_bool (g, "terminal", false));
  GEN (gen_string (g, "user"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_int (g, "uid", 0));
  GEN (gen_key_int (g, "gid", 0));
  GEN (yajl_gen_map_close (g));
  GEN (gen_string (g, "args"));
  GEN (gen_string_array (g, args, ARRAY_SIZE (args)));
  GEN (gen_string (g, "env"));
  GEN (gen_string_array (g, env, ARRAY_SIZE (env)));
  GEN (gen_key_string (g, "cwd", "/"));
  GEN (gen_string (g, "capabilities"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_string (g, "bounding"));
  GEN (gen_string_array (g, default_caps, ARRAY_SIZE (default_caps)));
  GEN (gen_string (g, "effective"));
  GEN (gen_string_array (g, default_caps, ARRAY_SIZE (default_caps)));
  GEN (gen_string (g, "permitted"));
  GEN (gen_string_array (g, default_caps, ARRAY_SIZE (default_caps)));
  GEN (yajl_gen_map_close (g));
  GEN (gen_string (g, "rlimits"));
  GEN (yajl_gen_array_open (g));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "type", "RLIMIT_NOFILE"));
  GEN (gen_key_int (g, "hard", 1024));
  GEN (gen_key_int (g, "soft", 1024));
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_array_close (g));
  GEN (gen_key_bool (g, "noNewPrivileges", true));
  GEN (yajl_gen_map_close (g));

  GEN (gen_string (g, "root"));
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "path", "rootfs"));
  GEN (gen_key_bool (g, "readonly", true));
  GEN (yajl_gen_map_close (g));
  GEN (gen_key_string (g, "hostname", "sbx"));

  GEN (gen_string (g, "mounts"));
  GEN (yajl_gen_array_open (g));
  for (size_t i = 0; i < ARRAY_SIZE (mounts); i++)
    {
      GEN (yajl_gen_map_open (g));
      GEN (gen_key_string (g, "destination", mounts[i].dest));
      GEN (gen_key_string (g, "type", mounts[i].type));
      GEN (gen_key_string (g, "source", mounts[i].source));
      GEN (gen_string (g, "options"));
      GEN (yajl_gen_array_open (g));
      for (size_t j = 0; mounts[i].opts[j]; j++)
        if (!(rootless && str_eq (mounts[i].opts[j], "gid=5"))) /* group 5 is not mapped */
          GEN (gen_string (g, mounts[i].opts[j]));
      GEN (yajl_gen_array_close (g));
      GEN (yajl_gen_map_close (g));
    }
  GEN (yajl_gen_array_close (g));

  GEN (gen_string (g, "linux"));
  GEN (yajl_gen_map_open (g));
  if (rootless)
    {
      GEN (gen_mapping (g, "uidMappings", uid));
      GEN (gen_mapping (g, "gidMappings", gid));
    }
  GEN (gen_string (g, "namespaces"));
  GEN (yajl_gen_array_open (g));
  if (rootless)
    {
      GEN (yajl_gen_map_open (g));
      GEN (gen_key_string (g, "type", "user"));
      GEN (yajl_gen_map_close (g));
    }
  for (size_t i = 0; i < ARRAY_SIZE (ns); i++)
    {
      GEN (yajl_gen_map_open (g));
      GEN (gen_key_string (g, "type", ns[i]));
      GEN (yajl_gen_map_close (g));
    }
  GEN (yajl_gen_array_close (g));
  GEN (gen_string (g, "maskedPaths"));
  GEN (gen_string_array (g, oci_default_masked_paths, ARRAY_SIZE (oci_default_masked_paths) - 1));
  GEN (gen_string (g, "readonlyPaths"));
  GEN (gen_string_array (g, oci_default_readonly_paths, ARRAY_SIZE (oci_default_readonly_paths) - 1));
  GEN (yajl_gen_map_close (g));

  GEN (yajl_gen_map_close (g));
  out = gen_finish (g, len);
gen_fail:
  yajl_gen_free (g);
  return out;
}
