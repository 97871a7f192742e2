/* exec: a new process in an existing container (runc's `exec`). The parent side:
 * find the container, build the process (a process.json, or the container's own
 * process with the command-line overrides), and spawn a child that joins the
 * container's namespaces, cgroup and root and becomes that process under the
 * container's seccomp profile (exec_child.c).
 *
 * The namespaces are found through a pidfd of the init (never a pid that could be
 * recycled): the pid and time namespaces are entered here, for the child only;
 * the child joins the rest with one setns(pidfd). */
#include "build-config.h"
#include "runtime/container/container.h"
#include "runtime/linux/landlock.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci/seccomp_config.h"
#include "oci/vocab.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/container/load.h"
#include "runtime/container/exec_child.h"
#include "runtime/container/foreground.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/sealed_exe.h"
#include "runtime/linux/seccomp.h"
#include "runtime/container/spawn.h"
#include "runtime/linux/sync.h"
#include "runtime/linux/terminal.h"
#include "runtime/container/tty_relay.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define SPAWN_JOIN_TIMEOUT_S 30

struct exec_ctx
{
  struct loaded l;
  struct oci_config *config; /* the snapshot taken at create */
  yajl_val process_tree;     /* --process file */
  struct oci_process process;
  bool process_parsed;       /* process came from oci_process_parse: clear it */
  const char **env, **args;  /* owned arrays for the inline form */
  struct oci_seccomp seccomp_config;
  struct seccomp_program seccomp;
  struct landlock_plan landlock;
  struct cgroup cg;
  int init_pidfd, root_fd, pidns_fd, timens_fd;
  struct join_fds join; /* exec_opts.join_fds: those of ns_flags */
  bool by_fds;          /* joined by join, not by init_pidfd */
  int console_fd, listener_fd;
  int ns_flags;
  pid_t pid;
  int pidfd, sync_fd;
  bool in_child; /* in_process: this is the copy that became the container's process */
};

static void
exec_ctx_free (struct exec_ctx *e)
{
  int *fds[] = { &e->init_pidfd, &e->root_fd, &e->pidns_fd, &e->timens_fd, &e->console_fd,
                 &e->listener_fd, &e->pidfd, &e->sync_fd };
  for (size_t i = 0; i < ARRAY_SIZE (fds); i++)
    if (*fds[i] >= 0)
      close (*fds[i]);
  if (e->process_parsed)
    oci_process_clear (&e->process); /* else its arrays are e->env, e->args or the config's */
  free (e->env);
  free (e->args);
  landlock_plan_free (&e->landlock);
  json_free (e->process_tree);
  oci_seccomp_clear (&e->seccomp_config);
  sbx_seccomp_free (&e->seccomp);
  cgroup_close (&e->cg);
  join_fds_close (&e->join);
  oci_config_free (e->config);
  loaded_free (&e->l);
}

/* ------------------------------------------------------------ the process */

static bool
env_same_key (const char *a, const char *b)
{
  size_t n = strcspn (a, "=");
  return strncmp (a, b, n) == 0 && (b[n] == '=' || b[n] == '\0');
}

