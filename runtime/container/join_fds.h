/* A holding init's namespaces and root as fds it opened itself: how a process of
 * the caller's joins a container whose /proc/PID is closed to it.
 *
 * The init of a `serve` sandbox holds (reaper_hold) and never execs, so its memory
 * stays the host user namespace's and it is not dumpable (so that the sandbox cannot
 * read it). The kernel's ptrace check on /proc/PID/ns/, /proc/PID/root and setns by
 * pidfd then asks for CAP_SYS_PTRACE in the host's user namespace: root has it, a
 * user who runs `serve` does not (EACCES). A process may always open its own: the
 * init opens them once it is in its namespaces and root, and sends them to the
 * runtime that made it (SYNC_JOIN_FDS), which hands them on to whoever joins
 * (exec_opts.join_fds). Each fd says what it is (NS_GET_NSTYPE; the root is the
 * directory), so a list of them needs no other description. */
#ifndef SBX_JOIN_FDS_H
#define SBX_JOIN_FDS_H

#include <stddef.h>

#include "oci/vocab.h"
#include "runtime/base/error.h"

struct join_fds
{
  int ns[SBX_NS_COUNT]; /* by SBX_NS_*; -1 where the kernel has no such namespace */
  int root;             /* O_PATH of the container's root directory */
};

#define JOIN_FDS_MAX (SBX_NS_COUNT + 1)

void join_fds_init (struct join_fds *j);
void join_fds_close (struct join_fds *j);
/* The init: its own namespaces (/proc/self/ns/), then its root ("/"). */
int join_fds_open_namespaces (struct join_fds *j, struct sbx_error *err);
int join_fds_open_root (struct join_fds *j, struct sbx_error *err);
/* The init sends them (and closes its own); its runtime receives them. */
int join_fds_send (int sync_fd, struct join_fds *j, struct sbx_error *err);
int join_fds_receive (int sync_fd, struct join_fds *j, struct sbx_error *err);
/* Flat list of the open ones (at most JOIN_FDS_MAX), to pass on; the count. */
size_t join_fds_list (const struct join_fds *j, int *fds);
/* From such a list: copies of each, sorted by what it is. An fd that is neither a
   namespace nor a directory, a kind given twice, or no root is an error. */
int join_fds_from_list (const int *fds, size_t n, struct join_fds *j, struct sbx_error *err);

#endif
