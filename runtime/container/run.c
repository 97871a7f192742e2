/* run: create, start and wait in the foreground (runtime.md steps 10-13), and what a
 * watched run (run_watch: `sbx-oci python`) reads of it: the OOM kills, the cgroup's
 * numbers, the deadline, the directories it asks to keep. */
#include "build-config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/internal.h"
#include "runtime/container/foreground.h"
#include "runtime/linux/fs.h"
#include "runtime/container/statedir.h"
#include "runtime/linux/sync.h"
#include "runtime/linux/terminal.h"

/* A program killed by the kernel for memory says nothing: the runtime does. The
 * numbers go to the watcher too, read now: the cgroup is about to be removed. */
static void
report_oom (struct container *c, struct run_watch *watch)
{
  struct cgroup_stats st;
  uint64_t kills = 0, limit = 0;
  if (!c->cg.ops)
    return;
  if (watch)
    {
      if (c->cg.ops->stats (&c->cg, &st) < 0)
        return;
      watch->stats = st;
      watch->has_stats = true;
      kills = st.has_oom ? st.oom_kill : 0;
      limit = st.memory_limit;
    }
  else if (!cgroup_oom_kills (&c->cg, &kills, &limit))
    return;
  if (kills == 0)
    return;
  sbx_log_write (&c->ctx->log, SBX_LOG_WARNING, "container %s: %llu process(es) killed by the OOM killer (memory limit %llu bytes)",
                 c->o->id, (unsigned long long) kills, (unsigned long long) limit);
}

/* A watched run's memory in use, for its caller (the sandbox's /proc/meminfo). */
static void
report_memory_usage (void *data)
{
  struct container *c = data;
  struct cgroup_stats st;
  if (c->cg.ops->stats (&c->cg, &st) == 0 && st.has_memory)
    c->watch->on_memory_usage (c->watch->memory_data, st.memory_usage);
}

/* run_watch.read_stats */
static void
read_stats_now (struct run_watch *w)
{
  struct container *c = w->container;
  struct cgroup_stats st;
  if (c->cg.ops->stats (&c->cg, &st) == 0)
    {
      w->stats = st;
      w->has_stats = true;
    }
}

/* runtime.md steps 12-13 for a foreground run: nothing may survive the run. */
static void
run_cleanup (struct container *c, struct run_watch *watch)
{
  struct sbx_error e = { 0 };
  report_oom (c, watch);
  if (c->cg.ops && c->cgroup_created && container_end_cgroup (c, &e) < 0)
    {
      sbx_warn (c->ctx, "cleanup: %s", e.msg);
      sbx_error_clear (&e);
    }
  if (container_run_hooks (c, SBX_HOOK_POSTSTOP, "stopped", &e) < 0)
    {
      sbx_warn (c->ctx, "poststop hook failed: %s", e.msg);
      sbx_error_clear (&e);
    }
  if (statedir_remove (c->root_fd, c->o->id, &e) < 0)
    {
      sbx_warn (c->ctx, "cleanup: %s", e.msg);
      sbx_error_clear (&e);
    }
}

/* With our own init (reaper.h), its exit status is the program's as a number; the
 * exact wait status (killed by which signal) came through the status pipe. */
static void
take_program_status (struct container *c, struct run_watch *watch, int *exit_status)
{
  int status;
  if (c->status_pipe[0] < 0 || read (c->status_pipe[0], &status, sizeof status) != sizeof status)
    return;
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  if (watch)
    watch->fg.term_signal = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
}

/* The wall-clock deadline of a watched run: everything in the container dies. The
 * init is the pid namespace's init (when there is one), and the cgroup holds the rest. */
static void
kill_on_deadline (void *data)
{
  struct container *c = data;
  struct sbx_error e = { 0 };
  syscall (SYS_pidfd_send_signal, c->child.pidfd, SIGKILL, NULL, 0);
  if (c->cg.ops && c->cg.ops->kill_all (&c->cg, SIGKILL, &e) < 0)
    sbx_error_clear (&e);
  if (c->watch)
    c->watch->timed_out = true;
}

/* A watch's fds said the run is over (fg_watch.stop): everything in the container
 * dies, as at the deadline, but it is no timeout. The init of a pid namespace of
 * the container's own takes every process in it along; the cgroup is only walked
 * for processes outside one (on v1 that is a freeze and a thaw: milliseconds). */
static void
kill_on_stop (void *data)
{
  struct container *c = data;
  struct sbx_error e = { 0 };
  syscall (SYS_pidfd_send_signal, c->child.pidfd, SIGKILL, NULL, 0);
  if (c->cg.ops && !c->ns.pidns_new && c->cg.ops->kill_all (&c->cg, SIGKILL, &e) < 0)
    sbx_error_clear (&e);
}

/* `sbx-oci python` asks to keep /tmp and /dev/shm: after the run it tells from their
   free space whether the program filled them. Resolved inside the container's root
   (no symlink it planted is followed), by the pid of our own unreaped child. An
   unprivileged caller may not open the root of an init that stays as the reaper (it
   is not dumpable and its memory belongs to the host's user namespace): a holding
   init sent its root (join_fds.h); with another, nothing is held. */
