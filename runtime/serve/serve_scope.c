/* `serve` on a host whose PID 1 is systemd (cgroup v2): the server's sandboxes'
 * cgroups, kept slots included, go in a scope of the server's own that systemd makes
 * with Delegate=yes (sbx-oci-serve-PID.scope: in system.slice as root, in the user's
 * own manager otherwise), never at the root of systemd's tree (/sbx-oci) behind its
 * back. The server moves itself into a leaf of that scope ("server"; a cgroup with
 * processes cannot give its controllers to children), so its warm interpreter starts
 * there, and the scope gives its children the controllers it was delegated. A user
 * gets memory and pids limits this way without root; a controller the user's manager
 * was not delegated is named. When the server's last process ends, systemd removes
 * the scope and everything below it: a server killed leaves nothing to sweep. */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/cgroup_fs.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/serve/server.h"

static bool
has_word (const char *list, const char *word)
{
  size_t n = strlen (word);
  for (const char *p = list; (p = strstr (p, word)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return true;
  return false;
}

/* WANT: "+memory +pids ..." for every controller the scope has; -1 if memory or pids,
   which every sandbox's limits need, is not among them. */
static int
controllers_to_enable (int scope, char *want, size_t len, struct sbx_error *err)
{
  static const char *const needed[] = { "memory", "pids" };
  char avail[512] = { 0 };
  size_t n = 0;
  _cleanup_close_ int fd = openat (scope, "cgroup.controllers", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, avail, sizeof avail - 1) < 0)
    return sbx_error_set (err, errno, "read cgroup.controllers");
  for (size_t i = 0; i < sizeof needed / sizeof *needed; i++)
    if (!has_word (avail, needed[i]))
      return sbx_error_set (err, 0,
                            "serve: the %s controller is not delegated to this server's scope (systemd's "
                            "Delegate= of the unit above it%s)",
                            needed[i], geteuid () ? ", user@.service for a user" : "");
  for (char *save = NULL, *c = strtok_r (avail, " \n", &save); c; c = strtok_r (NULL, " \n", &save))
    n += (size_t) snprintf (want + n, len - n, "%s+%s", n ? " " : "", c);
  return 0;
}

int
serve_scope_enter (struct serve *s, struct sbx_error *err)
{
  _cleanup_free_ char *unit = NULL, *path = NULL;
  _cleanup_close_ int root = -1, scope = -1, leaf = -1;
  char want[768] = { 0 };
  if (!sandbox_systemd_host (s->ctx) || cgroup_detect_mode () != CGROUP_MODE_UNIFIED)
    return 0; /* the sandboxes' cgroups go under /sbx-oci, as root only */
  unit = xasprintf ("sbx-oci-serve-%d.scope", (int) getpid ());
  if (cgroup_systemd_own_scope (unit, !s->ctx->host_root, &path, err) < 0)
    return sbx_error_wrap (err, "serve");
  root = open ("/sys/fs/cgroup", O_PATH | O_DIRECTORY | O_CLOEXEC);
  scope = root < 0 ? -1 : openat (root, path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (scope < 0)
    return sbx_error_set (err, errno, "serve: open cgroup %s", path);
  if (controllers_to_enable (scope, want, sizeof want, err) < 0)
    return -1;
  if ((mkdirat (scope, "server", 0755) < 0 && errno != EEXIST)
      || (leaf = openat (scope, "server", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
    return sbx_error_set (err, errno, "serve: mkdir %s/server", path);
  if (cgroup_write_at (leaf, "cgroup.procs", "0", err) < 0
      || cgroup_write_at (scope, "cgroup.subtree_control", want, err) < 0)
    return sbx_error_wrap (err, "serve: cgroup %s", path);
  s->ctx->cgroup_parent = s->cgroup_parent = path;
  path = NULL;
  s->ctx->cgroup_delegated = !s->ctx->as_root;
  slog (s, "sandboxes' cgroups in %s (%s, made by systemd, Delegate=yes)", s->cgroup_parent, unit);
  return 0;
}
