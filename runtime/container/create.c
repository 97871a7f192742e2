/* create: the parent's side of the lifecycle (runtime.md steps 1-9); run, which goes on
 * from here in the foreground, is run.c.
 *
 * Everything that can be checked is checked before the first side effect: the
 * config is parsed, validated and planned (mounts, namespaces) first. From the
 * moment the state dir is claimed, every failure goes through container_abort(),
 * which undoes what was done (init killed, cgroup removed, state dir removed), so an
 * error never leaves a half-created container behind. */
#include "build-config.h"
#include "runtime/container/container.h"
#include "runtime/container/internal.h"
#include "runtime/linux/process_attrs.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

#include "hooks/hooks.h"
#include "oci/config.h"
#include "oci/resources.h"
#include "oci/seccomp_config.h"
#include "oci/state.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/cgroup_devices.h"
#include "runtime/container/exec_trampoline.h"
#include "runtime/container/foreground.h"
#include "runtime/linux/fs.h"
#include "runtime/container/init.h"
#include "runtime/linux/landlock.h"
#include "runtime/linux/mounts.h"
#include "runtime/linux/namespaces.h"
#include "runtime/container/reaper.h"
#include "runtime/linux/sealed_exe.h"
#include "runtime/linux/seccomp.h"
#include "runtime/container/spawn.h"
#include "runtime/container/statedir.h"
#include "runtime/linux/sync.h"
#include "runtime/linux/terminal.h"
#include "runtime/container/tty_relay.h"


void
container_init_struct (struct container *c, struct sbx_ctx *ctx, const struct create_opts *o)
{
  memset (c, 0, sizeof *c);
  c->ctx = ctx;
  c->o = o;
  c->bundle_fd = c->root_fd = c->state_fd = c->fifo_fd = -1;
  c->status_pipe[0] = c->status_pipe[1] = c->trampoline_fd = c->tty_sock = c->tty.master = -1;
  c->child.pid = c->child.pidfd = c->child.sync_fd = -1;
  join_fds_init (&c->join);
  for (int i = 0; i < SBX_NS_COUNT; i++)
    c->ns.join_fd[i] = -1;
  cgroup_init (&c->cg, CGROUP_MODE_NONE, NULL);
}

void
container_free (struct container *c)
{
  sync_set_server (-1, NULL, NULL);
  if (c->child.pidfd >= 0)
    close (c->child.pidfd);
  if (c->child.sync_fd >= 0)
    close (c->child.sync_fd);
  join_fds_close (&c->join);
  if (c->fifo_fd >= 0)
    close (c->fifo_fd);
  if (c->state_fd >= 0)
    close (c->state_fd);
  if (c->root_fd >= 0)
    close (c->root_fd);
  if (c->bundle_fd >= 0)
    close (c->bundle_fd);
  if (c->trampoline_fd >= 0)
    close (c->trampoline_fd);
  for (int i = 0; i < 2; i++)
    if (c->status_pipe[i] >= 0)
      close (c->status_pipe[i]);
  if (c->tty_sock >= 0)
    close (c->tty_sock);
  tty_relay_finish (&c->tty);
  ns_plan_close (&c->ns);
  cgroup_close (&c->cg);
  oci_resources_clear (&c->resources);
  oci_seccomp_clear (&c->seccomp_config);
  landlock_plan_free (&c->landlock);
  sbx_seccomp_free (&c->seccomp);
  mounts_plan_free (c->mount_plans, c->config ? c->config->n_mounts : 0);
  oci_config_free (c->config);
  /* state strings point into c->bundle etc. or were allocated here */
  free (c->state.id);
  free (c->state.created);
  free (c->state.owner);
  free (c->state.cgroup_path);
  free (c->state.systemd_unit);
  free (c->own_cgroup);
  free (c->bundle);
  free (c->rootfs);
  free (c->listen_env);
}

/* The end of a container: its cgroup removed, or a kept one emptied. */
int
container_end_cgroup (struct container *c, struct sbx_error *err)
{
  if (c->cg.systemd_unit)
    return c->cg.systemd_started ? cgroup_systemd_end (&c->cg, err) : 0;
  if (c->kept_cgroup && c->cg.ops->release (&c->cg, err) == 0)
    return 0;
  sbx_error_clear (err);
  return c->cg.ops->destroy (&c->cg, err);
}