/* runc's inline form: the container's process, with the command line's overrides. */
static int
process_from_options (struct exec_ctx *e, const struct exec_opts *o, struct sbx_ctx *ctx, struct sbx_error *err)
{
  const struct oci_process *base = e->config->process;
  struct oci_process *p = &e->process;
  size_t n_env = 0;

  if (o->n_args == 0)
    return sbx_error_set (err, 0, "exec: no command given (and no --process file)");
  if (base)
    *p = *base;
  else
    memset (p, 0, sizeof *p);
  p->terminal = o->tty;
  p->has_console_size = false;
  e->args = xmalloc0 ((o->n_args + 1) * sizeof (char *));
  for (size_t i = 0; i < o->n_args; i++)
    e->args[i] = o->args[i];
  p->args = e->args;
  p->n_args = o->n_args;
  if (o->cwd)
    p->cwd = o->cwd;
  if (!p->cwd)
    p->cwd = "/";

  /* env: the container's, each --env replacing the variable of the same name. */
  e->env = xmalloc0 ((p->n_env + o->n_env + 1) * sizeof (char *));
  for (size_t i = 0; base && i < base->n_env; i++)
    {
      bool replaced = false;
      for (size_t j = 0; j < o->n_env && !replaced; j++)
        replaced = env_same_key (o->env[j], base->env[i]);
      if (!replaced)
        e->env[n_env++] = base->env[i];
    }
  for (size_t j = 0; j < o->n_env; j++)
    e->env[n_env++] = o->env[j];
  p->env = e->env;
  p->n_env = n_env;

  if (o->has_user)
    {
      p->user.uid = o->uid;
      p->user.gid = o->gid;
      p->user.additional_gids = NULL;
      p->user.n_additional_gids = 0;
    }
  if (o->n_additional_gids)
    {
      p->user.additional_gids = o->additional_gids;
      p->user.n_additional_gids = o->n_additional_gids;
    }
  for (size_t i = 0; i < o->n_caps; i++)
    {
      int cap = sbx_capability_from_name (o->caps[i]);
      if (cap < 0)
        {
          /* As an unknown name in process.capabilities (config.md: SHOULD NOT fail),
             and as runc: a warning, and nothing granted. */
          sbx_log_warn_cb (&ctx->log, "exec: --cap %s: unknown capability ignored", o->caps[i]);
          continue;
        }
      /* Not the inheritable set (CVE-2022-29162); without it, ambient cannot hold it. */
      p->has_capabilities = true;
      p->caps.bounding |= 1ULL << cap;
      p->caps.effective |= 1ULL << cap;
      p->caps.permitted |= 1ULL << cap;
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->apparmor)
    p->apparmor_profile = o->apparmor;
  if (o->process_label)
    p->selinux_label = o->process_label;
  return oci_process_validate (p, "exec", err);
}

static int
process_from_file (struct exec_ctx *e, const char *path, struct sbx_ctx *ctx, struct sbx_error *err)
{
  struct oci_parse_ctx pctx = { .warn = sbx_log_warn_cb, .warn_data = &ctx->log };
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  if (json_read_file (AT_FDCWD, path, SBX_JSON_MAX_SIZE, &buf, &len, err) < 0)
    return sbx_error_wrap (err, "--process %s", path);
  e->process_tree = json_parse (buf, len, path, err);
  if (!e->process_tree)
    return -1;
  if (oci_process_parse (e->process_tree, "process", &pctx, &e->process, err) < 0)
    return -1;
  e->process_parsed = true;
  return oci_process_validate (&e->process, "process", err);
}

/* --------------------------------------------------------- the container */

static int
check_status (const struct exec_ctx *e, const struct exec_opts *o, struct sbx_error *err)
{
  switch (e->l.status)
    {
    case STATUS_STOPPED:
      return sbx_error_set (err, 0, "cannot exec in container %s: it is stopped", o->id);
    case STATUS_PAUSED:
      if (!o->ignore_paused)
        return sbx_error_set (err, 0, "cannot exec in container %s: it is paused (resume it, or use --ignore-paused)",
                              o->id);
      return 0;
    default:
      return 0;
    }
}

