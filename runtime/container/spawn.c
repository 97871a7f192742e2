#include "build-config.h"
#include "runtime/container/spawn.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/devices_host.h"
#include "runtime/linux/idmap.h"
#include "runtime/linux/mountapi.h"
#include "runtime/linux/sync.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

static pid_t
sys_clone3 (struct clone_args *args)
{
  return (pid_t) syscall (SYS_clone3, args, sizeof *args);
}

int
spawn_enter_ns_for_children (const char *proc_name, int fd, int flag, int *saved, struct sbx_error *err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/ns/%s", proc_name);
  *saved = open (path, O_RDONLY | O_CLOEXEC);
  if (*saved < 0)
    return sbx_error_set (err, errno, "open %s", path);
  if (fd >= 0 && setns (fd, flag) < 0)
    return sbx_error_set (err, errno, "setns %s namespace", proc_name);
  return 0;
}

void
spawn_restore_ns (int *saved, int flag)
{
  if (*saved >= 0)
    {
      (void) !setns (*saved, flag);
      close (*saved);
      *saved = -1;
    }
}

int
spawn_init (struct init_args *a, struct cgroup *cg, struct spawned *s, struct sbx_error *err)
{
  int sv[2];
  int saved_pid = -1, saved_time = -1;
  int pidfd = -1;
  struct clone_args args = { 0 };
  pid_t pid;
  const struct ns_plan *ns = a->ns;

  s->pid = -1;
  s->pidfd = -1;
  s->sync_fd = -1;
  if (sync_socketpair (sv, err) < 0)
    return -1;

  if (ns->join_fd[SBX_NS_PID] >= 0
      && spawn_enter_ns_for_children ("pid", ns->join_fd[SBX_NS_PID], CLONE_NEWPID, &saved_pid, err) < 0)
    goto fail;
  if (ns->timens_in_parent)
    {
      if (spawn_enter_ns_for_children ("time", -1, 0, &saved_time, err) < 0)
        goto fail;
      if (unshare (CLONE_NEWTIME) < 0)
        {
          sbx_error_set (err, errno, "unshare time namespace");
          goto fail;
        }
      if (ns_write_time_offsets (a->config, err) < 0)
        goto fail;
    }

  args.flags = CLONE_PIDFD | (uint64_t) (unsigned) ns->clone_flags;
  args.pidfd = (uint64_t) (uintptr_t) &pidfd;
  args.exit_signal = SIGCHLD;
  if (cg->mode == CGROUP_MODE_UNIFIED && cg->v2_dirfd >= 0 && !cg->no_clone_into && !ns->two_stage)
    {
      /* Born in its cgroup: no cgroup.procs write, and a cgroup namespace created by
       * this same clone3 is rooted at the container's cgroup. */
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t) cg->v2_dirfd;
    }
  /* v1: the init joins by itself, first thing (cgroup_v1.c says why); the two-stage
     path forks the init later, and a pids limit must not stop that fork. */
  a->cgroup_self_join = cg->ops && cg->ops->enter_self && !(args.flags & CLONE_INTO_CGROUP) && !ns->two_stage
                       && !cg->systemd_unit; /* systemd moves it (cgroup_systemd.c) */
  pid = sys_clone3 (&args);
  if (pid < 0)
    {
      sbx_error_set (err, errno, "clone3");
      goto fail;
    }
  if (pid == 0)
    {
      close (sv[0]);
      a->sync_fd = sv[1];
      init_main (a);
    }
  spawn_restore_ns (&saved_pid, CLONE_NEWPID);
  spawn_restore_ns (&saved_time, CLONE_NEWTIME);
  close (sv[1]);
  s->pid = pid;
  s->pidfd = pidfd;
  s->sync_fd = sv[0];
  s->in_cgroup = (args.flags & CLONE_INTO_CGROUP) != 0 || a->cgroup_self_join;
  return 0;

fail:
  spawn_restore_ns (&saved_pid, CLONE_NEWPID);
  spawn_restore_ns (&saved_time, CLONE_NEWTIME);
  close (sv[0]);
  close (sv[1]);
  return -1;
}

int
spawn_write_oom_score_adj (pid_t pid, int value, struct sbx_error *err)
{
  char path[64], buf[16];
  _cleanup_close_ int fd = -1;
  int n = snprintf (buf, sizeof buf, "%d", value);
  snprintf (path, sizeof path, "/proc/%d/oom_score_adj", (int) pid);
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write (fd, buf, n) != n)
    return sbx_error_set (err, errno, "process.oomScoreAdj: set %d", value);
  return 0;
}

static int
adopt_init (struct spawned *s, struct sbx_error *err)
{
  int32_t pid = 0;
  size_t len = sizeof pid;
  int pidfd;
  if (sync_expect (s->sync_fd, SYNC_INIT_PID, &pid, &len, err) < 0)
    return -1;
  if (len != sizeof pid || pid <= 0)
    return sbx_error_set (err, EPROTO, "sync: bad init pid");
  /* The intermediate process is done; the init (its child) waits for us, so its pid
   * cannot be recycled before pidfd_open. */
  waitpid (s->pid, NULL, 0);
  close (s->pidfd);
  s->pid = pid;
  s->pidfd = -1;
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return sbx_error_set (err, errno, "pidfd_open %d", pid);
  s->pidfd = pidfd;
  return 0;
}