static void
hold_container_dirs (pid_t pid, const struct join_fds *join, struct run_watch *watch)
{
  char root[64];
  _cleanup_close_ int rootfd = -1;
  for (size_t i = 0; i < ARRAY_SIZE (watch->held); i++)
    watch->held[i] = -1;
  if (!watch->hold[0])
    return;
  snprintf (root, sizeof root, "/proc/%d/root", (int) pid);
  rootfd = join->root >= 0 ? fcntl (join->root, F_DUPFD_CLOEXEC, 3) : open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return;
  for (size_t i = 0; i < ARRAY_SIZE (watch->hold) && watch->hold[i]; i++)
    watch->held[i] = sys_openat2 (rootfd, watch->hold[i], O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                  RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

int
container_run (struct sbx_ctx *ctx, const struct create_opts *o, bool detach, bool keep, struct run_watch *watch,
               int *exit_status, struct sbx_error *err)
{
  struct container c;
  _cleanup_close_ int sfd = -1;
  int ret = -1;

  container_init_struct (&c, ctx, o);
  c.forward_signals = !detach;
  c.one_shot = !detach && !keep;
  c.watched = !detach && watch;
  foreground_signal_set (&c.forwarded);
  if (c.forward_signals)
    {
      /* Blocked from the start, before the state dir and cgroups exist: a TERM in
         the first milliseconds waits for the signalfd (and reaches the program),
         instead of ending us between making those and recording them, which left
         cgroups nothing could delete. The init restores its own mask. */
      sigprocmask (SIG_BLOCK, &c.forwarded, &c.saved_mask);
      c.signals_blocked = true;
    }
  /* Be the subreaper so a two-stage init stays our child. */
  if (!detach)
    prctl (PR_SET_CHILD_SUBREAPER, 1);

  ret = container_create_common (&c, !detach, err);
  if (o->has_stdio)
    for (int i = 0; i < 3; i++)
      if (o->stdio[i] >= 3)
        close (o->stdio[i]); /* the init has its own: EOF on the pipes must mean it is gone */
  if (ret < 0)
    goto out;
  ret = -1;
  if (detach)
    {
      /* create + start: the fifo path, then leave the container running. */
      if (container_commit (&c, err) < 0)
        goto abort;
      close (c.child.sync_fd);
      c.child.sync_fd = -1;
      close (c.state_fd); /* releases the create lock that start takes */
      c.state_fd = -1;
      ret = container_start (ctx, o->id, err);
      goto out;
    }
  {
    int32_t pid = c.child.pid;
    if ((!c.unacked_start && sync_send (c.child.sync_fd, SYNC_START, &pid, sizeof pid, err) < 0)
        || sync_wait_exec (c.child.sync_fd, err) < 0)
      goto abort;
    if (c.trampoline_fd >= 0)
      flock (c.state_fd, LOCK_UN); /* pid 1 is the program now: `exec` may join */
  }
  if (watch)
    {
      hold_container_dirs (c.child.pid, &c.join, watch);
      watch->started = true;
      watch->join = c.join.root >= 0 ? &c.join : NULL;
      c.watch = watch;
      watch->fg.on_deadline = kill_on_deadline;
      watch->fg.on_stop = kill_on_stop;
      watch->fg.deadline_data = &c;
      watch->container = &c;
      if (c.cg.ops)
        watch->read_stats = read_stats_now;
      if (watch->on_memory_usage && c.cg.ops)
        {
          watch->fg.tick_ns = 200 * 1000000LL;
          watch->fg.on_tick = report_memory_usage;
          watch->fg.tick_data = &c;
        }
    }
  if (container_run_hooks (&c, SBX_HOOK_POSTSTART, "running", err) < 0)
    goto abort;
  if (watch && watch->on_started && watch->on_started (watch->started_data, o->id, err) < 0)
    goto abort;
  sfd = signalfd (-1, &c.forwarded, SFD_CLOEXEC);
  if (sfd < 0)
    {
      sbx_error_set (err, errno, "signalfd");
      goto abort;
    }
  {
    struct fg_watch tty_watch = { 0 }, *fg = watch ? &watch->fg : NULL;
    if (c.tty_sock >= 0)
      {
        int master = terminal_receive_master (c.tty_sock, err);
        if (master < 0 || tty_relay_start (&c.tty, master, !c.config->process->has_console_size, err) < 0)
          goto abort;
        if (!fg)
          fg = &tty_watch;
        fg->fds = c.tty.fds;
        fg->n_fds = 2;
        fg->on_fds = tty_relay_on_fds;
        fg->data = &c.tty;
      }
    if (foreground_wait (c.child.pidfd, sfd, fg, exit_status, err) < 0)
      goto abort;
    tty_relay_finish (&c.tty);
  }
  c.child.pid = -1;
  take_program_status (&c, watch, exit_status);
  if (!keep)
    run_cleanup (&c, watch);
  ret = 0;
  goto out;

abort:
  container_abort (&c);
out:
  if (watch)
    {
      watch->read_stats = NULL; /* the container is gone */
      watch->container = NULL;
    }
  if (c.signals_blocked)
    sigprocmask (SIG_SETMASK, &c.saved_mask, NULL);
  container_free (&c);
  return ret;
}
