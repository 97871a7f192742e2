/* File operations shared by the two cgroup backends (cgroup_fs.c). */
#ifndef SBX_CGROUP_FS_H
#define SBX_CGROUP_FS_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime/base/error.h"

int cgroup_read_pids_at (int dirfd, pid_t **pids, size_t *n, struct sbx_error *err);
int cgroup_write_at (int dirfd, const char *file, const char *value, struct sbx_error *err);
int cgroup_mkdir_path (int rootfd, const char *path, int *owned_from, int *out_fd, struct sbx_error *err);
int cgroup_rmdir_leaf (int rootfd, const char *path);
void cgroup_rmdir_made (int rootfd, const char *path, int owned_from);
/* No task in dirfd's cgroup.procs (or the cgroup is gone). */
bool cgroup_empty (int dirfd);
/* dirfd has a sub-cgroup. */
bool cgroup_has_children (int dirfd);
/* Kill every task in dirfd with SIGKILL and wait (bounded) until it is empty. */
int cgroup_drain (int dirfd, bool use_cgroup_kill, struct sbx_error *err);

#endif
