/* The systemd cgroup driver (--systemd-cgroup, --cgroup-manager systemd): the
 * container's cgroup is a transient scope that systemd makes, with Delegate=yes,
 * rather than a directory written behind systemd's back (systemd's cgroup delegation
 * rules: outside a delegated unit, its tree is its own). A scope cannot exist
 * without a process, so the init is cloned first, waits, and is named in the scope's
 * PIDs; the cgroup's path is then read back from the init, and only files inside it
 * are written (by the v1/v2 backend, as for any cgroup). The limits are given to
 * systemd as unit properties as well: it writes them again at every daemon-reload,
 * and would write its defaults over ours otherwise. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/bus_identity.h"
#include "runtime/cgroup/systemd_bus.h"
#include "runtime/cgroup/systemd_props.h"

static bool
ends_with (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

/* Whether PATH's last component is UNIT: the unit's own cgroup. */
static bool
is_unit_cgroup (const char *path, const char *unit)
{
  const char *slash = strrchr (path, '/');
  return slash && strcmp (slash + 1, unit) == 0;
}

/* systemd's unit name alphabet (unit-name.c): the rest would be refused by it with a
   less clear message. */
static bool
valid_unit_part (const char *s)
{
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr (":-_.\\@", *s)))
      return false;
  return true;
}

int
cgroup_systemd_plan (struct cgroup *cg, const char *cgroups_path, const char *id, bool user, struct sbx_error *err)
{
  _cleanup_free_ char *copy = xstrdup (cgroups_path ? cgroups_path : "");
  char *slice = copy, *prefix = NULL, *name = NULL;
  if (!sd_manager_running (user))
    return user ? sbx_error_set (err, 0,
                                 "--systemd-cgroup: no systemd user manager runs for uid %u (no D-Bus socket in "
                                 "$XDG_RUNTIME_DIR); use the cgroupfs manager",
                                 (unsigned) bus_identity_uid ())
                : sbx_error_set (err, 0, "--systemd-cgroup: systemd is not running on this host (no "
                                         "/run/systemd/system); use the cgroupfs manager");
  if (*copy)
    {
      prefix = strchr (slice, ':');
      name = prefix ? strchr (prefix + 1, ':') : NULL;
      if (!name || strchr (name + 1, ':'))
        return sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not of the form slice:prefix:name (--systemd-cgroup)",
                              cgroups_path);
      *prefix++ = '\0';
      *name++ = '\0';
    }
  if (!*slice)
    slice = user ? "user.slice" : "system.slice";
  if (!name || !*name)
    {
      prefix = "sbx-oci";
      name = (char *) id;
    }
  if (!ends_with (slice, ".slice") || !valid_unit_part (slice) || !valid_unit_part (prefix) || !valid_unit_part (name))
    return sbx_error_set (err, 0, "linux.cgroupsPath: '%s' does not name a systemd slice and scope", cgroups_path);
  if (ends_with (name, ".slice"))
    return sbx_error_set (err, 0,
                          "linux.cgroupsPath: '%s': a container in a slice of its own is not supported by the "
                          "systemd driver (name a scope: slice:prefix:name)",
                          cgroups_path);
  cg->systemd_slice = xstrdup (slice);
  cg->systemd_unit = *prefix ? xasprintf ("%s-%s.scope", prefix, name) : xasprintf ("%s.scope", name);
  if (strlen (cg->systemd_unit) > 255)
    return sbx_error_set (err, 0, "linux.cgroupsPath: '%s': the unit name is longer than systemd allows", cgroups_path);
  cg->systemd_user = user;
  return 0;
}

/* PID's cgroup (0: the caller's) as its /proc/PID/cgroup says: the unified line
   ("0::/x") when the host has one, else systemd's named v1 hierarchy. */
