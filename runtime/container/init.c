/* The container init: everything between clone3 and the exec of the user's program,
 * in the order the spec's lifecycle gives. Read init_run() top to bottom.
 *
 * It runs as a clone of the runtime process (no re-exec of our binary: DEVELOPERS.md
 * "Why no re-exec"), non-dumpable from the moment its ids are mapped until exec,
 * so no container process can open /proc/<init>/exe or its fds. Every failure is sent
 * to the parent as SYNC_ERROR and the init exits: the parent reports it as "the
 * sandbox could not be set up", distinct from the program's own exit status. */
#include "build-config.h"
#include "runtime/container/init.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hooks/hooks.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/linux/devices.h"
#include "runtime/container/exec_trampoline.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/idmap.h"
#include "runtime/linux/landlock.h"
#include "runtime/linux/namespaces.h"
#include "runtime/linux/process_attrs.h"
#include "runtime/linux/process_become.h"
#include "runtime/linux/program.h"
#include "runtime/container/reaper.h"
#include "runtime/linux/rootfs.h"
#include "runtime/container/statedir.h"
#include "runtime/linux/sync.h"
#include "runtime/linux/terminal.h"

/* The state JSON a hook run from inside the container reads on stdin. */
static char *
container_state_json (struct init_args *a, const char *status, size_t *len)
{
  struct sbx_state s = *a->state;
  s.pid = getpid (); /* "the pid as seen by the container" */
  return oci_state_public_json (&s, status, false, len);
}

static int
run_container_hooks (struct init_args *a, enum sbx_hook_kind kind, const char *status, struct sbx_error *err)
{
  const struct oci_hook_list *list = &a->config->hooks[kind];
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  if (list->n == 0)
    return 0;
  json = container_state_json (a, status, &len);
  return hooks_run (list, sbx_hook_names[kind], json, len, err);
}

/* Two-stage namespaces (namespaces.h): join, then make the user namespace and let
 * the parent map it, then make the rest; a new pid namespace needs one more fork,
 * whose child becomes the init while this process reports its pid and exits. */
static int
two_stage_namespaces (struct init_args *a, struct sbx_error *err)
{
  const struct ns_plan *ns = a->ns;
  int rest = ns->unshare_flags & ~(CLONE_NEWUSER | CLONE_NEWPID);
  pid_t child;
  if (ns_join_paths (ns, true, err) < 0)
    return -1;
  if (ns->unshare_flags & CLONE_NEWUSER)
    {
      if (unshare (CLONE_NEWUSER) < 0)
        return sbx_error_set (err, errno, "unshare user namespace");
      if (sync_send (a->sync_fd, SYNC_USERNS_CREATED, NULL, 0, err) < 0
          || sync_expect (a->sync_fd, SYNC_MAPS_DONE, NULL, NULL, err) < 0)
        return -1;
    }
  if (rest && unshare (rest) < 0)
    return sbx_error_set (err, errno, "unshare namespaces");
  if (!(ns->unshare_flags & CLONE_NEWPID))
    return 0;
  if (unshare (CLONE_NEWPID) < 0)
    return sbx_error_set (err, errno, "unshare pid namespace");
  child = fork ();
  if (child < 0)
    return sbx_error_set (err, errno, "fork the container init");
  if (child > 0)
    {
      int32_t pid = child;
      if (sync_send (a->sync_fd, SYNC_INIT_PID, &pid, sizeof pid, err) < 0)
        sync_send_error (a->sync_fd, err);
      _exit (0);
    }
  return 0;
}

/* The parent made the idmapped bind mounts (only it may); take them, in mount order. */
static int
receive_idmapped_mounts (struct init_args *a, struct sbx_error *err)
{
  size_t n = a->config->n_mounts, got = SYNC_MAX_FDS, k = 0;
  int fds[SYNC_MAX_FDS];
  if (sync_expect_fds (a->sync_fd, SYNC_IDMAP_FDS, fds, &got, err) < 0)
    return -1;
  a->idmap_fds = xmalloc0 ((n + 1) * sizeof (int));
  for (size_t i = 0; i < n; i++)
    a->idmap_fds[i] = a->mount_plans[i].idmap && k < got ? fds[k++] : -1;
  return 0;
}