static const struct
{
  const char *name;
  int flag;
} ns_kinds[] = {
  { "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },     { "ipc", CLONE_NEWIPC },   { "uts", CLONE_NEWUTS },
  { "net", CLONE_NEWNET },   { "cgroup", CLONE_NEWCGROUP }, { "pid", CLONE_NEWPID }, { "time", CLONE_NEWTIME },
};

/* The namespaces of the init that are not ours: only those are joined (setns to
 * one's own user namespace is an error). pid and time are opened for the parent. */
static int
find_namespaces (struct exec_ctx *e, struct sbx_error *err)
{
  pid_t pid = e->l.state.pid;
  for (size_t i = 0; i < ARRAY_SIZE (ns_kinds); i++)
    {
      char theirs[64], ours[64];
      struct stat a, b;
      snprintf (theirs, sizeof theirs, "/proc/%d/ns/%s", (int) pid, ns_kinds[i].name);
      snprintf (ours, sizeof ours, "/proc/self/ns/%s", ns_kinds[i].name);
      if (stat (ours, &b) < 0)
        continue; /* a kernel without this namespace kind: the container has none either */
      if (stat (theirs, &a) < 0)
        return sbx_error_set (err, errno, "cannot exec in container %s: %s", e->l.state.id, theirs);
      if (a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        continue;
      if (ns_kinds[i].flag == CLONE_NEWPID || ns_kinds[i].flag == CLONE_NEWTIME)
        {
          int fd = open (theirs, O_RDONLY | O_CLOEXEC);
          if (fd < 0)
            return sbx_error_set (err, errno, "open %s", theirs);
          *(ns_kinds[i].flag == CLONE_NEWPID ? &e->pidns_fd : &e->timens_fd) = fd;
        }
      else
        e->ns_flags |= ns_kinds[i].flag;
    }
  {
    char root[64];
    snprintf (root, sizeof root, "/proc/%d/root", (int) pid);
    e->root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (e->root_fd < 0)
      return sbx_error_set (err, errno, "open %s", root);
  }
  /* Everything above went through /proc/PID: it must still be the same init. */
  if (!state_init_alive (&e->l.state))
    return sbx_error_set (err, ESRCH, "cannot exec in container %s: its process has exited", e->l.state.id);
  return 0;
}

/* The same from fds the holding init sent (exec_opts.join_fds): a caller that may
   not open /proc/PID/ns of an init that is not dumpable (join_fds.h). */
static int
namespaces_from_fds (struct exec_ctx *e, const struct exec_opts *o, struct sbx_error *err)
{
  if (join_fds_from_list (o->join_fds, o->n_join_fds, &e->join, err) < 0)
    return sbx_error_wrap (err, "cannot exec in container %s", o->id);
  for (int i = 0; i < SBX_NS_COUNT; i++)
    {
      int *fd = &e->join.ns[i];
      char ours[64];
      struct stat a, b;
      if (*fd < 0)
        continue;
      snprintf (ours, sizeof ours, "/proc/self/ns/%s", sbx_namespaces[i].proc_name);
      if (stat (ours, &b) < 0 || fstat (*fd, &a) < 0)
        return sbx_error_set (err, errno, "cannot exec in container %s: %s", o->id, ours);
      if (a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        {
          close (*fd);
          *fd = -1;
          continue;
        }
      if (i == SBX_NS_PID || i == SBX_NS_TIME)
        {
          *(i == SBX_NS_PID ? &e->pidns_fd : &e->timens_fd) = *fd;
          *fd = -1;
        }
      else
        e->ns_flags |= sbx_namespaces[i].clone_flag;
    }
  e->root_fd = e->join.root;
  e->join.root = -1;
  e->by_fds = true;
  if (!state_init_alive (&e->l.state))
    return sbx_error_set (err, ESRCH, "cannot exec in container %s: its process has exited", e->l.state.id);
  return 0;
}

static int
prepare_seccomp (struct exec_ctx *e, struct sbx_ctx *ctx, struct sbx_error *err)
{
  _cleanup_free_ char *cache = NULL;
  if (!e->config->linux_.seccomp)
    return 0;
  if (oci_seccomp_parse (e->config->linux_.seccomp, "linux.seccomp", &e->seccomp_config, err) < 0)
    return -1;
  e->seccomp_config.text = e->config->raw;
  cache = xasprintf ("%s/@seccomp-cache", ctx->root);
  if (sbx_seccomp_prepare (&e->seccomp_config, cache, true, &ctx->log, &e->seccomp, err) < 0)
    return -1;
  if (e->seccomp.notify)
    {
      e->listener_fd = terminal_connect_socket (e->seccomp_config.listener_path, err);
      if (e->listener_fd < 0)
        return sbx_error_wrap (err, "linux.seccomp.listenerPath");
    }
  return 0;
}

/* ------------------------------------------------------------- the child */

/* exec_opts.child_fds, in the copy: they become its 0 to 3. Each is first copied
   above 3, so that one of them that is already among 0 to 3 is not overwritten by
   another's dup2; the originals are closed with the rest of the caller's fds. */
static int
install_child_fds (const int fds[4], struct sbx_error *err)
{
  int moved[4];
  for (int i = 0; i < 4; i++)
    if ((moved[i] = fcntl (fds[i], F_DUPFD, 4)) < 0)
      return sbx_error_set (err, errno, "exec: the process's fd %d", i);
  for (int i = 0; i < 4; i++)
    {
      if (dup2 (moved[i], i) < 0)
        return sbx_error_set (err, errno, "exec: the process's fd %d", i);
      close (moved[i]);
    }
  return 0;
}

/* A pidfd of PID, our unreaped child (its pid cannot be anyone else's); a child we
   cannot hold is killed and reaped. PID or -1. */
static pid_t
hold_child_pidfd (pid_t pid, int *pidfd, struct sbx_error *err)
{
  *pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (*pidfd >= 0)
    return pid;
  {
    int saved = errno;
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return sbx_error_set (err, saved, "pidfd_open %d", (int) pid);
  }
}

/* The copy. clone3 puts it in the cgroup at once (v2) and gives its pidfd. A caller
   that runs on, a long-lived and perhaps multi-threaded process (exec_opts.
   spawned_pidfd: the zygote of `serve`, with a numeric library's thread pool in it),
   gets the C library's fork(), as os.fork would: its atfork handlers keep the
   library's locks and those pools consistent in the copy, which a raw clone3 skips;
   then a pidfd of its unreaped child, which no other process can take the pid of. */
static pid_t
clone_child (const struct exec_opts *o, bool into_cgroup, int cgroup_fd, int *pidfd, struct sbx_error *err)
{
  struct clone_args args = { .flags = CLONE_PIDFD, .pidfd = (uint64_t) (uintptr_t) pidfd, .exit_signal = SIGCHLD };
  pid_t pid;
  if (!o->spawned_pidfd)
    {
      if (into_cgroup)
        {
          args.flags |= CLONE_INTO_CGROUP;
          args.cgroup = (uint64_t) cgroup_fd;
        }
      pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
      return pid < 0 ? sbx_error_set (err, errno, "clone3") : pid;
    }
  pid = fork ();
  if (pid <= 0)
    return pid < 0 ? sbx_error_set (err, errno, "fork") : 0;
  return hold_child_pidfd (pid, pidfd, err);
}

/* The late join: a caller without CAP_SYS_ADMIN in the host's user namespace (a user's
   `serve`) may not enter the container's pid (or time) namespace, even for children,
   until it is in the container's user namespace, which it cannot enter itself (its
   threads, and it must stay outside). Its copy does: it enters the user namespace,
   then the pid and time namespaces for children, and makes the process that joins
   the rest, a child of the caller's (CLONE_PARENT) inside the pid namespace; it tells
   the caller that process's pid and ends. Returns in that process only. */
static void
late_join_split (struct exec_child_args *a, const struct exec_ctx *e, int sync_fd)
{
  struct sbx_error err = { 0 };
  struct clone_args args = { .flags = CLONE_PARENT };
  pid_t pid;
  if (setns (e->join.ns[SBX_NS_USER], CLONE_NEWUSER) < 0)
    sbx_error_set (&err, errno, "join the container's user namespace");
  else if (e->pidns_fd >= 0 && setns (e->pidns_fd, CLONE_NEWPID) < 0)
    sbx_error_set (&err, errno, "join the container's pid namespace");
  else if (e->timens_fd >= 0 && setns (e->timens_fd, CLONE_NEWTIME) < 0)
    sbx_error_set (&err, errno, "join the container's time namespace");
  else if ((pid = (pid_t) syscall (SYS_clone3, &args, sizeof args)) == 0)
    {
      a->ns_flags &= ~CLONE_NEWUSER; /* joined */
      return;
    }
  else if (pid < 0)
    sbx_error_set (&err, errno, "clone3 into the container's pid namespace");
  else
    {
      int32_t p = pid;
      _exit (sync_send (sync_fd, SYNC_INIT_PID, &p, sizeof p, &err) < 0 ? 125 : 0);
    }
  sync_send_error (sync_fd, &err);
  _exit (125);
}

/* The caller's side: the copy's child is ours now; the copy is reaped. */
static pid_t
late_join_take (pid_t copy, int *pidfd, int sync_fd, struct sbx_error *err)
{
  int32_t child = 0;
  size_t len = sizeof child;
  int r = sync_expect (sync_fd, SYNC_INIT_PID, &child, &len, err);
  close (*pidfd);
  *pidfd = -1;
  waitpid (copy, NULL, 0);
  if (r < 0)
    return -1;
  if (len != sizeof child || child <= 0)
    return sbx_error_set (err, EPROTO, "exec: the late join sent no pid");
  return hold_child_pidfd ((pid_t) child, pidfd, err);
}

static int
spawn_child (struct exec_ctx *e, struct sbx_ctx *ctx, const struct exec_opts *o, struct sbx_error *err)
{
  struct exec_child_args a = {
    .ctx = ctx,
    .process = &e->process,
    .state = &e->l.state,
    .init_pidfd = e->init_pidfd,
    .ns_flags = e->ns_flags,
    .join_ns = e->by_fds ? e->join.ns : NULL,
    .root_fd = e->root_fd,
    .console_fd = e->console_fd,
    .seccomp = e->seccomp.insns ? &e->seccomp : NULL,
    .landlock = &e->landlock,
    .seccomp_listener_fd = e->listener_fd,
    .seccomp_metadata = e->seccomp_config.listener_metadata,
    .preserve_fds = o->preserve_fds,
    .detach = o->detach,
    .as_root = ctx->as_root,
    .keep_groups = oci_keep_original_groups (e->config),
    .deferred_landlock = o->in_process ? o->deferred_landlock : NULL,
    .parent_fds = { e->l.state_fd, e->l.root_fd, -1, -1 },
  };
  int sv[2], saved_pid = -1, saved_time = -1, pidfd = -1;
  bool into_cgroup = e->cg.mode == CGROUP_MODE_UNIFIED && e->cg.v2_dirfd >= 0 && !o->spawned_pidfd;
  bool late = e->by_fds && (e->ns_flags & CLONE_NEWUSER) && !ctx->host_root && (e->pidns_fd >= 0 || e->timens_fd >= 0);
  pid_t pid;

  /* with the caller's 0 to 3 open, every fd of ours is above them, out of the way
     of the copy's dup2s onto them */
  if (o->child_fds && fcntl (3, F_GETFD) < 0)
    return sbx_error_set (err, EBADF, "exec: the caller's fds 0 to 3 must be open");
  if (sync_socketpair (sv, err) < 0)
    return -1;
  if (late)
    into_cgroup = false; /* the copy's child is made by the copy */
  else if ((e->pidns_fd >= 0 && spawn_enter_ns_for_children ("pid", e->pidns_fd, CLONE_NEWPID, &saved_pid, err) < 0)
      || (e->timens_fd >= 0 && spawn_enter_ns_for_children ("time", e->timens_fd, CLONE_NEWTIME, &saved_time, err) < 0))
    goto fail;
  if (!into_cgroup && e->cg.ops && e->cg.ops->enter_self)
    a.self_join = &e->cg; /* the child is single-threaded: it moves itself, cheaply */
  pid = clone_child (o, into_cgroup, e->cg.v2_dirfd, &pidfd, err);
  if (pid < 0)
    goto fail;
  if (pid == 0)
    {
      close (sv[0]);
      a.sync_fd = sv[1];
      if (late)
        late_join_split (&a, e, sv[1]);
      if (o->child_fds && install_child_fds (o->child_fds, err) < 0)
        {
          sync_send_error (sv[1], err);
          _exit (125);
        }
      if (!o->in_process)
        exec_child_main (&a);
      exec_child_become_in_process (&a);
      e->in_child = true;
      return 0;
    }
  spawn_restore_ns (&saved_pid, CLONE_NEWPID);
  spawn_restore_ns (&saved_time, CLONE_NEWTIME);
  close (sv[1]);
  if (late && (pid = late_join_take (pid, &pidfd, sv[0], err)) < 0)
    {
      close (sv[0]);
      return -1;
    }
  if (o->in_process && !o->spawned_pidfd)
    {
      /* The fds the process keeps (0 to 2 + preserve_fds) are its own now: this side
         only waits for it, and its copies would keep the process's pipes from EOF
         after it ended. */
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2 (null, fd);
      if (null >= 0)
        close (null);
      for (int fd = 3; fd < 3 + o->preserve_fds; fd++)
        close (fd);
    }
  e->pid = pid;
  e->pidfd = pidfd;
  e->sync_fd = sv[0];
  if (!into_cgroup && !a.self_join && e->cg.ops && e->cg.ops->enter (&e->cg, pid, err) < 0)
    return -1;
  if (e->process.has_oom_score_adj && spawn_write_oom_score_adj (pid, e->process.oom_score_adj, err) < 0)
    return -1;
  {
    int32_t hp = pid;
    return sync_send (e->sync_fd, SYNC_GO, &hp, sizeof hp, err);
  }

fail:
  spawn_restore_ns (&saved_pid, CLONE_NEWPID);
  spawn_restore_ns (&saved_time, CLONE_NEWTIME);
  close (sv[0]);
  close (sv[1]);
  return -1;
}

/* A caller that spawns for others (the zygote) waits a bounded time, whatever signals
   come meanwhile: a join that hangs (a --workdir on a dead network mount) must not stop
   every other run. */
static int
await_join (int sync_fd, const char *id, struct sbx_error *err)
{
  struct timespec t;
  int64_t deadline, left;
  clock_gettime (CLOCK_MONOTONIC, &t);
  deadline = (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000 + SPAWN_JOIN_TIMEOUT_S * 1000;
  for (;;)
    {
      struct pollfd p = { .fd = sync_fd, .events = POLLIN };
      int r;
      clock_gettime (CLOCK_MONOTONIC, &t);
      left = deadline - ((int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000);
      if (left <= 0)
        return sbx_error_set (err, ETIMEDOUT, "exec: the process did not join container %s within %d s", id,
                              SPAWN_JOIN_TIMEOUT_S);
      r = poll (&p, 1, (int) left);
      if (r > 0)
        return 0;
      if (r < 0 && errno != EINTR)
        return sbx_error_set (err, errno, "exec: waiting for the process to join container %s", id);
    }
}

static void
kill_child (struct exec_ctx *e)
{
  if (e->pid <= 0)
    return;
  syscall (SYS_pidfd_send_signal, e->pidfd, SIGKILL, NULL, 0);
  waitpid (e->pid, NULL, 0);
  e->pid = -1;
}

/* The container found and checked, the process built, and everything joined later
   opened (namespaces, cgroup, seccomp, Landlock), under the state dir's lock, which is
   given back at the end: a long exec must not block delete. */
static int
exec_prepare (struct sbx_ctx *ctx, const struct exec_opts *o, struct exec_ctx *e, struct sbx_error *err)
{
  struct oci_parse_ctx pctx = { .warn = sbx_log_warn_cb, .warn_data = &ctx->log };
  if (container_load (ctx, o->id, true, &e->l, err) < 0 || check_status (e, o, err) < 0)
    return -1;
  e->config = oci_config_load (e->l.state_fd, CONFIG_SNAPSHOT, &pctx, err);
  if (!e->config)
    return -1;
  if (sealed_exe_needed (&e->config->linux_) && sealed_exe_ensure (err) < 0)
    return -1;
  if ((o->process_path ? process_from_file (e, o->process_path, ctx, err) : process_from_options (e, o, ctx, err)) < 0)
    return -1;
  if (e->process.user.n_additional_gids && oci_keep_original_groups (e->config))
    return sbx_error_set (err, 0, "exec: the container's annotations." OCI_KEEP_GROUPS_ANNOTATION " keeps the caller's "
                                  "groups: additional gids cannot be set too");
  if (e->process.terminal && !o->console_socket && o->detach)
    return sbx_error_set (err, 0, "exec: the process has a terminal: a --console-socket is needed to hand it over "
                                  "(or exec in the foreground, which relays it)");
  if (o->in_process && (e->process.terminal || o->detach))
    return sbx_error_set (err, 0, "exec: in-process exec has no terminal and is never detached");
  e->init_pidfd = container_open_init_pidfd (&e->l.state, err);
  if (e->init_pidfd < 0)
    {
      sbx_error_wrap (err, "cannot exec in container %s", o->id);
      return -1;
    }
  if ((o->join_fds ? namespaces_from_fds (e, o, err) : find_namespaces (e, err)) < 0
      || cgroup_open_from_state (&e->l.state, &e->cg, err) < 0
      || (o->cgroup && cgroup_descend (&e->cg, o->cgroup, err) < 0)
      || prepare_seccomp (e, ctx, err) < 0 || landlock_plan_build (e->config, &ctx->log, &e->landlock, err) < 0)
    return -1;
  flock (e->l.state_fd, LOCK_UN);
  return 0;
}

/* The process's terminal: the --console-socket's, or (foreground without one) a
   socket on which the child sends the master back to us (*TTY_SOCK: tty_relay.h). */
static int
exec_open_console (struct exec_ctx *e, const struct exec_opts *o, int *tty_sock, struct sbx_error *err)
{
  int sv[2];
  if (!e->process.terminal)
    return 0;
  if (o->console_socket)
    {
      e->console_fd = terminal_connect_socket (o->console_socket, err);
      return e->console_fd < 0 ? -1 : 0;
    }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return sbx_error_set (err, errno, "exec: socketpair for the terminal");
  *tty_sock = sv[0];
  e->console_fd = sv[1];
  return 0;
}

/* A foreground exec: the signals FORWARDED passed on, the terminal relayed (TTY_SOCK
   >= 0), until the process ends (*EXIT_STATUS). */
static int
exec_wait_foreground (struct exec_ctx *e, const struct exec_opts *o, int tty_sock, struct tty_relay *tty,
                      const sigset_t *forwarded, int *exit_status, struct sbx_error *err)
{
  struct fg_watch tty_watch = { 0 }, plain_watch = { 0 };
  struct fg_watch *w = tty_sock >= 0 ? &tty_watch : &plain_watch;
  _cleanup_close_ int sfd = signalfd (-1, forwarded, SFD_CLOEXEC);
  if (sfd < 0)
    return sbx_error_set (err, errno, "signalfd");
  if (tty_sock >= 0)
    {
      int master;
      close (e->console_fd); /* the child's copy sent the master; EOF if it did not */
      e->console_fd = -1;
      master = terminal_receive_master (tty_sock, err);
      if (master < 0 || tty_relay_start (tty, master, !e->process.has_console_size, err) < 0)
        return -1;
      tty_watch.fds = tty->fds;
      tty_watch.n_fds = 2;
      tty_watch.on_fds = tty_relay_on_fds;
      tty_watch.data = tty;
    }
  if (foreground_wait (e->pidfd, sfd, w, exit_status, err) < 0)
    return -1;
  if (o->rusage)
    *o->rusage = w->rusage;
  if (o->term_signal)
    *o->term_signal = w->term_signal;
  return 0;
}

int
container_exec (struct sbx_ctx *ctx, const struct exec_opts *o, int *exit_status, struct sbx_error *err)
{
  struct exec_ctx e;
  sigset_t forwarded, saved_mask;
  bool blocked = false;
  int ret = -1, tty_sock = -1;
  struct tty_relay tty = { .master = -1 };

  memset (&e, 0, sizeof e);
  e.init_pidfd = e.root_fd = e.pidns_fd = e.timens_fd = e.console_fd = e.listener_fd = e.pidfd = e.sync_fd = -1;
  join_fds_init (&e.join);
  e.pid = -1;
  cgroup_init (&e.cg, CGROUP_MODE_NONE, NULL);
  *exit_status = 0;

  if (exec_prepare (ctx, o, &e, err) < 0 || exec_open_console (&e, o, &tty_sock, err) < 0)
    goto out;
  if (!o->detach && !o->spawned_pidfd)
    {
      foreground_signal_set (&forwarded);
      sigprocmask (SIG_BLOCK, &forwarded, &saved_mask);
      blocked = true;
    }
  if (spawn_child (&e, ctx, o, err) < 0)
    goto fail;
  if (e.in_child)
    {
      /* the container's process now: nothing of the parent side is ours to free or
         wait for (the fds were closed on the way in) */
      *o->in_child = true;
      return 0;
    }
  if ((o->spawned_pidfd && await_join (e.sync_fd, o->id, err) < 0) || sync_wait_exec (e.sync_fd, err) < 0)
    goto fail;
  if (o->spawned_pidfd)
    {
      /* joined: the caller reaps it */
      *o->spawned_pid = e.pid;
      *o->spawned_pidfd = e.pidfd;
      e.pid = -1;
      e.pidfd = -1;
      ret = 0;
      goto out;
    }
  if (o->pid_file && fs_write_pid_file (o->pid_file, e.pid, err) < 0)
    goto fail;
  if (o->detach)
    {
      /* Ours until we exit; then the subreaper above us (conmon, the shim) adopts it. */
      e.pid = -1;
      ret = 0;
      goto out;
    }
  if (exec_wait_foreground (&e, o, tty_sock, &tty, &forwarded, exit_status, err) < 0)
    goto fail;
  e.pid = -1;
  ret = 0;
  goto out;

fail:
  kill_child (&e);
out:
  tty_relay_finish (&tty);
  if (tty_sock >= 0)
    close (tty_sock);
  if (blocked)
    sigprocmask (SIG_SETMASK, &saved_mask, NULL);
  exec_ctx_free (&e);
  return ret;
}