static char *
cgroup_of_pid (pid_t pid, enum cgroup_mode mode)
{
  char path[64], line[4096];
  const char *want = mode == CGROUP_MODE_LEGACY ? ":name=systemd:" : "0::";
  char *found = NULL;
  FILE *f;
  if (pid)
    snprintf (path, sizeof path, "/proc/%d/cgroup", (int) pid);
  else
    strcpy (path, "/proc/self/cgroup");
  f = fopen (path, "re");
  if (!f)
    return NULL;
  while (!found && fgets (line, sizeof line, f))
    {
      char *at = mode == CGROUP_MODE_LEGACY ? strstr (line, want) : (strncmp (line, want, 3) == 0 ? line : NULL);
      if (at)
        {
          at += strlen (want);
          at[strcspn (at, "\n")] = '\0';
          found = xstrdup (at);
        }
    }
  fclose (f);
  return found;
}

/* The keeper (struct cgroup, systemd_hold): a child that waits to be killed, by
   end's kill of the scope or, if the runtime dies first, by its parent-death signal.
   It never runs the container's code nor enters its namespaces; it is the OOM
   killer's last choice where the caller may say so (root). */
static pid_t
start_keeper (struct sbx_error *err)
{
  pid_t ppid = getpid (), pid = fork ();
  if (pid < 0)
    return sbx_error_set (err, errno, "fork (the scope's keeper)");
  if (pid == 0)
    {
      int fd;
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != ppid)
        _exit (0);
      /* none of the runtime's fds: a pipe's write end held here would keep its
         reader from ever seeing EOF */
      syscall (SYS_close_range, 0, ~0U, 0);
      fd = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
      if (fd >= 0)
        {
          (void) !write (fd, "-1000", 5);
          close (fd);
        }
      for (;;)
        pause ();
    }
  return pid;
}

static void
stop_keeper (struct cgroup *cg)
{
  if (cg->systemd_keeper <= 0)
    return;
  kill (cg->systemd_keeper, SIGKILL);
  while (waitpid (cg->systemd_keeper, NULL, 0) < 0 && errno == EINTR)
    ;
  cg->systemd_keeper = 0;
}

int
cgroup_systemd_start (struct cgroup *cg, pid_t pid, const char *id, const struct oci_resources *r,
                      yajl_val annotations, struct sbx_error *err)
{
  _cleanup_free_ char *description = xasprintf ("sbx-oci container %s", id);
  struct sd_scope_spec spec = { cg->systemd_unit, cg->systemd_slice, description, pid, 0, r, annotations };
  struct sd_bus_conn *bus;
  int ret;
  if (cg->systemd_hold && (cg->systemd_keeper = spec.keeper = start_keeper (err)) < 0)
    {
      cg->systemd_keeper = 0;
      return -1;
    }
  bus = sd_bus_connect (cg->systemd_user, err);
  if (!bus)
    {
      stop_keeper (cg);
      return sbx_error_wrap (err, "--systemd-cgroup");
    }
  /* From the call on, the abort stops and resets the unit: a start job that failed or
     timed out leaves it loaded ("failed"), and the next create with this id would
     find it there (UnitExists). */
  cg->systemd_started = true;
  ret = sd_manager_call (bus, "StartTransientUnit", sd_props_fill_start, &spec, true, NULL, err);
  sd_bus_close (bus);
  if (ret < 0)
    return sbx_error_wrap (err, "start %s", cg->systemd_unit);
  free (cg->path);
  cg->path = cgroup_of_pid (pid, cg->mode);
  if (!cg->path || !is_unit_cgroup (cg->path, cg->systemd_unit))
    {
      sbx_error_set (err, 0, "systemd started %s, but the container's init is in cgroup %s", cg->systemd_unit,
                     cg->path ? cg->path : "(unknown)");
      free (cg->path);
      cg->path = NULL; /* not ours: the abort must not touch it */
      return -1;
    }
  /* v2: systemd made it, nothing to make. v1 (a hybrid or legacy host): systemd made it
     in the hierarchies it manages; the others' directories are ours, under the same
     path, and the init joins them. */
  if (cg->mode == CGROUP_MODE_UNIFIED)
    {
      if (cg->ops->open (cg, err) < 0)
        return -1;
      if (cg->v2_dirfd < 0)
        return sbx_error_set (err, ENOENT, "the cgroup of %s (%s) is gone", cg->systemd_unit, cg->path);
      return 0;
    }
  return cg->ops->create (cg, err) < 0 || cg->ops->enter (cg, pid, err) < 0 ? -1 : 0;
}

