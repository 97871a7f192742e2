#include "build-config.h"
#include "runtime/linux/idmap.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/mountapi.h"

bool
idmap_needed (const struct oci_config *c, const struct mount_plan *plans)
{
  for (size_t i = 0; i < c->n_mounts; i++)
    if (plans[i].idmap)
      return true;
  return false;
}

static int
write_map (pid_t pid, const char *file, const struct oci_id_mapping *m, size_t n, struct sbx_error *err)
{
  char path[64];
  _cleanup_free_ char *buf = xmalloc0 (n * 40 + 1);
  _cleanup_close_ int fd = -1;
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += sprintf (buf + len, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write (fd, buf, len) != (ssize_t) len)
    return sbx_error_set (err, errno, "write %s", path);
  return 0;
}

/* A user namespace holding the mount's mappings: a child is born in it, the parent
 * maps it, keeps an fd to the namespace, and lets the child go. */
static int
userns_with_mappings (const struct oci_mount *m, struct sbx_error *err)
{
  return idmap_userns (m->uid_mappings, m->n_uid_mappings, m->gid_mappings, m->n_gid_mappings, err);
}

int
idmap_userns (const struct oci_id_mapping *uid, size_t n_uid, const struct oci_id_mapping *gid, size_t n_gid,
              struct sbx_error *err)
{
  struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
  int pipefd[2], nsfd = -1;
  char path[64];
  pid_t pid;
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return sbx_error_set (err, errno, "pipe");
  pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
  if (pid < 0)
    {
      close (pipefd[0]);
      close (pipefd[1]);
      return sbx_error_set (err, errno, "clone3 a user namespace for the idmapped mount");
    }
  if (pid == 0)
    {
      char c;
      close (pipefd[1]);
      (void) !read (pipefd[0], &c, 1); /* returns when the parent is done */
      _exit (0);
    }
  close (pipefd[0]);
  if (write_map (pid, "uid_map", uid, n_uid, err) == 0 && write_map (pid, "gid_map", gid, n_gid, err) == 0)
    {
      snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
      nsfd = open (path, O_RDONLY | O_CLOEXEC);
      if (nsfd < 0)
        sbx_error_set (err, errno, "open %s", path);
    }
  close (pipefd[1]);
  waitpid (pid, NULL, 0);
  return nsfd;
}

int
idmap_prepare (const struct oci_config *c, const struct mount_plan *plans, const char *bundle, pid_t init_pid,
               int *fds, struct sbx_error *err)
{
  for (size_t i = 0; i < c->n_mounts; i++)
    fds[i] = -1;
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      const struct mount_plan *p = &plans[i];
      const struct oci_mount *m = p->m;
      _cleanup_free_ char *src = NULL;
      _cleanup_close_ int nsfd = -1;
      struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
      int tree;
      if (!p->idmap)
        continue;
      if (m->n_uid_mappings)
        nsfd = userns_with_mappings (m, err);
      else
        {
          char path[64];
          snprintf (path, sizeof path, "/proc/%d/ns/user", (int) init_pid);
          nsfd = open (path, O_RDONLY | O_CLOEXEC);
          if (nsfd < 0)
            sbx_error_set (err, errno, "open %s", path);
        }
      if (nsfd < 0)
        return sbx_error_wrap (err, "mounts[%zu] (idmap %s)", i, m->destination);
      src = m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", bundle, m->source);
      tree = sys_open_tree (AT_FDCWD, src,
                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (p->recursive ? AT_RECURSIVE : 0));
      if (tree < 0)
        return sbx_error_set (err, errno, "mounts[%zu]: open_tree %s", i, src);
      fds[i] = tree;
      attr.userns_fd = (uint64_t) nsfd;
      if (sys_mount_setattr (tree, "", AT_EMPTY_PATH | (p->recursive_idmap ? AT_RECURSIVE : 0), &attr) < 0)
        return sbx_error_set (err, errno, "mounts[%zu]: idmap %s on %s (the file system or kernel may not support "
                                          "idmapped mounts)", i, src, m->destination);
    }
  return 0;
}
