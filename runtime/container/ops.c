/* start, kill, delete, state: operations on an existing container, found through
 * its state dir. Each takes the state dir's lock, so two of them on the same
 * container run one after the other. */
#include "build-config.h"
#include "runtime/container/container.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks/hooks.h"
#include "oci/config.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/container/load.h"
#include "runtime/container/statedir.h"

/* The config snapshot, parsed only when hooks need it. */
static struct oci_config *
load_snapshot (struct sbx_ctx *ctx, int state_fd, struct sbx_error *err)
{
  struct oci_parse_ctx pctx = { 0 };
  (void) ctx;
  return oci_config_load (state_fd, CONFIG_SNAPSHOT, &pctx, err);
}

static int
run_hooks_from_snapshot (struct sbx_ctx *ctx, struct loaded *l, enum sbx_hook_kind kind, const char *status,
                         struct sbx_error *err)
{
  struct oci_config *cfg;
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  int r;
  if (!(l->state.hooks_mask & (1u << kind)))
    return 0;
  cfg = load_snapshot (ctx, l->state_fd, err);
  if (!cfg)
    return -1;
  json = oci_state_public_json (&l->state, status, false, &len);
  r = hooks_run (&cfg->hooks[kind], sbx_hook_names[kind], json, len, err);
  oci_config_free (cfg);
  return r;
}

char *
container_state (struct sbx_ctx *ctx, const char *id, struct sbx_error *err)
{
  struct loaded l;
  char *out = NULL;
  if (container_load (ctx, id, false, &l, err) == 0)
    {
      out = oci_state_public_json (&l.state, container_status_name (l.status), true, NULL);
      if (!out)
        sbx_error_set (err, 0, "cannot serialise the state");
    }
  loaded_free (&l);
  return out;
}

int
container_start (struct sbx_ctx *ctx, const char *id, struct sbx_error *err)
{
  struct loaded l;
  _cleanup_close_ int fifo = -1;
  int ret = -1;
  if (container_load (ctx, id, true, &l, err) < 0)
    goto out;
  /* runtime.md: start of a container that is not created has no effect and errors. */
  if (l.status != STATUS_CREATED)
    {
      sbx_error_set (err, 0, "cannot start container %s: it is %s, not created", id, container_status_name (l.status));
      goto out;
    }
  if (!l.state.has_process)
    {
      sbx_error_set (err, 0, "cannot start container %s: its config.json has no process", id);
      goto out;
    }
  fifo = openat (l.state_fd, EXEC_FIFO, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fifo < 0)
    {
      sbx_error_set (err, errno, "cannot start container %s: open exec.fifo", id);
      goto out;
    }
  if (write (fifo, "0", 1) != 1)
    {
      sbx_error_set (err, errno, "cannot start container %s: write exec.fifo", id);
      goto out;
    }
  unlinkat (l.state_fd, EXEC_FIFO, 0);
  if (run_hooks_from_snapshot (ctx, &l, SBX_HOOK_POSTSTART, "running", err) < 0)
    {
      /* runtime.md step 9: a failing poststart hook is an error, the container is
         stopped, and the lifecycle goes on at step 12: it is destroyed (poststop
         hooks included), as a delete would. Nothing is left for the caller. */
      struct sbx_error e2 = { 0 };
      kill (l.state.pid, SIGKILL);
      loaded_free (&l);
      if (container_delete (ctx, id, true, &e2) < 0)
        sbx_warn (ctx, "after the failed poststart hook: %s", e2.msg);
      sbx_error_clear (&e2);
      return -1;
    }
  ret = 0;
out:
  loaded_free (&l);
  return ret;
}