static int
send_idmapped_mounts (struct init_args *a, struct spawned *s, struct sbx_error *err)
{
  size_t n = a->config->n_mounts, k = 0;
  _cleanup_free_ int *fds = xmalloc0 ((n + 1) * sizeof (int));
  _cleanup_free_ int *packed = xmalloc0 ((n + 1) * sizeof (int));
  int ret = -1;
  if (idmap_prepare (a->config, a->mount_plans, a->bundle, s->pid, fds, err) == 0)
    {
      for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
          packed[k++] = fds[i];
      ret = sync_send_fds (s->sync_fd, SYNC_IDMAP_FDS, packed, k, err);
    }
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  return ret;
}

/* The init, in its user namespace, could not reach a bind source (a host directory
   on the way its mapped root may not search: crun and runc open sources with the
   host's credentials). The parent, which has them, clones the tree and hands it over
   detached, as for an idmapped mount. Asked only on that failure, so a run whose
   sources the container can reach pays nothing. */
static int
serve_bind_source (const struct init_args *a, int fd, uint32_t i, struct sbx_error *err)
{
  int tree;
  _cleanup_free_ char *src = NULL;
  struct sbx_error e = { 0 };
  if (i >= a->config->n_mounts || !a->mount_plans[i].bind || a->mount_plans[i].idmap)
    return sbx_error_set (err, EPROTO, "sync: bind-source request for mounts[%u]", (unsigned) i);
  src = a->config->mounts[i].source[0] == '/' ? xstrdup (a->config->mounts[i].source)
                                               : xasprintf ("%s/%s", a->bundle, a->config->mounts[i].source);
  tree = sys_open_tree (AT_FDCWD, src,
                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (a->mount_plans[i].recursive ? AT_RECURSIVE : 0));
  if (tree < 0)
    {
      sbx_error_set (&e, errno, "open_tree %s", a->config->mounts[i].source);
      sync_send_error (fd, &e);
      sbx_error_clear (&e);
      return 0; /* the init reports it, naming the mount */
    }
  if (sync_send_fds (fd, SYNC_BIND_SOURCE_FD, &tree, 1, err) < 0)
    {
      close (tree);
      return -1;
    }
  close (tree);
  return 0;
}

/* The init, in its user namespace, cannot make a device node that works there: the
   parent makes it (devices_host.h). An error goes back for the init to report. */
static int
serve_device_node (const struct init_args *a, int fd, uint32_t i, struct sbx_error *err)
{
  struct sbx_error e = { 0 };
  int node;
  if (i >= a->config->linux_.n_devices)
    return sbx_error_set (err, EPROTO, "sync: device-node request for linux.devices[%u]", (unsigned) i);
  node = devices_host_make_node (a->config, i, &e);
  if (node < 0)
    {
      sync_send_error (fd, &e);
      sbx_error_clear (&e);
      return 0;
    }
  if (sync_send_fds (fd, SYNC_DEVICE_NODE_FD, &node, 1, err) < 0)
    {
      close (node);
      return -1;
    }
  close (node);
  return 0;
}

/* What the init may ask of the parent during its setup (sync_set_server). */
static int
serve_request (void *data, int fd, const struct sync_header *h, const void *payload, struct sbx_error *err)
{
  uint32_t i;
  if (h->len != sizeof i)
    return sbx_error_set (err, EPROTO, "sync: malformed %s request", sync_type_name (h->type));
  memcpy (&i, payload, sizeof i);
  if (h->type == SYNC_DEVICE_NODE)
    return serve_device_node (data, fd, i, err);
  return serve_bind_source (data, fd, i, err);
}

int
spawn_setup_child (struct init_args *a, struct cgroup *cg, struct spawned *s, struct sbx_error *err)
{
  const struct oci_process *p = a->config->process;
  const struct ns_plan *ns = a->ns;
  if (cg->ops && !s->in_cgroup && cg->ops->enter (cg, s->pid, err) < 0)
    return -1;
  if (p && p->has_oom_score_adj && spawn_write_oom_score_adj (s->pid, p->oom_score_adj, err) < 0)
    return -1;
  if (ns->userns && !ns->two_stage && userns_write_maps (s->pid, a->config, a->as_root, err) < 0)
    return -1;
  if (ns->userns)
    sync_set_server (s->sync_fd, serve_request, a); /* until the init is ready (create.c) */
  if (sync_send (s->sync_fd, SYNC_GO, NULL, 0, err) < 0)
    return -1;
  if (ns->two_stage)
    {
      if (ns->unshare_flags & CLONE_NEWUSER)
        {
          if (sync_expect (s->sync_fd, SYNC_USERNS_CREATED, NULL, NULL, err) < 0
              || userns_write_maps (s->pid, a->config, a->as_root, err) < 0
              || sync_send (s->sync_fd, SYNC_MAPS_DONE, NULL, 0, err) < 0)
            return -1;
        }
      if ((ns->unshare_flags & CLONE_NEWPID) && adopt_init (s, err) < 0)
        return -1;
    }
  if (idmap_needed (a->config, a->mount_plans) && send_idmapped_mounts (a, s, err) < 0)
    return -1;
  return 0;
}

void
spawn_kill (struct spawned *s)
{
  if (s->pid <= 0)
    return;
  if (s->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
  else
    kill (s->pid, SIGKILL);
  waitpid (s->pid, NULL, 0);
  s->pid = -1;
}
