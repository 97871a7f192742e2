/* The words of mounts[].options, through libmount: util-linux's option maps say which
 * MS_* flag each of mount(8)'s words sets or clears ("rw" clears MS_RDONLY), and learn
 * a new one with the kernel. What is ours is what the kernel's flags mean to a
 * runtime that mounts with the new mount API:
 *   - a per-mount flag (MS_RDONLY, MS_NOSUID, ...) is a MOUNT_ATTR_* attribute;
 *   - OCI's recursive forms ("rro", "rnosuid", config.md) are "r" before such a word;
 *   - propagation and bind words, with MS_REC for their "r" forms;
 *   - superblock flags ("sync", "mand", ...) go to the file system;
 *   - OCI's own words that are not mount(8)'s: idmap, ridmap, and crun's tmpcopyup.
 * A word libmount does not know, or maps to a flag not classified here, is not a VFS
 * option: it is the file system's data, as with mount(8). */
#include "build-config.h"
#include "oci/vocab.h"

#include <libmount/libmount.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif

#define MS_PROPAGATION_FLAGS (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE)
/* flags of the superblock, which a new file system takes and a bind shares */
#define MS_SB_FLAGS (MS_SYNCHRONOUS | MS_DIRSYNC | MS_MANDLOCK | MS_LAZYTIME | MS_I_VERSION)

/* The mount attribute (mount_setattr, fsmount) for a per-mount MS_* flag; false for
 * a flag that is not one. MS_RELATIME's attribute is 0: it is the atime field's
 * default value. */
static bool
attr_of_flag (unsigned long flag, uint64_t *attr)
{
  switch (flag)
    {
    case MS_RDONLY: *attr = MOUNT_ATTR_RDONLY; return true;
    case MS_NOSUID: *attr = MOUNT_ATTR_NOSUID; return true;
    case MS_NODEV: *attr = MOUNT_ATTR_NODEV; return true;
    case MS_NOEXEC: *attr = MOUNT_ATTR_NOEXEC; return true;
    case MS_NOATIME: *attr = MOUNT_ATTR_NOATIME; return true;
    case MS_RELATIME: *attr = MOUNT_ATTR_RELATIME; return true;
    case MS_STRICTATIME: *attr = MOUNT_ATTR_STRICTATIME; return true;
    case MS_NODIRATIME: *attr = MOUNT_ATTR_NODIRATIME; return true;
    case MS_NOSYMFOLLOW: *attr = MOUNT_ATTR_NOSYMFOLLOW; return true;
    default: return false;
    }
}

/* What a libmount map entry (its flag, and whether it clears it) means here. */
static bool
classify (unsigned long flag, bool invert, struct sbx_mount_opt_info *o)
{
  uint64_t attr;
  *o = (struct sbx_mount_opt_info){ .ms_flag = flag };
  if (attr_of_flag (flag, &attr))
    {
      o->kind = invert ? MO_ATTR_CLEAR : MO_ATTR_SET;
      o->value = attr;
    }
  else if ((flag & ~(unsigned long) MS_REC) && !(flag & ~(unsigned long) (MS_PROPAGATION_FLAGS | MS_REC)))
    {
      o->kind = flag & MS_REC ? MO_REC_PROPAGATION : MO_PROPAGATION;
      o->value = flag & ~(unsigned long) MS_REC;
    }
  else if (flag == MS_BIND)
    o->kind = MO_BIND;
  else if (flag == (MS_BIND | MS_REC))
    o->kind = MO_RBIND;
  else if (flag == MS_REMOUNT)
    o->kind = MO_REMOUNT;
  else if (flag == 0 || flag == MS_SILENT) /* "defaults"; "silent"/"loud" only quiet the kernel's log */
    o->kind = MO_NOOP;
  else if (!(flag & ~(unsigned long) MS_SB_FLAGS))
    o->kind = invert ? MO_SB_FLAG_CLEAR : MO_SB_FLAG;
  else
    return false;
  return true;
}

/* name in one of libmount's maps, as a whole word (a map's "user[=]" or "comment="
 * takes a value: not one of ours) */
static const struct libmnt_optmap *
find (int map_id, const char *name)
{
  for (const struct libmnt_optmap *m = mnt_get_builtin_optmap (map_id); m && m->name; m++)
    if (m->name[0] == name[0] && strcmp (m->name, name) == 0)
      return m;
  return NULL;
}

static const struct
{
  const char *name;
  enum sbx_mount_opt_kind kind;
} oci_words[] = { { "idmap", MO_IDMAP }, { "ridmap", MO_RIDMAP }, { "tmpcopyup", MO_TMPCOPYUP } };

bool
sbx_mount_opt_lookup (const char *name, struct sbx_mount_opt_info *out)
{
  const struct libmnt_optmap *m;
  if (!name || !*name)
    return false;
  if ((m = find (MNT_LINUX_MAP, name)))
    return classify ((unsigned long) m->id, m->mask & MNT_INVERT, out);
  /* mount(8)'s own words: only those that ask for nothing ("defaults") are ours */
  if ((m = find (MNT_USERSPACE_MAP, name)))
    return m->id == 0 && classify (0, false, out);
  /* "rro", "rnosuid": the recursive form of a per-mount attribute */
  if (name[0] == 'r' && (m = find (MNT_LINUX_MAP, name + 1)) && classify ((unsigned long) m->id, m->mask & MNT_INVERT, out)
      && (out->kind == MO_ATTR_SET || out->kind == MO_ATTR_CLEAR))
    {
      out->kind = out->kind == MO_ATTR_SET ? MO_REC_ATTR_SET : MO_REC_ATTR_CLEAR;
      return true;
    }
  for (size_t i = 0; i < sizeof oci_words / sizeof oci_words[0]; i++)
    if (strcmp (oci_words[i].name, name) == 0)
      {
        *out = (struct sbx_mount_opt_info){ .kind = oci_words[i].kind };
        return true;
      }
  return false;
}

void
sbx_mount_opt_each (void (*fn) (const char *name, void *data), void *data)
{
  struct sbx_mount_opt_info o;
  char rec[64];
  for (int map_id = MNT_LINUX_MAP; map_id <= MNT_USERSPACE_MAP; map_id++)
    for (const struct libmnt_optmap *m = mnt_get_builtin_optmap (map_id); m && m->name; m++)
      if (sbx_mount_opt_lookup (m->name, &o))
        fn (m->name, data);
  for (const struct libmnt_optmap *m = mnt_get_builtin_optmap (MNT_LINUX_MAP); m && m->name; m++)
    if (strlen (m->name) + 2 <= sizeof rec)
      {
        rec[0] = 'r';
        strcpy (rec + 1, m->name);
        if (sbx_mount_opt_lookup (rec, &o) && (o.kind == MO_REC_ATTR_SET || o.kind == MO_REC_ATTR_CLEAR))
          fn (rec, data);
      }
  for (size_t i = 0; i < sizeof oci_words / sizeof oci_words[0]; i++)
    fn (oci_words[i].name, data);
}