static void
become_root_in_userns (const struct oci_config *c)
{
  /* Files we create during setup get a mapped owner; without a mapping for 0 we
   * keep the full capabilities clone3 gave us and our (unmapped) ids, and create
   * inodes in the container's own file systems as a mapped id (FS_CREATE in fs.h). */
  const struct oci_linux *l = &c->linux_;
  if (userns_id_mapped (l->gid_mappings, l->n_gid_mappings, 0))
    (void) !setresgid (0, 0, 0);
  if (userns_id_mapped (l->uid_mappings, l->n_uid_mappings, 0))
    (void) !setresuid (0, 0, 0);
}

static int
setup_uts (const struct oci_config *c, struct sbx_error *err)
{
  if (c->hostname && sethostname (c->hostname, strlen (c->hostname)) < 0)
    return sbx_error_set (err, errno, "hostname: sethostname '%s'", c->hostname);
  if (c->domainname && setdomainname (c->domainname, strlen (c->domainname)) < 0)
    return sbx_error_set (err, errno, "domainname: setdomainname '%s'", c->domainname);
  return 0;
}

/* The rootfs, mounts, devices and createContainer hooks; ends with pivot_root. */
static int
setup_rootfs (struct init_args *a, struct sbx_error *err)
{
  const struct oci_config *c = a->config;
  _cleanup_close_ int rootfd = -1;
  struct mounts_env env = {
    .bundle = a->bundle,
    .rootfs = a->rootfs,
    /* or the runtime itself is root only of a user namespace (rootless podman) */
    .userns = a->ns->userns || a->ns->userns_joined || !a->ctx->host_root,
    .cg = a->cg,
    .cgroupns = a->ns->cgroupns_new,
    .idmap_fds = a->idmap_fds,
    .sync_fd = a->ns->userns ? a->sync_fd : -1, /* the parent serves a new user namespace's */
    .special = &a->special,
  };
  rootfd = rootfs_prepare (c, a->rootfs, err);
  if (rootfd < 0)
    return -1;
  env.rootfd = rootfd;
  if (mounts_apply (c, a->mount_plans, &env, err) < 0
      || devices_setup (rootfd, c, env.userns, a->ctx->host_root ? env.sync_fd : -1, err) < 0)
    return -1;
  if (c->process)
    {
      /* runc and crun create a missing cwd; do it before the root turns read-only. */
      int cwd = fs_mkdir_in_root (rootfd, c->process->cwd, 0755, err);
      if (cwd < 0)
        return sbx_error_wrap (err, "process.cwd");
      close (cwd);
    }
  if (a->parent_hooks)
    {
      /* prestart and createRuntime run in the runtime namespace, now. */
      if (sync_send (a->sync_fd, SYNC_MOUNTS_DONE, NULL, 0, err) < 0
          || sync_expect (a->sync_fd, SYNC_HOOKS_DONE, NULL, NULL, err) < 0)
        return -1;
    }
  if (run_container_hooks (a, SBX_HOOK_CREATE_CONTAINER, "creating", err) < 0)
    return -1;
  return rootfs_pivot (rootfd, a->no_pivot, err);
}

/* After the pivot, "/" is the container's root: the pty comes from its devpts. */
static int
setup_terminal (struct init_args *a, struct sbx_error *err)
{
  _cleanup_close_ int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return sbx_error_set (err, errno, "open /");
  a->pty_slave = terminal_setup (root, a->config->process, a->console_fd, true, err);
  close (a->console_fd);
  a->console_fd = -1;
  if (a->pty_slave < 0)
    return -1;
  /* The pty replaces the runtime's stdio now, not at start: a caller that reads
   * create's output until EOF (containerd's shim through go-runc) would otherwise wait
   * on this init forever and never call start. process_become makes it the
   * controlling terminal later. */
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (a->pty_slave, fd) < 0)
      return sbx_error_set (err, errno, "process.terminal: dup2 the pty onto stdio");
  return 0;
}

