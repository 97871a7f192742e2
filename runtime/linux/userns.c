/* User namespace id maps, written by the parent (which is privileged in the
 * namespace that owns the child's new user namespace). */
#include "build-config.h"
#include "runtime/linux/namespaces.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"

bool
userns_self_is_initial (void)
{
  /* The initial user namespace maps every id to itself; any other (rootless podman
     runs the runtime as uid 0 of its own) maps a part. A process cannot tell more
     cheaply: there is no "is initial" flag, and NS_GET_PARENT needs the nsfs ioctl. */
  char buf[128] = { 0 };
  unsigned long inside, outside, size;
  int fd = open ("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return true; /* no /proc: nothing here can tell, assume the host's (as before) */
  return sscanf (buf, "%lu %lu %lu", &inside, &outside, &size) == 3 && inside == 0 && outside == 0
         && size == 4294967295UL;
}

bool
userns_id_mapped (const struct oci_id_mapping *m, size_t n, uint32_t id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && (uint64_t) id < (uint64_t) m[i].container_id + m[i].size)
      return true;
  return false;
}

static int
write_map (pid_t pid, const char *file, const struct oci_id_mapping *m, size_t n, bool as_root,
           struct sbx_error *err)
{
  char path[64];
  _cleanup_free_ char *buf = xmalloc0 (n * 40 + 1);
  size_t len = 0;
  _cleanup_close_ int fd = -1;
  for (size_t i = 0; i < n; i++)
    len += sprintf (buf + len, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sbx_error_set (err, errno, "open %s", path);
  /* The kernel takes the whole map in one write. */
  if (write (fd, buf, len) != (ssize_t) len)
    {
      int e = errno;
      if (!as_root && e == EPERM)
        return sbx_error_set (err, e, "linux.%s: an unprivileged user can only map its own id (one range of size 1)",
                              strcmp (file, "uid_map") == 0 ? "uidMappings" : "gidMappings");
      return sbx_error_set (err, e, "write %s", path);
    }
  return 0;
}

int
userns_write_maps (pid_t pid, const struct oci_config *c, bool as_root, struct sbx_error *err)
{
  const struct oci_linux *l = &c->linux_;
  if (!as_root)
    {
      /* An unprivileged writer must deny setgroups before it may write gid_map. */
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/setgroups", (int) pid);
      _cleanup_close_ int fd = open (path, O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write (fd, "deny", 4) != 4)
        return sbx_error_set (err, errno, "write %s", path);
    }
  if (write_map (pid, "uid_map", l->uid_mappings, l->n_uid_mappings, as_root, err) < 0
      || write_map (pid, "gid_map", l->gid_mappings, l->n_gid_mappings, as_root, err) < 0)
    return -1;
  return 0;
}
