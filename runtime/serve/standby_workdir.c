/* A standby takes a request that names directories of the client's: a --workdir
 * (issue 31: the Python client always does, run_python's files go there), and --rw
 * binds at /tmp/NAME (a Jupyter kernel's connection file and sockets, issue 43).
 *
 * The standby's sandbox was made with a fresh temporary workdir at /work and a /tmp of
 * its own, and nothing of anyone's has run in it yet. The client's directory is opened
 * and checked exactly as a one-shot run's (host_writable_open: the system paths
 * refused, idmapped when the sandbox user does not own it, never chowned), cloned as a
 * detached mount with a one-shot run's attributes (nosuid, nodev, the same idmap), and
 * attached in the sandbox's mount namespace (this process joins it for the move, and
 * comes back): over /work, or on a directory made for it in the sandbox's /tmp (a
 * tmpfs of the sandbox's own, which no program has touched yet: no link to follow).
 * The joined fork enters the new /work when its program comes (zygote.py). The
 * directories' modes are put back after the run, as a one-shot run's are, and the
 * standby's own temporary workdir is removed with the run (warm_run.c). */
#include "build-config.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container/load.h"
#include "runtime/linux/idmap.h"
#include "runtime/linux/mountapi.h"
#include "runtime/serve/warm_run.h"

/* The client's directory as a detached mount, with a one-shot run's attributes: with
   the mounts below it (RECURSIVE: a --rw, rbind as sandbox_config.c binds it) unless
   idmapped. The idmap of a directory of the server's own user (the common case:
   clients are that user) is the server's, made once (struct sandbox_warm). */
static int
clone_client_dir (const struct sandbox_warm *w, const char *opt, const struct host_writable *h, bool recursive,
                  uid_t host_uid, gid_t host_gid, struct sbx_error *err)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
  unsigned rec = recursive && !h->idmap ? AT_RECURSIVE : 0;
  _cleanup_close_ int userns = -1;
  int tree = sys_open_tree (h->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | rec);
  if (tree < 0)
    return sbx_error_set (err, errno, "%s %s: clone", opt, h->path);
  if (h->idmap)
    {
      /* as sandbox_config.c's gen_writable_bind: the owner is the sandbox user */
      struct oci_id_mapping uid = { .container_id = h->owner, .host_id = host_uid, .size = 1 };
      struct oci_id_mapping gid = { .container_id = h->group, .host_id = host_gid, .size = 1 };
      bool own = w->idmap_userns >= 0 && h->owner == w->idmap_owner && h->group == w->idmap_group;
      if (!own && (userns = idmap_userns (&uid, 1, &gid, 1, err)) < 0)
        {
          close (tree);
          return -1;
        }
      attr.attr_set |= MOUNT_ATTR_IDMAP;
      attr.userns_fd = (uint64_t) (own ? w->idmap_userns : userns);
    }
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH | rec, &attr) < 0)
    {
      sbx_error_set (err, errno, "%s %s: %s", opt, h->path, h->idmap ? "idmap" : "nosuid,nodev");
      close (tree);
      return -1;
    }
  return tree;
}

/* NAME in DIR (the sandbox's /tmp), made as the sandbox user (host uid AS): the
   tmpfs belongs to the sandbox's user namespace, where our own uid has no mapping
   (EOVERFLOW). */
static int
make_mount_point (int dir, const char *name, uid_t as)
{
  int r, e;
  gid_t gid = (gid_t) setfsgid ((gid_t) as);
  uid_t uid = (uid_t) setfsuid (as);
  r = mkdirat (dir, name, 0700);
  e = errno;
  setfsuid (uid);
  setfsgid (gid);
  /* (setfsuid returns the previous value whatever happens: -1 asks without a change) */
  if ((uid_t) setfsuid ((uid_t) -1) != uid || (gid_t) setfsgid ((gid_t) -1) != gid)
    _exit (SBX_EXIT_SETUP); /* the worker must not go on with another's file system ids */
  errno = e;
  return r;
}

/* TREE at PATH in the mount namespace of the container's init PID: over /work, or
   (MAKE_POINT) on a directory made for it, PATH being /tmp/NAME. This process joins
   that namespace (which makes its root the container's), moves the mount, and comes
   back to its own; a way back that fails ends the worker, which must not act on
   anything of the host from the sandbox's view. */