/* Block until `start`: it writes a byte to exec.fifo (runtime.md step 6). */
static int
wait_for_start (struct init_args *a, struct sbx_error *err)
{
  char byte;
  ssize_t r;
  int32_t pid = 0;
  size_t len = sizeof pid;
  if (a->unacked_start)
    return 0; /* the parent records the state meanwhile (create.c, spawn) */
  if (a->foreground)
    {
      if (sync_expect (a->sync_fd, SYNC_START, &pid, &len, err) < 0)
        return -1;
      a->host_pid = pid;
      return 0;
    }
  if (sync_expect (a->sync_fd, SYNC_COMMITTED, &pid, &len, err) < 0)
    return -1;
  a->host_pid = pid;
  /* The state is recorded and the runtime that created us is about to exit: outlive
   * it, and only then let it go (it waits for the ack). */
  prctl (PR_SET_PDEATHSIG, 0);
  a->pdeathsig = false;
  if (sync_send (a->sync_fd, SYNC_COMMIT_ACK, NULL, 0, err) < 0)
    return -1;
  /* Nobody listens on the socket any more: later errors go to our stderr. */
  close (a->sync_fd);
  a->sync_fd = -1;
  do
    r = read (a->fifo_fd, &byte, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1)
    return sbx_error_set (err, errno, "wait for start on exec.fifo");
  close (a->fifo_fd);
  a->fifo_fd = -1;
  return 0;
}

/* The caller's choice of stdio for the container (`sbx-oci python`'s output pipes);
 * the originals are closed with every other inherited fd below. */
static int
take_stdio (struct init_args *a, struct sbx_error *err)
{
  for (int i = 0; i < 3; i++)
    if (a->stdio[i] >= 0 && a->stdio[i] < 3 && a->stdio[i] != i)
      {
        /* would be overwritten by an earlier dup2: move it out of the way first */
        a->stdio[i] = fcntl (a->stdio[i], F_DUPFD_CLOEXEC, 3);
        if (a->stdio[i] < 0)
          return sbx_error_set (err, errno, "stdio: dup");
      }
  for (int i = 0; i < 3; i++)
    if (a->stdio[i] >= 0 && a->stdio[i] != i && dup2 (a->stdio[i], i) < 0)
      return sbx_error_set (err, errno, "stdio: dup2 onto fd %d", i);
  return 0;
}

/* 1. A clean slate: default signals, and no inherited fd beyond stdio and the
 *    preserved ones can survive exec. */
static int
init_clean_slate (struct init_args *a, struct sbx_error *err)
{
  for (size_t i = 0; i < ARRAY_SIZE (a->parent_fds); i++)
    if (a->parent_fds[i] >= 0)
      close (a->parent_fds[i]); /* and with them the state dir lock */
  cgroup_drop_roots (a->cg); /* the parent's, for its rmdir: not kept below */
  process_reset_signals ();
  if (a->pdeathsig)
    prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (take_stdio (a, err) < 0)
    return -1;
  if (a->cgroup_self_join && a->cg->ops->enter_self (a->cg, err) < 0)
    return -1;
  {
    int keep[10 + SBX_NS_COUNT + CG1_COUNT];
    size_t n = 0;
    int mine[] = { a->sync_fd, a->fifo_fd, a->console_fd, a->seccomp_listener_fd, a->bundle_fd, a->ctx->log.fd,
                   a->cg->v2_dirfd, a->status_fd, a->trampoline_fd };
    for (size_t i = 0; i < ARRAY_SIZE (mine); i++)
      keep[n++] = mine[i];
    for (int i = 0; i < CG1_COUNT; i++)
      keep[n++] = a->cg->v1_dirfd[i];
    for (int i = 0; i < SBX_NS_COUNT; i++)
      keep[n++] = a->ns->join_fd[i];
    process_close_fds_except (3 + a->preserve_fds, keep, n);
  }
  syscall (SYS_close_range, 3 + a->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC);
  return 0;
}