/* Undo a partial create. Errors here are secondary: the first error is what the
 * user needs to see, so these are logged, not returned. */
void
container_abort (struct container *c)
{
  struct sbx_error e = { 0 };
  spawn_kill (&c->child);
  c->cg.aborting = true;
  if (c->pid_file_written)
    unlink (c->o->pid_file);
  if (c->cgroup_created && c->cg.ops && container_end_cgroup (c, &e) < 0)
    {
      sbx_warn (c->ctx, "cleanup: %s", e.msg);
      sbx_error_clear (&e);
    }
  if (c->state_fd >= 0 && statedir_remove (c->root_fd, c->o->id, &e) < 0)
    {
      sbx_warn (c->ctx, "cleanup: %s", e.msg);
      sbx_error_clear (&e);
    }
}

/* ---------------------------------------------------------------- 1: load */

/* A new user namespace with no uidMappings and no gidMappings maps the caller to the
 * container's root, one id each, as crun does (runc refuses): as root that is 0 -> 0,
 * which gives the container no host id it would not have without the namespace,
 * and keeps the namespace's limits on its capabilities. */
static void
map_caller_when_unmapped (struct oci_linux *l)
{
  const struct oci_namespace *user = &l->ns[SBX_NS_USER];
  if (!user->present || user->path || l->n_uid_mappings || l->n_gid_mappings)
    return;
  l->uid_mappings = xmalloc0 (sizeof *l->uid_mappings);
  l->gid_mappings = xmalloc0 (sizeof *l->gid_mappings);
  *l->uid_mappings = (struct oci_id_mapping){ .container_id = 0, .host_id = geteuid (), .size = 1 };
  *l->gid_mappings = (struct oci_id_mapping){ .container_id = 0, .host_id = getegid (), .size = 1 };
  l->n_uid_mappings = l->n_gid_mappings = 1;
}

