/* A standby takes a request that names a --workdir of the client's (issue 31: the
 * Python client always does, run_python's files go there).
 *
 * The standby's sandbox was made with a fresh temporary workdir at /work, and nothing
 * of anyone's has run in it yet. The client's directory is opened and checked exactly
 * as a one-shot run's (host_writable_open: the system paths refused, idmapped when the
 * sandbox user does not own it, never chowned), cloned as a detached mount with a
 * one-shot run's attributes (nosuid, nodev, the same idmap), and attached over /work
 * in the sandbox's mount namespace (this process joins it for the move, and comes back).
 * The joined fork enters the new /work when its program comes (zygote.py). The
 * directory's mode is put back after the run, as a one-shot run's is, and the
 * standby's own temporary workdir is removed with the run (warm_run.c). */
#include "build-config.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/container_load.h"
#include "runtime/idmap.h"
#include "runtime/mountapi.h"
#include "runtime/serve/warm_run.h"

/* The client's directory as a detached mount, with a one-shot run's attributes. The
   idmap of a directory of the server's own user (the common case: clients are that
   user) is the server's, made once (struct sandbox_warm). */
static int
clone_workdir (const struct sandbox_warm *w, const struct host_writable *h, uid_t host_uid, gid_t host_gid,
               struct sbx_error *err)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
  _cleanup_close_ int userns = -1;
  int tree = sys_open_tree (h->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return sbx_error_set (err, errno, "--workdir %s: clone", h->path);
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
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH, &attr) < 0)
    {
      sbx_error_set (err, errno, "--workdir %s: %s", h->path, h->idmap ? "idmap" : "nosuid,nodev");
      close (tree);
      return -1;
    }
  return tree;
}

/* TREE over /work in the mount namespace of the container's init PID. This process
   joins that namespace (which makes its root the container's), moves the mount, and
   comes back to its own; a way back that fails ends the worker, which must not act on
   anything of the host from the sandbox's view. */
static int
attach_over_work (pid_t pid, int tree, struct sbx_error *err)
{
  char path[64];
  _cleanup_close_ int mntns = -1, own = -1, cwd = -1;
  int moved;
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  mntns = open (path, O_RDONLY | O_CLOEXEC);
  own = open ("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (mntns < 0 || own < 0 || cwd < 0)
    return sbx_error_set (err, errno, "--workdir: the sandbox's mount namespace");
  if (setns (mntns, CLONE_NEWNS) < 0)
    return sbx_error_set (err, errno, "--workdir: setns");
  moved = sys_move_mount (tree, "", AT_FDCWD, SANDBOX_WORKDIR, MOVE_MOUNT_F_EMPTY_PATH);
  if (moved < 0)
    sbx_error_set (err, errno, "--workdir: could not be mounted in the standing sandbox");
  if (setns (own, CLONE_NEWNS) < 0 || fchdir (cwd) < 0)
    _exit (SBX_EXIT_SETUP);
  return moved < 0 ? -1 : 0;
}

int
standby_adopt_workdir (struct python_run *r, struct sbx_error *err)
{
  struct python_cli *c = r->c;
  uid_t host_uid = c->p.host_uid;
  gid_t host_gid = (gid_t) c->p.host_uid;
  struct host_writable h;
  struct loaded l;
  int tree = -1, ret = -1;
  if (host_writable_open (r->ctx, "--workdir", c->p.workdir, host_uid, &h, err) < 0)
    return -1;
  if (!h.is_dir)
    {
      host_writable_close (&h);
      return sbx_error_set (err, ENOTDIR, "--workdir %s", c->p.workdir);
    }
  if (container_load (r->ctx, r->id, false, &l, err) == 0 && (tree = clone_workdir (r->warm, &h, host_uid, host_gid, err)) >= 0
      && attach_over_work (l.state.pid, tree, err) == 0)
    ret = 0;
  loaded_free (&l);
  if (tree >= 0)
    close (tree);
  if (ret < 0)
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
