/* The new mount API (Linux 5.2+, mount_setattr 5.12+) as raw syscalls: glibc 2.36
 * has wrappers but its <sys/mount.h> collides with <linux/mount.h>. */
#ifndef SBX_MOUNTAPI_H
#define SBX_MOUNTAPI_H

#include <fcntl.h>
#include <linux/mount.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static inline int
sys_open_tree (int dfd, const char *path, unsigned int flags)
{
  return (int) syscall (SYS_open_tree, dfd, path, flags);
}

static inline int
sys_move_mount (int from_dfd, const char *from, int to_dfd, const char *to, unsigned int flags)
{
  return (int) syscall (SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static inline int
sys_fsopen (const char *fs, unsigned int flags)
{
  return (int) syscall (SYS_fsopen, fs, flags);
}

static inline int
sys_fsconfig (int fd, unsigned int cmd, const char *key, const void *value, int aux)
{
  return (int) syscall (SYS_fsconfig, fd, cmd, key, value, aux);
}

static inline int
sys_fsmount (int fd, unsigned int flags, unsigned int attr)
{
  return (int) syscall (SYS_fsmount, fd, flags, attr);
}

static inline int
sys_mount_setattr (int dfd, const char *path, unsigned int flags, struct mount_attr *attr)
{
  return (int) syscall (SYS_mount_setattr, dfd, path, flags, attr, sizeof *attr);
}

/* Attach the detached mount `mntfd` onto the object `targetfd` refers to. */
static inline int
attach_mount (int mntfd, int targetfd)
{
  return sys_move_mount (mntfd, "", targetfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

#endif
