/* Filesystem operations inside an untrusted root.
 *
 * Every path inside the container's rootfs is resolved by the kernel with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): symlinks (absolute ones included)
 * and ".." stay inside the root, whatever the rootfs contains, and a /proc/self/fd
 * magic link cannot lead out. Objects are then acted on through the fd only (mounts
 * with move_mount, checks with fstat/fstatfs), never by re-resolving a path. This is
 * the one mechanism behind the defences against the runc path CVEs in THREATS.md. */
#ifndef SBX_FS_H
#define SBX_FS_H

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/openat2.h>

#include "runtime/base/error.h"

#define RESOLVE_ROOT_FLAGS (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

int sys_openat2 (int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve);

/* Creating an inode in a file system of the container's user namespace (its /dev or
 * /tmp tmpfs) needs an owner mapped there: when container root is not mapped (a
 * sandbox that maps only its user), the init is host root there and the kernel says
 * EOVERFLOW. FS_CREATE(call) then switches the file-system ids to the first mapped
 * user and group, for good (an unmapped id cannot be set again), and retries. The
 * host paths the setup needs (bind sources) are opened before anything is created
 * (mounts_apply), while we still are host root. Use it around every mkdirat,
 * openat(O_CREAT), mknodat and symlinkat of the setup. */
int fs_become_mapped_creator (void);
#define FS_CREATE(call)                                                                                     \
  __extension__ ({                                                                                           \
    int fs_r_ = (call);                                                                                      \
    if (fs_r_ < 0 && errno == EOVERFLOW)                                                                     \
      {                                                                                                      \
        if (fs_become_mapped_creator () == 0)                                                                \
          fs_r_ = (call);                                                                                    \
        else                                                                                                 \
          errno = EOVERFLOW;                                                                                 \
      }                                                                                                      \
    fs_r_;                                                                                                   \
  })

/* Open `path` (absolute or relative, interpreted from the root) inside rootfd. */
int fs_open_in_root (int rootfd, const char *path, int flags, struct sbx_error *err);
/* Whether `path` resolves to something inside rootfd (following links inside it). */
bool fs_exists_in_root (int rootfd, const char *path);
/* Open the directory `path` inside rootfd, creating missing components (mode 0755).
 * Returns an O_PATH|O_DIRECTORY fd. */
int fs_mkdir_in_root (int rootfd, const char *path, mode_t mode, struct sbx_error *err);
/* Open the file `path` inside rootfd as O_PATH, creating an empty regular file (and
 * its parents) when missing. Symlinks, the final component's too, are followed inside
 * the root (a dangling one: its target is created), as runc and crun do. */
int fs_mkfile_in_root (int rootfd, const char *path, struct sbx_error *err);
/* The same, but a symlink as the final component is taken as it is (O_NOFOLLOW):
 * for files the runtime itself places (/dev/console, the sandbox's mount points). */
int fs_mkfile_in_root_nofollow (int rootfd, const char *path, struct sbx_error *err);
/* Split "a/b/c" into the parent fd (created if needed) and the last name. */
int fs_open_parent_in_root (int rootfd, const char *path, char **name, bool create, struct sbx_error *err);

bool fs_is_procfs (int fd);
/* Do two fds name the same inode (e.g. a path that resolved to the root)? */
/* fd is the inode st describes (a stat taken once, compared many times). */
bool fs_is_inode (int fd, const struct stat *st);
bool fs_same_inode (int a, int b);
bool fs_is_dir (int fd);
/* The path of an fd as the kernel sees it (readlink /proc/self/fd/N). */
/* realpath(3) in two syscalls instead of a readlink per component: the path opened
 * (O_PATH | flags), and the kernel asked which path that is (fs_fd_path). NULL with
 * errno set. With fd_out, the fd stays open there. */
char *fs_resolve (const char *path, int flags, int *fd_out);
char *fs_fd_path (int fd);
int fs_write_file_at (int dirfd, const char *name, const char *data, size_t len, struct sbx_error *err);
/* Write `data` to tmp then rename over `name` inside dirfd: readers never see a torn file. */
int fs_write_atomic (int dirfd, const char *name, const char *data, size_t len, mode_t mode, struct sbx_error *err);

/* rm -r of dirfd/name, never following a symlink; -1 if something stayed. */
int fs_remove_tree (int dirfd, const char *name);

/* --pid-file: the pid in decimal, written atomically (a reader never sees half). */
int fs_write_pid_file (const char *path, pid_t pid, struct sbx_error *err);

#endif
