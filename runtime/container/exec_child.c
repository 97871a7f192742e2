/* The `exec` child, top to bottom. Like the init it is a clone of the runtime (no
 * re-exec), non-dumpable from before it joins the container until its exec, so a
 * process in the container can neither ptrace it nor open its fds or
 * /proc/<pid>/exe (CVE-2016-9962, CVE-2019-5736). Failures go to the parent as
 * SYNC_ERROR; the parent prints them. */
#include "build-config.h"
#include "runtime/container/exec_child.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/vocab.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/linux/process_attrs.h"
#include "runtime/linux/process_become.h"
#include "runtime/linux/program.h"
#include "runtime/linux/sync.h"
#include "runtime/linux/terminal.h"
#include "runtime/linux/landlock.h"

/* Our root becomes the init's root: for a pivot_root container the root of its
 * mount namespace, for --no-pivot the directory it chroot'ed into (setns alone would
 * leave us at the host's root there). */
static int
enter_container_root (int root_fd, struct sbx_error *err)
{
  if (fchdir (root_fd) < 0 || chroot (".") < 0 || chdir ("/") < 0)
    return sbx_error_set (err, errno, "enter the container's root directory");
  return 0;
}

/* The container's namespaces but pid and time (the parent's part): by the init's
   pidfd in one atomic setns, or one by one from the fds of a holding init, the user
   namespace first, which gives the capabilities to enter the others. */
static int
join_namespaces (struct exec_child_args *a, struct sbx_error *err)
{
  if (!a->join_ns)
    {
      if (a->ns_flags && setns (a->init_pidfd, a->ns_flags) < 0)
        return sbx_error_set (err, errno, "join the container's namespaces");
      return 0;
    }
  for (int i = 0; i < SBX_NS_COUNT; i++) /* SBX_NS_USER is the first */
    if ((a->ns_flags & sbx_namespaces[i].clone_flag) && a->join_ns[i] >= 0
        && setns (a->join_ns[i], sbx_namespaces[i].clone_flag) < 0)
      return sbx_error_set (err, errno, "join the container's %s namespace", sbx_namespaces[i].oci_name);
  return 0;
}

static int
exec_child_run (struct exec_child_args *a, char **program, bool in_process, struct sbx_error *err)
{
  const struct oci_process *p = a->process;
  int32_t host_pid = 0;
  size_t len = sizeof host_pid;
  int pty_slave = -1;
  char **env;

  /* 1. A clean slate, as in the init. */
  for (size_t i = 0; i < ARRAY_SIZE (a->parent_fds); i++)
    if (a->parent_fds[i] >= 0)
      close (a->parent_fds[i]);
  process_reset_signals ();
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (a->self_join && a->self_join->ops->enter_self (a->self_join, err) < 0)
    return -1;
  {
    int keep[6 + SBX_NS_COUNT] = { a->sync_fd, a->init_pidfd, a->root_fd, a->console_fd, a->seccomp_listener_fd,
                                   a->ctx->log.fd };
    size_t n = 6;
    for (int i = 0; a->join_ns && i < SBX_NS_COUNT; i++)
      keep[n++] = a->join_ns[i];
    process_close_fds_except (3 + a->preserve_fds, keep, n);
  }
  syscall (SYS_close_range, 3 + a->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC);
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);

  /* 2. In the cgroup now (above, or the parent put us there). */
  if (sync_expect (a->sync_fd, SYNC_GO, &host_pid, &len, err) < 0)
    return -1;

  /* 3. LSM labels through the host's /proc, then into the container: its
   *    namespaces (join_namespaces), then its root. */
  if (process_apply_process_labels (p, err) < 0)
    return -1;
  if (join_namespaces (a, err) < 0)
    return -1;
  close (a->init_pidfd);
  for (int i = 0; a->join_ns && i < SBX_NS_COUNT; i++)
    if (a->join_ns[i] >= 0)
      close (a->join_ns[i]);
  if (enter_container_root (a->root_fd, err) < 0)
    return -1;
  close (a->root_fd);
  if (process_new_session_keyring (err) < 0)
    return -1;

  /* 4. The program must exist (exit 127 otherwise), then the terminal. */
  if (process_enter_cwd (p->cwd, err) < 0)
    return -1;
  if (!in_process)
    {
      *program = program_lookup (p, err);
      if (!*program)
        return -1;
    }
  env = program_env (p);
  if (a->console_fd >= 0)
    {
      _cleanup_close_ int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root < 0)
        return sbx_error_set (err, errno, "open /");
      pty_slave = terminal_setup (root, p, a->console_fd, false, err);
      close (a->console_fd);
      a->console_fd = -1;
      if (pty_slave < 0)
        return -1;
    }

  /* 5. Become the process, and exec. Detached, the program outlives the runtime:
   *    a parent-death signal would survive the exec (a uid change may not clear it). */
  if (a->detach)
    prctl (PR_SET_PDEATHSIG, 0);
  {
    struct become_args b = {
      .seccomp = a->seccomp,
      .seccomp_listener_fd = a->seccomp_listener_fd,
      .seccomp_metadata = a->seccomp_metadata,
      .state = a->state,
      .host_pid = host_pid,
      .setgroups_allowed = a->as_root,
      .keep_groups = a->keep_groups,
      .log = &a->ctx->log,
      .preserve_fds = a->preserve_fds,
      .pdeathsig = !a->detach,
      .pty_slave = pty_slave,
      .landlock = in_process && a->deferred_landlock ? NULL : a->landlock,
    };
    int r;
    if (in_process && a->deferred_landlock && a->landlock)
      *a->deferred_landlock = *a->landlock; /* this process's copy of the plan, never freed here */
    r = process_become (p, &b, err);
    a->seccomp_listener_fd = b.seccomp_listener_fd;
    if (r < 0)
      return -1;
  }
  if (in_process)
    {
      /* What the exec would do: the environment, a dumpable process again (the
         credentials are the program's now, as after execve), and the sync socket
         closed, which the parent takes for the exec */
      environ = env;
      prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
      close (a->sync_fd);
      return 0;
    }
  return program_exec (*program, p, env, err);
}

void
exec_child_main (struct exec_child_args *a)
{
  struct sbx_error err = { 0 };
  char *program = NULL;
  exec_child_run (a, &program, false, &err);
  sync_send_error (a->sync_fd, &err);
  _exit (err.exit_hint ? err.exit_hint : 1);
}

void
exec_child_become_in_process (struct exec_child_args *a)
{
  struct sbx_error err = { 0 };
  if (exec_child_run (a, NULL, true, &err) == 0)
    return;
  sync_send_error (a->sync_fd, &err);
  _exit (err.exit_hint ? err.exit_hint : 1);
}