int
cgroup_systemd_adopt (struct cgroup *cg, struct sbx_error *err)
{
  free (cg->path);
  cg->path = cgroup_of_pid (0, cg->mode);
  if (!cg->path || !is_unit_cgroup (cg->path, cg->systemd_unit))
    return sbx_error_set (err, 0, "the container's init is in cgroup %s, not in %s", cg->path ? cg->path : "(unknown)",
                          cg->systemd_unit);
  cg->systemd_started = true;
  return cg->ops->open (cg, err);
}

int
cgroup_systemd_update (const struct cgroup *cg, const struct oci_resources *r, struct sbx_error *err)
{
  struct sd_update_spec spec = { cg->systemd_unit, r };
  struct sd_bus_conn *bus = sd_bus_connect (cg->systemd_user, err);
  int ret;
  if (!bus)
    return -1;
  ret = sd_manager_call (bus, "SetUnitProperties", sd_props_fill_update, &spec, false, NULL, err);
  sd_bus_close (bus);
  return ret < 0 ? sbx_error_wrap (err, "update %s", cg->systemd_unit) : 0;
}

/* The unit stopped, and its failed state (a scope whose processes were killed can
   end "failed") reset, so that nothing of it is left in systemctl's list. A unit
   already gone is not an error: an empty scope stops by itself. */
static int
stop_unit (const struct cgroup *cg, struct sbx_error *err)
{
  bool gone = false;
  struct sbx_error ignored = { 0 };
  struct sd_bus_conn *bus = sd_bus_connect (cg->systemd_user, err);
  if (!bus)
    return -1;
  if (sd_manager_call (bus, "StopUnit", sd_props_fill_stop, cg->systemd_unit, true, &gone, err) < 0)
    {
      sd_bus_close (bus);
      return sbx_error_wrap (err, "stop %s", cg->systemd_unit);
    }
  sd_manager_call (bus, "ResetFailedUnit", sd_props_fill_unit, cg->systemd_unit, false, &gone, &ignored);
  sbx_error_clear (&ignored);
  sd_bus_close (bus);
  return 0;
}

int
cgroup_systemd_end (struct cgroup *cg, struct sbx_error *err)
{
  /* Every task killed first: systemd's own stop would send SIGTERM and wait
     TimeoutStopSec for it (an init ignores it), then what systemd removes is empty. */
  bool ours = cg->ops && cg->path && is_unit_cgroup (cg->path, cg->systemd_unit);
  if (ours && cg->ops->release (cg, err) < 0)
    return -1;
  stop_keeper (cg); /* killed with the rest already, if it was in the scope */
  if (stop_unit (cg, err) < 0)
    return -1;
  /* v1: the hierarchies systemd does not manage were ours to make (ENOENT is fine) */
  return ours ? cg->ops->destroy (cg, err) : 0;
}

/* A server's own scope: the calling process moved by systemd into UNIT (in the
   manager's default slice, as for a container without cgroupsPath), Delegate=yes, no
   limits of its own. *PATH: the scope's cgroup, read back from ourselves. It ends
   when its last process does; systemd then removes it and what is below it. */
int
cgroup_systemd_own_scope (const char *unit, bool user, char **path, struct sbx_error *err)
{
  _cleanup_free_ char *description = xasprintf ("sbx-oci %s", unit);
  struct oci_resources none = { 0 };
  struct sd_scope_spec spec = { unit, user ? "user.slice" : "system.slice", description, getpid (), 0, &none, NULL };
  struct sd_bus_conn *bus = sd_bus_connect (user, err);
  int ret;
  if (!bus)
    return -1;
  ret = sd_manager_call (bus, "StartTransientUnit", sd_props_fill_start, &spec, true, NULL, err);
  sd_bus_close (bus);
  if (ret < 0)
    return sbx_error_wrap (err, "start %s", unit);
  *path = cgroup_of_pid (0, CGROUP_MODE_UNIFIED);
  if (!*path || !is_unit_cgroup (*path, unit))
    return sbx_error_set (err, 0, "systemd started %s, but this process is in cgroup %s", unit,
                          *path ? *path : "(unknown)");
  return 0;
}