/* 8. With our own init as pid 1 (reaper.h), the program is its child; then become
 *    the configured process (process_become.h). 9. exec PROGRAM. */
static int
init_become_and_exec (struct init_args *a, char *program, char **env, struct sbx_error *err)
{
  const struct oci_process *p = a->config->process;
  /* No Landlock for an init that only holds: it runs nothing of the container's, and
     the process that joins gets a domain of its own, which a domain (ABI 6 scoping)
     could not signal, and the init passes signals on to it. */
  if (a->reaper_hold)
    reaper_hold (p, a->as_root, a->pdeathsig, a->status_fd, &a->ctx->log);
  if (a->with_reaper)
    {
      /* One Landlock domain for both: from ABI 6 a domain cannot signal outside itself,
         and the reaper forwards signals to the program. */
      if (landlock_apply (a->landlock, err) < 0
          || reaper_fork (p, a->as_root, a->pdeathsig, a->status_fd, &a->ctx->log, err) < 0)
        return -1;
      a->landlock = NULL;
    }
  /* The trampoline reports a failed exec on the sync socket, so it must survive the
     exec into the trampoline; cleared now, before a seccomp filter could refuse it. */
  if (a->trampoline_fd >= 0 && a->sync_fd >= 0 && fcntl (a->sync_fd, F_SETFD, 0) < 0)
    return sbx_error_set (err, errno, "exec trampoline: sync socket");
  {
    struct become_args b = {
      .seccomp = a->seccomp,
      .seccomp_listener_fd = a->seccomp_listener_fd,
      .seccomp_metadata = a->seccomp_metadata,
      .state = a->state,
      .host_pid = a->host_pid,
      .setgroups_allowed = a->as_root,
      .keep_groups = oci_keep_original_groups (a->config),
      .log = &a->ctx->log,
      .preserve_fds = a->preserve_fds,
      .pdeathsig = a->pdeathsig,
      .pty_slave = a->pty_slave,
      .landlock = a->landlock,
    };
    int r = process_become (p, &b, err);
    a->seccomp_listener_fd = b.seccomp_listener_fd;
    if (r < 0)
      return -1;
  }

  /* 9. exec: on success the sync socket closes (O_CLOEXEC) and the parent sees EOF. */
  if (a->trampoline_fd >= 0)
    return exec_trampoline_exec (a->trampoline_fd, a->sync_fd, program, p, env, err);
  return program_exec (program, p, env, err);
}