static int
attach_in_sandbox (pid_t pid, int tree, const char *opt, const char *path, uid_t make_point_as, bool make_point,
                   struct sbx_error *err)
{
  char ns[64], parent[PATH_MAX];
  const char *slash = strrchr (path, '/');
  _cleanup_close_ int mntns = -1, own = -1, cwd = -1, dir = -1;
  int moved = -1;
  snprintf (parent, sizeof parent, "%.*s", (int) (slash - path), path);
  snprintf (ns, sizeof ns, "/proc/%d/ns/mnt", (int) pid);
  mntns = open (ns, O_RDONLY | O_CLOEXEC);
  own = open ("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (mntns < 0 || own < 0 || cwd < 0)
    return sbx_error_set (err, errno, "%s: the sandbox's mount namespace", opt);
  if (setns (mntns, CLONE_NEWNS) < 0)
    return sbx_error_set (err, errno, "%s: setns", opt);
  dir = open (*parent ? parent : "/", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 || (make_point && make_mount_point (dir, slash + 1, make_point_as) < 0))
    sbx_error_set (err, errno, "%s: a mount point at %s in the standing sandbox", opt, path);
  else if ((moved = sys_move_mount (tree, "", dir, slash + 1, MOVE_MOUNT_F_EMPTY_PATH)) < 0)
    sbx_error_set (err, errno, "%s: could not be mounted at %s in the standing sandbox", opt, path);
  if (setns (own, CLONE_NEWNS) < 0 || fchdir (cwd) < 0)
    _exit (SBX_EXIT_SETUP);
  return moved < 0 ? -1 : 0;
}

/* The client's directory H, checked and opened, at PATH in the standby's sandbox. */
static int
mount_client_dir (struct python_run *r, const char *opt, const struct host_writable *h, const char *path,
                  bool make_point, struct sbx_error *err)
{
  uid_t host_uid = r->c->p.host_uid;
  struct loaded l;
  int tree = -1, ret = -1;
  if (container_load (r->ctx, r->id, false, &l, err) == 0
      && (tree = clone_client_dir (r->warm, opt, h, make_point, host_uid, (gid_t) host_uid, err)) >= 0
      && attach_in_sandbox (l.state.pid, tree, opt, path, host_uid, make_point, err) == 0)
    ret = 0;
  loaded_free (&l);
  if (tree >= 0)
    close (tree);
  return ret;
}

bool
standby_bind_fits (const struct sandbox_mount *m)
{
  const char *name;
  if (!m->writable || strncmp (m->dest, "/tmp/", 5) != 0)
    return false;
  name = m->dest + 5;
  return *name && !strchr (name, '/') && strcmp (name, ".") != 0 && strcmp (name, "..") != 0;
}

int
standby_adopt_binds (struct python_run *r, size_t first, struct sbx_error *err)
{
  struct sandbox_policy *p = &r->c->p;
  size_t n = r->n_rw + p->n_mounts - first + 1;
  r->rw = xrealloc (r->rw, n * sizeof *r->rw);
  for (size_t i = r->n_rw; i < n; i++)
    r->rw[i] = (struct host_writable) { .fd = -1 };
  for (size_t i = first; i < p->n_mounts; i++)
    {
      struct sandbox_mount *m = &p->mounts[i];
      struct host_writable *h = &r->rw[r->n_rw];
      if (host_writable_open (r->ctx, "--rw", m->source, r->c->p.host_uid, h, err) < 0)
        return -1;
      r->n_rw++; /* its mode is put back after the run, whatever happens now */
      if (!h->is_dir)
        {
          /* a file: bound on a file made for it, in a sandbox made for the request */
          r->warm->fallback = true;
          return sbx_error_set (err, 0, "the request needs a sandbox of its own");
        }
      if (mount_client_dir (r, "--rw", h, m->dest, true, err) < 0)
        return -1;
    }
  return 0;
}

int
standby_adopt_workdir (struct python_run *r, struct sbx_error *err)
{
  struct python_cli *c = r->c;
  struct host_writable h;
  if (host_writable_open (r->ctx, "--workdir", c->p.workdir, c->p.host_uid, &h, err) < 0)
    return -1;
  if (!h.is_dir)
    {
      host_writable_close (&h);
      return sbx_error_set (err, ENOTDIR, "--workdir %s", c->p.workdir);
    }
  if (mount_client_dir (r, "--workdir", &h, SANDBOX_WORKDIR, false, err) < 0)
    {
      host_writable_close (&h);
      return -1;
    }
  /* the run's workdir is the client's now; the standby's own goes with the run */
  r->standby_workdir = r->w.h.path;
  if (r->w.h.fd >= 0)
    close (r->w.h.fd);
  r->w.h = h;
  r->w.temporary = false;
  r->res.workdir = r->w.h.path;
  workdir_snapshot_free (&r->before);
  workdir_snapshot_take (r->w.h.fd, &r->before);
  return 0;
}