int
container_kill (struct sbx_ctx *ctx, const char *id, int sig, bool all, struct sbx_error *err)
{
  struct loaded l;
  struct cgroup cg;
  int ret = -1;
  cgroup_init (&cg, CGROUP_MODE_NONE, NULL);
  if (container_load (ctx, id, true, &l, err) < 0)
    goto out;
  if (l.status == STATUS_STOPPED && all)
    {
      /* The init is gone, but with a shared or host pid namespace its children may
       * live on in the cgroup: containerd's shim sends `kill --all ID 9` after the init
       * exits and keeps the task (and its stdio) until that succeeds. As runc: signal
       * what is left, and succeed when the cgroup is already gone. */
      if (cgroup_open_from_state (&l.state, &cg, err) < 0)
        {
          sbx_error_clear (err);
          ret = 0;
          goto out;
        }
      /* (a kept cgroup, `serve`'s, may be another sandbox's by now) */
      ret = cg.ops && !cgroup_path_is_kept (cg.path) ? cg.ops->kill_all (&cg, sig, err) : 0;
      goto out;
    }
  if (l.status == STATUS_STOPPED)
    {
      /* "container not running": the words containerd's shim matches to treat the
       * kill of an exited process as done rather than as a failure. */
      sbx_error_set (err, 0, "cannot kill container %s: container not running (it is stopped)", id);
      goto out;
    }
  if (all)
    {
      if (cgroup_open_from_state (&l.state, &cg, err) < 0)
        goto out;
      if (cg.ops)
        {
          ret = cg.ops->kill_all (&cg, sig, err);
          goto out;
        }
      /* No cgroup: the init is all we can reach (with a pid namespace, SIGKILL to it
       * takes every process down with it). */
    }
  {
    _cleanup_close_ int pidfd = container_open_init_pidfd (&l.state, err);
    if (pidfd < 0)
      goto out;
    if (syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
      {
        sbx_error_set (err, errno, "kill container %s", id);
        goto out;
      }
  }
  ret = 0;
out:
  cgroup_close (&cg);
  loaded_free (&l);
  return ret;
}

static int
wait_gone (const struct sbx_state *s, int timeout_ms)
{
  _cleanup_close_ int pidfd = (int) syscall (SYS_pidfd_open, s->pid, 0);
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
  if (pidfd < 0 || !state_init_alive (s))
    return 0;
  return poll (&pfd, 1, timeout_ms) > 0 ? 0 : -1;
}

int
container_delete (struct sbx_ctx *ctx, const char *id, bool force, struct sbx_error *err)
{
  struct loaded l;
  struct cgroup cg;
  struct sbx_error e2 = { 0 };
  int ret = -1;
  bool kept;
  cgroup_init (&cg, CGROUP_MODE_NONE, NULL);
  if (container_load (ctx, id, true, &l, err) < 0)
    {
      if (l.state_fd >= 0 && statedir_half_created (l.state_fd) && statedir_still_named (l.root_fd, l.state_fd, id))
        {
          /* No state.json: the create died before recording one (its init died with
           * it: the parent-death signal). Remove what is left: its cgroup, if it made
           * one (recorded before it did), and the dir. (Only while the id still names
           * the dir we locked: a new create may have claimed the id since.) */
          sbx_error_clear (err);
          statedir_remove_recorded_cgroup (l.state_fd);
          ret = statedir_remove (l.root_fd, id, err);
        }
      else if (force && strstr (err->msg ? err->msg : "", "does not exist"))
        {
          sbx_error_clear (err); /* runc: delete --force of a missing container succeeds */
          ret = 0;
        }
      goto out;
    }
  if ((l.status == STATUS_RUNNING || l.status == STATUS_PAUSED) && !force)
    {
      /* runtime.md: deleting a container that is not stopped MUST have no effect.
         A created one is the exception runc and crun make, and clients count on it
         (a create whose start never comes is cleaned up with a plain delete): its
         process has not run a line of the program yet. */
      sbx_error_set (err, 0, "cannot delete container %s: it is %s (stop it first, or use --force)", id,
                     container_status_name (l.status));
      goto out;
    }
  if (cgroup_open_from_state (&l.state, &cg, err) < 0)
    goto out;
  /* A kept cgroup (`serve`'s, cgroup_kept.c) is the slot's: while this container's
     init lives, it is this container's (a slot is given again only once its worker
     has ended the container), and its tasks are killed through it as any others
     (a frozen task dies only thawed); it is never removed here, and once the init is
     gone it may be another sandbox's, which a stale record must not touch. */
  kept = cgroup_path_is_kept (cg.path);
  if (l.status != STATUS_STOPPED)
    {
      if (cg.ops)
        cg.ops->kill_all (&cg, SIGKILL, &e2);
      else
        kill (l.state.pid, SIGKILL);
      sbx_error_clear (&e2);
      kill (l.state.pid, SIGKILL);
      if (wait_gone (&l.state, 5000) < 0)
        {
          sbx_error_set (err, EBUSY, "cannot delete container %s: its process did not exit after SIGKILL", id);
          goto out;
        }
    }
  if (cg.systemd_unit ? cgroup_systemd_end (&cg, err) < 0 : (cg.ops && !kept && cg.ops->destroy (&cg, err) < 0))
    goto out;
  if (run_hooks_from_snapshot (ctx, &l, SBX_HOOK_POSTSTOP, "stopped", &e2) < 0)
    {
      /* runtime.md step 13: a failing poststop hook is a warning. */
      sbx_warn (ctx, "poststop hook: %s", e2.msg);
      sbx_error_clear (&e2);
    }
  ret = statedir_remove (l.root_fd, id, err);
out:
  cgroup_close (&cg);
  loaded_free (&l);
  return ret;
}