static int
load_bundle (struct container *c, bool no_terminal, struct sbx_error *err)
{
  struct oci_parse_ctx pctx = { .warn = sbx_log_warn_cb, .warn_data = &c->ctx->log, .no_terminal = no_terminal };
  const char *bundle = c->o->bundle ? c->o->bundle : ".";
  struct stat st;
  int rootfs_fd = -1;

  c->bundle = fs_resolve (bundle, O_DIRECTORY, &c->bundle_fd);
  if (!c->bundle)
    return sbx_error_set (err, errno, "--bundle %s", bundle);
  if (c->o->config_json)
    c->config = oci_config_parse (xmemdup (c->o->config_json, c->o->config_len), c->o->config_len, "config",
                                  &pctx, err);
  else
    c->config = oci_config_load (c->o->config_path ? AT_FDCWD : c->bundle_fd,
                                 c->o->config_path ? c->o->config_path : "config.json", &pctx, err);
  if (!c->config)
    return -1;
  map_caller_when_unmapped (&c->config->linux_);
  if (oci_config_validate (c->config, c->ctx->as_root, err) < 0)
    return -1;
  if (c->config->root_path[0] == '/')
    c->rootfs = xstrdup (c->config->root_path);
  else
    c->rootfs = xasprintf ("%s/%s", c->bundle, c->config->root_path);
  {
    char *real = fs_resolve (c->rootfs, 0, &rootfs_fd);
    if (!real)
      return sbx_error_set (err, errno, "root.path %s", c->rootfs);
    free (c->rootfs);
    c->rootfs = real;
  }
  if (fstat (rootfs_fd, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      close (rootfs_fd);
      return sbx_error_set (err, ENOTDIR, "root.path %s", c->rootfs);
    }
  close (rootfs_fd);
  if (strcmp (c->rootfs, "/") == 0)
    return sbx_error_set (err, 0, "root.path: the host's / cannot be a container's root");
  return 0;
}

/* systemd-style socket activation, as runc does: when the caller hands us LISTEN_FDS
 * sockets (and LISTEN_PID is us), they go to the container as fds 3..3+N-1, before
 * any --preserve-fds ones, with LISTEN_FDS=N and LISTEN_PID=1 in its environment. */
static void
apply_socket_activation (struct container *c)
{
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  struct oci_process *p = c->config->process;
  const char **env;
  size_t n = 0;
  long nfds;
  if (!fds || !pid || !p || strtol (pid, NULL, 10) != (long) getpid ())
    return;
  nfds = strtol (fds, NULL, 10);
  if (nfds <= 0 || nfds > 1024)
    return;
  c->listen_fds = (int) nfds;
  c->listen_env = xasprintf ("LISTEN_FDS=%ld", nfds);
  env = xmalloc0 ((p->n_env + 3) * sizeof (char *));
  for (size_t i = 0; i < p->n_env; i++)
    if (strncmp (p->env[i], "LISTEN_FDS=", 11) != 0 && strncmp (p->env[i], "LISTEN_PID=", 11) != 0)
      env[n++] = p->env[i];
  env[n++] = c->listen_env;
  env[n++] = "LISTEN_PID=1";
  free (p->env);
  p->env = env;
  p->n_env = n;
}

/* ---------------------------------------------------------------- 2: plan */

static enum cgroup_mode
choose_cgroup_mode (struct container *c, bool wants_limits)
{
  enum cgroup_mode mode;
  if (c->ctx->cgroup_manager == CGROUP_MANAGER_DISABLED)
    return CGROUP_MODE_NONE;
  /* --systemd-cgroup as a user: the user's own manager makes the scope */
  if (c->ctx->systemd_cgroup && !c->ctx->host_root)
    return cgroup_detect_mode ();
  mode = cgroup_detect_mode ();
  if (!c->ctx->as_root) /* an unprivileged caller has no cgroup to manage, unless delegated one */
    return c->ctx->cgroup_delegated && mode == CGROUP_MODE_UNIFIED ? mode : CGROUP_MODE_NONE;
  /* Root of a user namespace (rootless podman): the host's cgroups are not its own.
     As runc and crun do for a rootless caller, go without a cgroup unless limits were
     asked for, and then try only on cgroup v2, where a parent may be delegated (the
     attempt's error names the directory); v1 hierarchies are never delegated. */
  if (!c->ctx->host_root && (!wants_limits || mode != CGROUP_MODE_UNIFIED))
    return CGROUP_MODE_NONE;
  return mode;
}

/* Without a cgroup, the device rules cannot be enforced, but often they have nothing
   to enforce: the container's /dev holds only the nodes linux.devices lists, and a
   new node needs CAP_MKNOD in the host's user namespace. podman sends its deny-all
   rule even with --cgroups=disabled, and crun accepts it; so do we when the process
   cannot make a node, and name the field when it could. */
static int
check_devices_without_cgroup (const struct container *c, struct sbx_error *err)
{
  const struct oci_process *p = c->config->process;
  const struct oci_device_rule *last = c->resources.n_devices ? &c->resources.devices[c->resources.n_devices - 1] : NULL;
  bool allows_all = last && last->allow && last->type == 'a' && strcmp (last->access, "rwm") == 0;
  bool can_mknod = c->ctx->host_root && !c->config->linux_.ns[SBX_NS_USER].present
                   && p && p->has_capabilities && (p->caps.bounding & (UINT64_C (1) << CAP_MKNOD));
  if (!c->resources.n_devices || allows_all || !can_mknod)
    return 0;
  return sbx_error_set (err, 0,
                        "linux.resources.devices: cannot be enforced without a cgroup (%s) while the process may "
                        "create device nodes (CAP_MKNOD in process.capabilities.bounding)",
                        c->ctx->cgroup_manager == CGROUP_MANAGER_DISABLED ? "--cgroup-manager is disabled"
                                                                          : "this user cannot manage cgroups");
}

/* --systemd-cgroup: the cgroup is a scope that systemd makes once the init exists
   (cgroup_systemd.c): nothing to make before, so no clone into it (the init's cgroup
   namespace is made once it has been moved). The system's manager for root in the
   host's user namespace, the user's own otherwise. */
static int
plan_systemd_cgroup (struct container *c, enum cgroup_mode mode, struct sbx_error *err)
{
  cgroup_init (&c->cg, mode, NULL);
  if (cgroup_systemd_plan (&c->cg, c->config->linux_.cgroups_path, c->o->id, !c->ctx->host_root, err) < 0)
    return -1;
  if (mode != CGROUP_MODE_UNIFIED)
    {
      c->cg.v1_mask = cgroup_v1_mask_for (&c->resources, c->one_shot, c->watched);
      c->cg.v1_required = cgroup_v1_required_for (&c->resources);
    }
  c->cg.no_clone_into = true;
  c->cg.systemd_hold = c->watched; /* the OOM kill and the CPU are read after the init */
  return 0;
}

static int
plan (struct container *c, struct sbx_error *err)
{
  enum cgroup_mode mode;
  struct oci_resources limits;
  if (mounts_plan (c->config, &c->mount_plans, err) < 0
      || oci_resources_parse (c->config->linux_.resources, "linux.resources", &c->resources, err) < 0)
    return -1;
  limits = c->resources;
  limits.has_devices = false; /* the device rules alone are judged by check_devices_without_cgroup */
  mode = choose_cgroup_mode (c, !oci_resources_empty (&limits));
  if (mode == CGROUP_MODE_NONE && !oci_resources_empty (&limits))
    {
      /* Fail closed: limits that nothing would enforce are an error, not a warning. */
      return sbx_error_set (err, 0, "linux.resources: cgroup limits were requested but %s",
                            c->ctx->cgroup_manager == CGROUP_MANAGER_DISABLED ? "--cgroup-manager is disabled"
                            : !c->ctx->host_root ? "this user cannot manage cgroups (not root in the host's user "
                                                   "namespace, and no cgroup v2 parent is delegated)"
                                                 : "this user cannot manage cgroups");
    }
  if (mode == CGROUP_MODE_NONE && check_devices_without_cgroup (c, err) < 0)
    return -1;
  if (oci_seccomp_parse (c->config->linux_.seccomp, "linux.seccomp", &c->seccomp_config, err) < 0
      || landlock_plan_build (c->config, &c->ctx->log, &c->landlock, err) < 0
      || reaper_wanted (c->config, &c->with_reaper, &c->reaper_hold, err) < 0
      || (c->config->process && process_check_rlimits (c->config->process, err) < 0))
    return -1;
  c->seccomp_config.text = c->config->raw;
  if (c->ctx->systemd_cgroup && mode != CGROUP_MODE_NONE)
    {
      if (plan_systemd_cgroup (c, mode, err) < 0)
        return -1;
    }
  else if (mode != CGROUP_MODE_NONE)
    {
      _cleanup_free_ char *path = cgroup_resolve_path (c->config->linux_.cgroups_path, c->o->id,
                                                       c->ctx->systemd_cgroup, c->ctx->cgroup_parent, err);
      if (!path)
        return -1;
      c->kept_cgroup = c->o->kept_cgroup && (mode == CGROUP_MODE_UNIFIED ? &cgroup_v2_ops : &cgroup_v1_ops)->recycle;
      cgroup_init (&c->cg, mode, c->kept_cgroup ? c->o->kept_cgroup : path);
      if (c->kept_cgroup)
        c->own_cgroup = xstrdup (path);
      if (mode != CGROUP_MODE_UNIFIED)
        {
          c->cg.v1_mask = cgroup_v1_mask_for (&c->resources, c->one_shot, c->watched);
          c->cg.v1_required = cgroup_v1_required_for (&c->resources);
          if (c->resources.n_unified)
            return sbx_error_set (err, 0, "linux.resources.unified.%s: needs cgroup v2; this host's controllers are "
                                          "on cgroup v1", c->resources.unified[0].key);
        }
    }
  c->cg.no_clone_into |= c->resources.has_pids_limit && c->resources.pids_limit == 0;
  return ns_plan_build (c->config, mode == CGROUP_MODE_UNIFIED && !c->cg.no_clone_into, &c->ns, err);
}

/* ------------------------------------------------------- 3: state, cgroup */

/* CG made anew at PATH, as it was set up for the create (mode and masks). */
static int
remake_cgroup (struct container *c, const char *path, struct sbx_error *err)
{
  struct cgroup old = c->cg;
  cgroup_init (&c->cg, old.mode, path);
  c->cg.v1_mask = old.v1_mask;
  c->cg.v1_required = old.v1_required;
  c->cg.no_clone_into = old.no_clone_into;
  cgroup_close (&old);
  return c->cg.ops->create (&c->cg, err);
}

/* A kept cgroup found in place is recycled (cgroup_kept.c). One that cannot be (its
   reason logged) is removed, any task in it killed (a previous container's), and
   made anew; one that cannot even be removed (a task stuck in the kernel) is left,
   and the container gets a cgroup of its own instead. */
static int
recycle_kept (struct container *c, struct sbx_error *err)
{
  struct sbx_error why = { 0 };
  if (!cgroup_was_there (&c->cg) || c->cg.ops->recycle (&c->cg, &why) == 0)
    return 0;
  sbx_log_write (&c->ctx->log, SBX_LOG_INFO, "%s: made anew", why.msg);
  sbx_error_clear (&why);
  if (c->cg.ops->destroy (&c->cg, &why) == 0)
    return remake_cgroup (c, c->cg.path, err);
  sbx_log_write (&c->ctx->log, SBX_LOG_WARNING, "kept cgroup %s: %s: this sandbox has a cgroup of its own",
                 c->cg.path, why.msg);
  sbx_error_clear (&why);
  c->kept_cgroup = false;
  return remake_cgroup (c, c->own_cgroup, err);
}

/* The config's linux.resources written into the cgroup, with the device allow-list. */
static int
apply_resources (struct container *c, struct sbx_error *err)
{
  struct cgroup_device_defaults defaults = { c->config->linux_.devices, c->config->linux_.n_devices };
  struct oci_resources applied = c->resources;
  /* The root of a user namespace (a delegated v2 cgroup) may not load the device
     filter (a BPF program), and needs none: it can make no device node, and binds
     only the listed ones (check_devices_without_cgroup's reasoning); runc and crun
     skip the device rules rootless too. */
  bool device_rules = c->ctx->host_root;
  applied.has_devices &= device_rules;
  return c->cg.ops->apply (&c->cg, &applied, device_rules ? &defaults : NULL, &c->ctx->log, err);
}

static int
claim (struct container *c, bool with_fifo, struct sbx_error *err)
{
  c->state_fd = statedir_claim (c->root_fd, c->o->id, err);
  if (c->state_fd < 0)
    return -1;
  /* Held until create returns: a concurrent delete waits instead of removing a
   * state dir that is still being filled. */
  if (statedir_lock (c->state_fd, err) < 0)
    return -1;
  /* The config as it was at create time: changes to config.json after create must
   * not affect the container (runtime.md), and exec/hooks/delete need it. Written
   * first: a create killed before its record leaves what the annotations name (the
   * temporary workdir of `sbx-oci python`) to whoever sweeps the half-made dir. */
  if (fs_write_atomic (c->state_fd, CONFIG_SNAPSHOT, c->config->raw, c->config->raw_len, 0600, err) < 0)
    return -1;
  if (with_fifo)
    {
      if (mkfifoat (c->state_fd, EXEC_FIFO, 0600) < 0)
        return sbx_error_set (err, errno, "create exec.fifo");
      /* O_RDWR does not block, and keeps the fifo readable by the init after it
       * leaves the host's filesystem behind. */
      c->fifo_fd = openat (c->state_fd, EXEC_FIFO, O_RDWR | O_CLOEXEC);
      if (c->fifo_fd < 0)
        return sbx_error_set (err, errno, "open exec.fifo");
    }
  if (c->cg.mode != CGROUP_MODE_NONE)
    {
      /* Limits are in place before the init joins: they hold from its first instruction. */
      if (c->cg.systemd_unit)
        return 0; /* made once the init exists: join_systemd_cgroup */
      c->cgroup_created = true;
      if (c->cg.ops->create (&c->cg, err) < 0 || (c->kept_cgroup && recycle_kept (c, err) < 0)
          /* one this create made is the container's: if the create is killed before
             it records the state, a delete finds it here (a cgroup that was there
             before, or serve's kept one, is not the container's to remove) */
          || (!c->kept_cgroup && !cgroup_was_there (&c->cg) && statedir_record_cgroup (c->state_fd, c->cg.path, err) < 0)
          || apply_resources (c, err) < 0)
        return -1;
    }
  return 0;
}

/* --systemd-cgroup: the init, cloned and waiting, is moved into a scope that systemd
   makes for it; then the limits are written there, before it goes on. */
static int
join_systemd_cgroup (struct container *c, struct sbx_error *err)
{
  c->cgroup_created = true;
  if (cgroup_systemd_start (&c->cg, c->child.pid, c->o->id, &c->resources, c->config->annotations, err) < 0
      || apply_resources (c, err) < 0)
    return -1;
  c->child.in_cgroup = true;
  free (c->state.cgroup_path);
  c->state.cgroup_path = xstrdup (c->cg.path);
  return 0;
}

/* Made if missing (idempotent, and no container's): the seccomp cache lives in it. */
static int
open_state_root (struct container *c, struct sbx_error *err)
{
  c->root_fd = statedir_open_root (c->ctx->root, true, err);
  return c->root_fd < 0 ? -1 : 0;
}

/* Compiled, or taken from the cache, before anything is claimed: a profile that does
 * not compile leaves no container behind. Without `compile` it only needs to say
 * whether the exec trampoline may run (container_create_common): a hit says so without parsing
 * the rules, and a miss parses them but leaves the compiling to the second call, which
 * is in the sealed re-exec when the trampoline does not fit. */
static int
prepare_seccomp (struct container *c, bool compile, struct sbx_error *err)
{
  _cleanup_free_ char *cache = NULL;
  if (!c->config->linux_.seccomp)
    return 0;
  /* The state root holds the compiled-filter cache ("@" cannot start an id). */
  cache = xasprintf ("%s/@seccomp-cache", c->ctx->root);
  return sbx_seccomp_prepare (&c->seccomp_config, cache, compile, &c->ctx->log, &c->seccomp, err);
}

static void
fill_state (struct container *c)
{
  struct sbx_state *s = &c->state;
  s->id = xstrdup (c->o->id);
  s->bundle = c->bundle;
  s->rootfs = c->rootfs;
  {
    char now[40];
    rfc3339_now (now, sizeof now);
    s->created = xstrdup (now);
  }
  s->owner = geteuid () == 0 ? xstrdup ("root") : xasprintf ("%d", (int) geteuid ());
  s->annotations = c->config->annotations;
  s->cgroup_mode = c->cg.mode;
  s->cgroup_path = xstrdup (c->cg.path ? c->cg.path : "");
  s->cgroup_v1_mask = c->cg.v1_mask;
  s->systemd_unit = c->cg.systemd_unit ? xstrdup (c->cg.systemd_unit) : NULL;
  s->systemd_user = c->cg.systemd_user;
  s->has_process = c->config->process != NULL;
  s->has_cgroupns = c->ns.cgroupns_new;
  s->userns = c->ns.userns || c->ns.userns_joined;
  for (int k = 0; k < SBX_HOOK_COUNT; k++)
    if (c->config->hooks[k].n)
      s->hooks_mask |= 1u << k;
}

/* ------------------------------------------------------------- 4: spawn */

static bool
has_hooks (const struct oci_config *cfg, enum sbx_hook_kind k)
{
  return cfg->hooks[k].n > 0;
}

int
container_run_hooks (struct container *c, enum sbx_hook_kind kind, const char *status, struct sbx_error *err)
{
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  if (!has_hooks (c->config, kind))
    return 0;
  json = oci_state_public_json (&c->state, status, false, &len);
  return hooks_run (&c->config->hooks[kind], sbx_hook_names[kind], json, len, err);
}

static int record (struct container *c, struct sbx_error *err);

/* The init's arguments: what the container is and how it runs. */
static void
init_args_fill (struct container *c, bool foreground)
{
  struct init_args *a = &c->init;
  a->ctx = c->ctx;
  a->config = c->config;
  a->mount_plans = c->mount_plans;
  a->ns = &c->ns;
  a->cg = &c->cg;
  a->state = &c->state;
  a->rootfs = c->rootfs;
  a->bundle = c->bundle;
  a->bundle_fd = c->bundle_fd;
  a->fifo_fd = c->fifo_fd;
  a->foreground = foreground;
  a->pdeathsig = !c->ns.two_stage;
  a->parent_hooks = has_hooks (c->config, SBX_HOOK_PRESTART) || has_hooks (c->config, SBX_HOOK_CREATE_RUNTIME);
  a->preserve_fds = c->listen_fds + c->o->preserve_fds;
  a->no_pivot = c->o->no_pivot;
  a->no_new_keyring = c->o->no_new_keyring;
  a->as_root = c->ctx->as_root;
  a->console_fd = -1;
  a->pty_slave = -1;
  for (int i = 0; i < 3; i++)
    a->stdio[i] = c->o->has_stdio ? c->o->stdio[i] : -1;
  a->seccomp = c->seccomp.insns ? &c->seccomp : NULL;
  a->landlock = &c->landlock;
  a->with_reaper = c->with_reaper && c->config->process;
  a->reaper_hold = a->with_reaper && c->reaper_hold;
  join_fds_init (&a->join);
  a->status_fd = -1;
  a->trampoline_fd = c->trampoline_fd;
  /* A foreground run with nothing to do between the init's setup and its exec (no
     hook runs in between, no seccomp listener needs the host pid): the state is
     recorded while the init sets up, and the init goes on to exec without waiting
     for SYNC_START. That saves a round trip between the two processes and takes
     the state's writes off the critical path (two wake-ups across CPUs, ~0.1 ms). */
  c->unacked_start = foreground && !has_hooks (c->config, SBX_HOOK_START_CONTAINER)
                     && !(a->seccomp && a->seccomp->notify);
  a->unacked_start = c->unacked_start;
}

static int
spawn (struct container *c, bool foreground, struct sbx_error *err)
{
  struct init_args *a = &c->init;
  init_args_fill (c, foreground);
  if (a->with_reaper && foreground)
    {
      if (pipe2 (c->status_pipe, O_CLOEXEC) < 0)
        return sbx_error_set (err, errno, "pipe");
      a->status_fd = c->status_pipe[1];
    }
  a->seccomp_listener_fd = -1;
  a->seccomp_metadata = c->seccomp_config.listener_metadata;
  if (a->seccomp && a->seccomp->notify)
    {
      a->seccomp_listener_fd = terminal_connect_socket (c->seccomp_config.listener_path, err);
      if (a->seccomp_listener_fd < 0)
        return sbx_error_wrap (err, "linux.seccomp.listenerPath");
    }
  if (c->config->process && c->config->process->terminal && c->o->console_socket)
    {
      a->console_fd = terminal_connect_socket (c->o->console_socket, err);
      if (a->console_fd < 0)
        return -1;
    }
  else if (c->config->process && c->config->process->terminal)
    {
      /* The init sends the master on its end, as to a console socket; we keep ours. */
      int sv[2];
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return sbx_error_set (err, errno, "process.terminal: socketpair");
      c->tty_sock = sv[0];
      a->console_fd = sv[1];
    }
  a->parent_fds[0] = c->state_fd;
  a->parent_fds[1] = c->root_fd;
  a->parent_fds[2] = -1;
  a->parent_fds[3] = -1;

  if (spawn_init (a, &c->cg, &c->child, err) < 0)
    {
      if (a->console_fd >= 0)
        close (a->console_fd);
      if (a->seccomp_listener_fd >= 0)
        close (a->seccomp_listener_fd);
      return -1;
    }
  /* the init has its own copies */
  if (c->status_pipe[1] >= 0)
    {
      close (c->status_pipe[1]);
      c->status_pipe[1] = -1;
    }
  if (a->console_fd >= 0)
    close (a->console_fd);
  if (a->seccomp_listener_fd >= 0)
    close (a->seccomp_listener_fd);
  if ((c->cg.systemd_unit && join_systemd_cgroup (c, err) < 0) || spawn_setup_child (a, &c->cg, &c->child, err) < 0)
    return -1;
  c->state.pid = c->child.pid;
  if (a->parent_hooks)
    {
      /* runtime.md steps 3-4: after the environment exists, before pivot_root. */
      if (sync_expect (c->child.sync_fd, SYNC_MOUNTS_DONE, NULL, NULL, err) < 0
          || container_run_hooks (c, SBX_HOOK_PRESTART, "creating", err) < 0
          || container_run_hooks (c, SBX_HOOK_CREATE_RUNTIME, "creating", err) < 0
          || sync_send (c->child.sync_fd, SYNC_HOOKS_DONE, NULL, 0, err) < 0)
        return -1;
    }
  if (c->unacked_start && record (c, err) < 0)
    {
      /* The init may have failed meanwhile (and taken its /proc entry along): its
         reason is the one to report. */
      struct sbx_error child = { 0 };
      if (sync_expect (c->child.sync_fd, SYNC_READY, NULL, NULL, &child) < 0)
        {
          sbx_error_clear (err);
          *err = child;
        }
      return -1;
    }
  if (sync_expect (c->child.sync_fd, SYNC_READY, NULL, NULL, err) < 0)
    return -1;
  if (c->init.reaper_hold && join_fds_receive (c->child.sync_fd, &c->join, err) < 0)
    return -1;
  sync_set_server (-1, NULL, NULL); /* the mounts are made */
  /* Set up: other commands may act on it from now on (record() says when not). */
  if (c->unacked_start && c->trampoline_fd < 0)
    flock (c->state_fd, LOCK_UN);
  if (c->fifo_fd >= 0)
    {
      close (c->fifo_fd); /* the init holds its own copy */
      c->fifo_fd = -1;
    }
  return 0;
}

/* ------------------------------------------------------------ 5: record */

static int
record (struct container *c, struct sbx_error *err)
{
  /* A zombie counts: a one-shot init may have set up, run its program and exited
   * while this process was not scheduled (nothing waits for the record before the
   * exec). It is our child and not reaped yet, so its pid cannot have been reused. */
  c->state.init_start_time = proc_start_time_of (c->child.pid, true);
  if (c->state.init_start_time == 0)
    return sbx_error_set (err, ESRCH, "the container init exited during setup");
  /* (the config snapshot was written when the dir was claimed) */
  if (statedir_write_state (c->state_fd, &c->state, err) < 0)
    return -1;
  if (c->o->pid_file && fs_write_pid_file (c->o->pid_file, c->child.pid, err) < 0)
    return -1;
  c->pid_file_written = c->o->pid_file != NULL;
  /* Recorded: other commands (kill, delete) may act on the container from now on;
     with the exec trampoline only once the init has exec'd (exec_trampoline.h), and
     when recorded during the setup only once the init is ready (spawn()). */
  if (c->trampoline_fd < 0 && !c->unacked_start)
    flock (c->state_fd, LOCK_UN);
  return 0;
}

int
container_create_common (struct container *c, bool foreground, struct sbx_error *err)
{
  bool seal, trampoline;
  /* A foreground run relays the terminal itself (tty_relay.h); create and run -d
     must hand it to someone. */
  if (load_bundle (c, !foreground && !c->o->console_socket, err) < 0)
    return -1;
  /* In a user namespace that does not map the binary's owner there is nothing to seal
     (sealed_exe.h). Otherwise: re-exec'd
     from the sealed binary before the rest of the planning, which would be done twice,
     unless a foreground run may use the exec trampoline instead (exec_trampoline.h),
     which the plan confirms. */
  seal = sealed_exe_needed (&c->config->linux_);
  trampoline = seal && exec_trampoline_may_fit (c->config, foreground);
  if (seal && !trampoline && sealed_exe_ensure (err) < 0)
    return -1;
  if (plan (c, err) < 0 || open_state_root (c, err) < 0)
    return -1;
  if (trampoline)
    {
      if (prepare_seccomp (c, false, err) < 0)
        return -1;
      c->trampoline_fd = exec_trampoline_open (!c->config->linux_.seccomp || c->seccomp.allows_execveat);
      if (c->trampoline_fd < 0 && sealed_exe_ensure (err) < 0)
        return -1;
      /* The runtime outlives the init's exec as the host's binary: out of reach of
         a container process that would see it (a bind of the host's /proc). */
      prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
  if (prepare_seccomp (c, true, err) < 0)
    return -1;
  apply_socket_activation (c);
  if (claim (c, !foreground, err) < 0)
    goto fail;
  fill_state (c);
  if (spawn (c, foreground, err) < 0 || (!c->unacked_start && record (c, err) < 0))
    goto fail;
  return 0;
fail:
  container_abort (c);
  return -1;
}

/* create: the state is on disk; hand the init over to whoever adopts it. */
int
container_commit (struct container *c, struct sbx_error *err)
{
  int32_t pid = c->child.pid;
  if (sync_send (c->child.sync_fd, SYNC_COMMITTED, &pid, sizeof pid, err) < 0
      || sync_expect (c->child.sync_fd, SYNC_COMMIT_ACK, NULL, NULL, err) < 0)
    return -1;
  return 0;
}

int
container_create (struct sbx_ctx *ctx, const struct create_opts *o, struct sbx_error *err)
{
  struct container c;
  int ret;
  container_init_struct (&c, ctx, o);
  ret = container_create_common (&c, false, err);
  if (ret == 0 && container_commit (&c, err) < 0)
    {
      container_abort (&c);
      ret = -1;
    }
  container_free (&c);
  return ret;
}
