/* The mount-option words as the runtime reads them through libmount's maps
 * (oci/vocab_mount.c): every word config.md lists means what the spec says, every
 * word of libmount's Linux map is classified, and words that are no VFS option stay
 * the file system's data. */
#include "build-config.h"

#include <libmount/libmount.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "oci/vocab.h"

#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif

static const struct
{
  const char *name;
  enum sbx_mount_opt_kind kind;
  uint64_t value;
} spec[] = {
  { "defaults", MO_NOOP, 0 },
  { "silent", MO_NOOP, 0 },
  { "loud", MO_NOOP, 0 },
  { "ro", MO_ATTR_SET, MOUNT_ATTR_RDONLY },
  { "rw", MO_ATTR_CLEAR, MOUNT_ATTR_RDONLY },
  { "nosuid", MO_ATTR_SET, MOUNT_ATTR_NOSUID },
  { "suid", MO_ATTR_CLEAR, MOUNT_ATTR_NOSUID },
  { "nodev", MO_ATTR_SET, MOUNT_ATTR_NODEV },
  { "dev", MO_ATTR_CLEAR, MOUNT_ATTR_NODEV },
  { "noexec", MO_ATTR_SET, MOUNT_ATTR_NOEXEC },
  { "exec", MO_ATTR_CLEAR, MOUNT_ATTR_NOEXEC },
  { "noatime", MO_ATTR_SET, MOUNT_ATTR_NOATIME },
  { "atime", MO_ATTR_CLEAR, MOUNT_ATTR_NOATIME },
  { "relatime", MO_ATTR_SET, MOUNT_ATTR_RELATIME },
  { "norelatime", MO_ATTR_CLEAR, MOUNT_ATTR_RELATIME },
  { "strictatime", MO_ATTR_SET, MOUNT_ATTR_STRICTATIME },
  { "nostrictatime", MO_ATTR_CLEAR, MOUNT_ATTR_STRICTATIME },
  { "nodiratime", MO_ATTR_SET, MOUNT_ATTR_NODIRATIME },
  { "diratime", MO_ATTR_CLEAR, MOUNT_ATTR_NODIRATIME },
  { "nosymfollow", MO_ATTR_SET, MOUNT_ATTR_NOSYMFOLLOW },
  { "symfollow", MO_ATTR_CLEAR, MOUNT_ATTR_NOSYMFOLLOW },
  { "rro", MO_REC_ATTR_SET, MOUNT_ATTR_RDONLY },
  { "rrw", MO_REC_ATTR_CLEAR, MOUNT_ATTR_RDONLY },
  { "rnosuid", MO_REC_ATTR_SET, MOUNT_ATTR_NOSUID },
  { "rsuid", MO_REC_ATTR_CLEAR, MOUNT_ATTR_NOSUID },
  { "rnodev", MO_REC_ATTR_SET, MOUNT_ATTR_NODEV },
  { "rdev", MO_REC_ATTR_CLEAR, MOUNT_ATTR_NODEV },
  { "rnoexec", MO_REC_ATTR_SET, MOUNT_ATTR_NOEXEC },
  { "rexec", MO_REC_ATTR_CLEAR, MOUNT_ATTR_NOEXEC },
  { "rnoatime", MO_REC_ATTR_SET, MOUNT_ATTR_NOATIME },
  { "ratime", MO_REC_ATTR_CLEAR, MOUNT_ATTR_NOATIME },
  { "rrelatime", MO_REC_ATTR_SET, MOUNT_ATTR_RELATIME },
  { "rnorelatime", MO_REC_ATTR_CLEAR, MOUNT_ATTR_RELATIME },
  { "rstrictatime", MO_REC_ATTR_SET, MOUNT_ATTR_STRICTATIME },
  { "rnostrictatime", MO_REC_ATTR_CLEAR, MOUNT_ATTR_STRICTATIME },
  { "rnodiratime", MO_REC_ATTR_SET, MOUNT_ATTR_NODIRATIME },
  { "rdiratime", MO_REC_ATTR_CLEAR, MOUNT_ATTR_NODIRATIME },
  { "rnosymfollow", MO_REC_ATTR_SET, MOUNT_ATTR_NOSYMFOLLOW },
  { "rsymfollow", MO_REC_ATTR_CLEAR, MOUNT_ATTR_NOSYMFOLLOW },
  { "sync", MO_SB_FLAG, 0 },
  { "async", MO_SB_FLAG_CLEAR, 0 },
  { "dirsync", MO_SB_FLAG, 0 },
  { "mand", MO_SB_FLAG, 0 },
  { "nomand", MO_SB_FLAG_CLEAR, 0 },
  { "lazytime", MO_SB_FLAG, 0 },
  { "nolazytime", MO_SB_FLAG_CLEAR, 0 },
  { "iversion", MO_SB_FLAG, 0 },
  { "noiversion", MO_SB_FLAG_CLEAR, 0 },
  { "private", MO_PROPAGATION, MS_PRIVATE },
  { "rprivate", MO_REC_PROPAGATION, MS_PRIVATE },
  { "shared", MO_PROPAGATION, MS_SHARED },
  { "rshared", MO_REC_PROPAGATION, MS_SHARED },
  { "slave", MO_PROPAGATION, MS_SLAVE },
  { "rslave", MO_REC_PROPAGATION, MS_SLAVE },
  { "unbindable", MO_PROPAGATION, MS_UNBINDABLE },
  { "runbindable", MO_REC_PROPAGATION, MS_UNBINDABLE },
  { "bind", MO_BIND, 0 },
  { "rbind", MO_RBIND, 0 },
  { "remount", MO_REMOUNT, 0 },
  { "idmap", MO_IDMAP, 0 },
  { "ridmap", MO_RIDMAP, 0 },
  { "tmpcopyup", MO_TMPCOPYUP, 0 },
};

