/* The mount-option vocabulary (oci/vocab.c) must agree with util-linux's: every
 * option libmount's MNT_LINUX_MAP knows maps to the same MS_* flag and direction in
 * our table, and every option config.md lists is recognised. */
#include "build-config.h"

#include <libmount/libmount.h>
#include <stdio.h>
#include <string.h>

#include "oci/vocab.h"

static const char *const spec_options[] = {
  "async", "atime", "bind", "defaults", "dev", "diratime", "dirsync", "exec", "iversion", "lazytime", "loud",
  "mand", "noatime", "nodev", "nodiratime", "noexec", "noiversion", "nolazytime", "nomand", "norelatime",
  "nostrictatime", "nosuid", "nosymfollow", "private", "ratime", "rbind", "rdev", "rdiratime", "relatime",
  "remount", "rexec", "rnoatime", "rnodiratime", "rnoexec", "rnorelatime", "rnostrictatime", "rnosuid",
  "rnosymfollow", "ro", "rprivate", "rrelatime", "rro", "rrw", "rshared", "rslave", "rstrictatime", "rsuid",
  "rsymfollow", "runbindable", "rw", "shared", "silent", "slave", "strictatime", "suid", "symfollow", "sync",
  "tmpcopyup", "unbindable", "idmap", "ridmap", "rnodev",
};

int
main (void)
{
  const struct libmnt_optmap *map = mnt_get_builtin_optmap (MNT_LINUX_MAP);
  int failures = 0, checked = 0;
  for (; map && map->name; map++)
    {
      char name[64];
      const struct sbx_mount_opt_info *o;
      snprintf (name, sizeof name, "%.*s", (int) strcspn (map->name, "="), map->name);
      o = sbx_mount_opt_lookup (name);
      checked++;
      if (!o)
        {
          printf ("FAIL: libmount knows '%s' but oci/vocab.c does not\n", name);
          failures++;
          continue;
        }
      if (o->ms_flag != (unsigned long) map->id || o->ms_invert != !!(map->mask & MNT_INVERT))
        {
          printf ("FAIL: '%s': libmount says flag 0x%x%s, we say 0x%llx%s\n", name, map->id,
                  (map->mask & MNT_INVERT) ? " (clears)" : "", (unsigned long long) o->ms_flag,
                  o->ms_invert ? " (clears)" : "");
          failures++;
        }
    }
  for (size_t i = 0; i < sizeof spec_options / sizeof spec_options[0]; i++)
    if (!sbx_mount_opt_lookup (spec_options[i]))
      {
        printf ("FAIL: config.md option '%s' is not recognised\n", spec_options[i]);
        failures++;
      }
  printf ("mount options: %d libmount options and %zu spec options checked, %d failures\n", checked,
          sizeof spec_options / sizeof spec_options[0], failures);
  return failures ? 1 : 0;
}
