/* The parent <-> container-init protocol: one message per SEQPACKET datagram, a
 * fixed header and a small payload, with named types. Every step of create/run
 * is one of these; an error in the child travels back as SYNC_ERROR and becomes the
 * parent's error, so the user sees one line saying what failed in the sandbox.
 *
 * The order of a create (numbers as in runtime/container/create.c):
 *   1  parent  clone3 -> child (in its new namespaces)
 *   2  parent  cgroup, oom_score_adj, uid/gid maps            -> SYNC_GO
 *   3  child   namespaces joined, mounts done                 -> SYNC_MOUNTS_DONE   (only with hooks)
 *   4  parent  prestart + createRuntime hooks                 -> SYNC_HOOKS_DONE
 *   5  child   createContainer hooks, pivot_root, devices,
 *              sysctl, rlimits, program looked up              -> SYNC_READY
 *   6a create: parent writes state.json + pid file            -> SYNC_COMMITTED;
 *              child drops its parent-death signal             -> SYNC_COMMIT_ACK;
 *              parent exits; child waits on exec.fifo for `start`
 *   6b run:    parent writes state.json                       -> SYNC_START
 *              (no startContainer hook, no seccomp listener: state.json is written
 *              during 3-5, and the child goes on after SYNC_READY without SYNC_START)
 *   7  child   startContainer hooks, user, caps, seccomp, exec (the socket closes on exec: EOF = success)
 */
#ifndef SBX_SYNC_H
#define SBX_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/base/error.h"

enum sync_type
{
  SYNC_GO = 1,
  SYNC_MOUNTS_DONE,
  SYNC_HOOKS_DONE,
  SYNC_READY,
  SYNC_COMMITTED,
  SYNC_START,
  SYNC_ERROR,
  SYNC_USERNS_CREATED, /* two-stage path: the child unshared its user namespace; map it */
  SYNC_MAPS_DONE,
  SYNC_INIT_PID,       /* two-stage path: the intermediate reports the init's pid */
  SYNC_COMMIT_ACK,     /* create: the init no longer dies with the parent; the parent may exit */
  SYNC_IDMAP_FDS,      /* parent -> init: detached idmapped bind mounts (SCM_RIGHTS) */
  SYNC_BIND_SOURCE,    /* init -> parent: mounts[i] (uint32) is a bind source I cannot reach */
  SYNC_BIND_SOURCE_FD, /* parent -> init: its tree, detached (SCM_RIGHTS), or SYNC_ERROR */
  SYNC_DEVICE_NODE,    /* init -> parent: make linux.devices[i] (uint32) for my user namespace */
  SYNC_DEVICE_NODE_FD, /* parent -> init: the node, a detached bind (SCM_RIGHTS), or SYNC_ERROR */
  SYNC_JOIN_FDS,       /* holding init -> parent, after READY: its namespaces and root (join_fds.h) */
};

/* The requests the parent serves while it waits (sync_set_server). */
#define SYNC_IS_REQUEST(t) ((t) == SYNC_BIND_SOURCE || (t) == SYNC_DEVICE_NODE)

struct sync_header
{
  uint32_t type;
  int32_t errnum;
  int32_t exit_hint;
  uint32_t len;
};

#define SYNC_MAX_PAYLOAD 4096

int sync_socketpair (int fds[2], struct sbx_error *err);
int sync_send (int fd, enum sync_type type, const void *payload, size_t len, struct sbx_error *err);
/* Report `e` to the peer; best effort (the child exits right after). */
void sync_send_error (int fd, const struct sbx_error *e);
/* Receive the next message, which must be `type`. A SYNC_ERROR becomes *err; EOF
 * becomes "the container process exited during setup". Payload is optional. */
int sync_expect (int fd, enum sync_type type, void *payload, size_t *len, struct sbx_error *err);
/* After SYNC_START: EOF (the init exec'd, closing its O_CLOEXEC end) is success;
 * SYNC_ERROR is the reason the exec failed. */
int sync_wait_exec (int fd, struct sbx_error *err);
/* Messages that carry fds (SCM_RIGHTS), at most SYNC_MAX_FDS. */
#define SYNC_MAX_FDS 64
int sync_send_fds (int fd, enum sync_type type, const int *fds, size_t n, struct sbx_error *err);
int sync_expect_fds (int fd, enum sync_type type, int *fds, size_t *n, struct sbx_error *err);
const char *sync_type_name (enum sync_type type);
/* Requests the init may make while the parent waits for something else: served inside
 * the parent's sync_expect on fd (one fd at a time: a process creates one container
 * at once). fn answers on fd itself; its failure ends the wait. NULL: none. */
typedef int (*sync_server_fn) (void *data, int fd, const struct sync_header *h, const void *payload,
                               struct sbx_error *err);
void sync_set_server (int fd, sync_server_fn fn, void *data);

#endif