static int
init_run (struct init_args *a, char **program, struct sbx_error *err)
{
  const struct oci_config *c = a->config;
  const struct oci_process *p = c->process;
  char **env = NULL;
  bool early_net_uts;

  if (init_clean_slate (a, err) < 0)
    return -1;

  /* 2. The parent has joined us to the cgroup and mapped our ids. While it writes
   *    the maps: the loopback and the hostname of a network and UTS namespace that
   *    clone3 made. The user namespace clone3 made with them owns them and gave us
   *    every capability in it, and neither depends on our ids (half the time the
   *    parent is not done before this, ~0.1 ms). */
  early_net_uts = !a->ns->two_stage && (a->ns->clone_flags & (CLONE_NEWNET | CLONE_NEWUTS))
                  == (CLONE_NEWNET | CLONE_NEWUTS);
  if (early_net_uts && (ns_loopback_up (err) < 0 || setup_uts (c, err) < 0))
    return -1;
  if (sync_expect (a->sync_fd, SYNC_GO, NULL, NULL, err) < 0)
    return -1;
  /* --systemd-cgroup: systemd has moved this process into the scope it made since the
     clone; the cgroup's mount needs to know which one that is. */
  if (a->cg->systemd_unit && cgroup_systemd_adopt (a->cg, err) < 0)
    return -1;
  if (a->ns->two_stage && two_stage_namespaces (a, err) < 0)
    return -1;
  if (idmap_needed (c, a->mount_plans) && receive_idmapped_mounts (a, err) < 0)
    return -1;
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (a->ns->userns)
    become_root_in_userns (c);

  /* 3. Namespaces joined by path, and those that must follow the cgroup move. */
  if (!a->ns->two_stage && ns_join_paths (a->ns, false, err) < 0)
    return -1;
  if (a->ns->cgroupns_late && unshare (CLONE_NEWCGROUP) < 0)
    return sbx_error_set (err, errno, "unshare cgroup namespace");
  /* A holding init's namespaces are all made: opened now, through the /proc we still
     see (the container may mount none), for the processes that will join us. */
  if (a->reaper_hold && join_fds_open_namespaces (&a->join, err) < 0)
    return -1;

  /* 4. Loopback, hostname, keyring, LSM labels (the latter through the host's /proc). */
  if (!early_net_uts && ((a->ns->clone_flags | a->ns->unshare_flags) & CLONE_NEWNET) && ns_loopback_up (err) < 0)
    return -1;
  if ((!early_net_uts && setup_uts (c, err) < 0) || (!a->no_new_keyring && process_new_session_keyring (err) < 0)
      || process_apply_lsm_labels (c, err) < 0)
    return -1;

  /* 5. Root filesystem: mounts, devices, createContainer hooks, pivot_root, the
   *    terminal, then masked/read-only paths and the read-only root. */
  if (!a->ns->mountns_joined && setup_rootfs (a, err) < 0)
    return -1;
  if (a->console_fd >= 0 && setup_terminal (a, err) < 0)
    return -1;
  if (!a->ns->mountns_joined && rootfs_finalize (c, &a->special, err) < 0)
    return -1;
  /* Host directories stay out of reach from here on (CVE-2024-21626). */
  if (a->bundle_fd >= 0)
    close (a->bundle_fd);
  a->bundle_fd = -1;
  cgroup_close (a->cg);

  /* 6. Kernel parameters, then find the program: a missing one fails create. */
  if (process_apply_sysctls (&c->linux_, err) < 0 || process_apply_personality (&c->linux_, err) < 0
      || process_apply_memory_policy (&c->linux_, err) < 0)
    return -1;
  if (p)
    {
      if (process_enter_cwd (p->cwd, err) < 0)
        return -1;
      *program = program_lookup (p, err);
      if (!*program)
        return -1;
      env = program_env (p);
    }

  /* 7. Ready: the parent records the state; then wait for start. A holding init
   *    also sends its namespaces and root (join_fds.h). */
  if (sync_send (a->sync_fd, SYNC_READY, NULL, 0, err) < 0)
    return -1;
  if (a->reaper_hold && (join_fds_open_root (&a->join, err) < 0 || join_fds_send (a->sync_fd, &a->join, err) < 0))
    return -1;
  if (wait_for_start (a, err) < 0)
    return -1;
  if (!p)
    return sbx_error_set (err, 0, "process: not set, nothing to start");
  if (run_container_hooks (a, SBX_HOOK_START_CONTAINER, "created", err) < 0)
    return -1;

  return init_become_and_exec (a, *program, env, err);
}

void
init_main (struct init_args *a)
{
  struct sbx_error err = { 0 };
  char *program = NULL;
  init_run (a, &program, &err);
  if (a->sync_fd >= 0)
    sync_send_error (a->sync_fd, &err);
  else
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      dprintf (2, "sbx-oci: %s\n", msg ? msg : "container init failed");
    }
  _exit (err.exit_hint ? err.exit_hint : 1);
}