/* file-system data, misspellings, and mount(8)'s words that ask for something */
static const char *const not_vfs[] = { "mode=755", "size=1k", "rnoauto", "noauto", "nofail", "user", "rremount",
                                       "rbind2", "r", "", "RO", "nosuid ", "rrbind" };

int
main (void)
{
  int failures = 0, classified = 0;
  for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++)
    {
      struct sbx_mount_opt_info o;
      if (!sbx_mount_opt_lookup (spec[i].name, &o))
        {
          printf ("FAIL: config.md option '%s' is not recognised\n", spec[i].name);
          failures++;
        }
      else if (o.kind != spec[i].kind || o.value != spec[i].value)
        {
          printf ("FAIL: '%s': kind %d value %#llx, expected kind %d value %#llx\n", spec[i].name, (int) o.kind,
                  (unsigned long long) o.value, (int) spec[i].kind, (unsigned long long) spec[i].value);
          failures++;
        }
    }
  for (const struct libmnt_optmap *m = mnt_get_builtin_optmap (MNT_LINUX_MAP); m && m->name; m++)
    {
      struct sbx_mount_opt_info o;
      if (!sbx_mount_opt_lookup (m->name, &o) || o.ms_flag != (uint64_t) m->id)
        {
          printf ("FAIL: libmount's '%s' (flag %#x) is not classified\n", m->name, m->id);
          failures++;
        }
      classified++;
    }
  for (size_t i = 0; i < sizeof not_vfs / sizeof not_vfs[0]; i++)
    {
      struct sbx_mount_opt_info o;
      if (sbx_mount_opt_lookup (not_vfs[i], &o))
        {
          printf ("FAIL: '%s' is taken for a VFS option (kind %d)\n", not_vfs[i], (int) o.kind);
          failures++;
        }
    }
  printf ("mount options: %zu spec words, %d libmount words, %zu non-options checked, %d failures\n",
          sizeof spec / sizeof spec[0], classified, sizeof not_vfs / sizeof not_vfs[0], failures);
  return failures ? 1 : 0;
}
