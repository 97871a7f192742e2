/* A holding init's namespaces and root as fds (join_fds.h). */
#include "build-config.h"
#include "runtime/container/join_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/linux/sync.h"

#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO (0xb7, 0x3)
#endif

void
join_fds_init (struct join_fds *j)
{
  for (int i = 0; i < SBX_NS_COUNT; i++)
    j->ns[i] = -1;
  j->root = -1;
}

void
join_fds_close (struct join_fds *j)
{
  for (int i = 0; i < SBX_NS_COUNT; i++)
    if (j->ns[i] >= 0)
      close (j->ns[i]);
  if (j->root >= 0)
    close (j->root);
  join_fds_init (j);
}

int
join_fds_open_namespaces (struct join_fds *j, struct sbx_error *err)
{
  for (int i = 0; i < SBX_NS_COUNT; i++)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/self/ns/%s", sbx_namespaces[i].proc_name);
      j->ns[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (j->ns[i] < 0 && errno != ENOENT) /* ENOENT: a kernel without this kind */
        return sbx_error_set (err, errno, "open %s", path);
    }
  return 0;
}

int
join_fds_open_root (struct join_fds *j, struct sbx_error *err)
{
  j->root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  return j->root < 0 ? sbx_error_set (err, errno, "open /") : 0;
}

int
join_fds_send (int sync_fd, struct join_fds *j, struct sbx_error *err)
{
  int fds[JOIN_FDS_MAX];
  size_t n = join_fds_list (j, fds);
  int r = sync_send_fds (sync_fd, SYNC_JOIN_FDS, fds, n, err);
  join_fds_close (j);
  return r;
}

int
join_fds_receive (int sync_fd, struct join_fds *j, struct sbx_error *err)
{
  int fds[JOIN_FDS_MAX];
  size_t n = JOIN_FDS_MAX;
  int r;
  if (sync_expect_fds (sync_fd, SYNC_JOIN_FDS, fds, &n, err) < 0)
    return -1;
  r = join_fds_from_list (fds, n, j, err);
  for (size_t i = 0; i < n; i++)
    close (fds[i]);
  return r;
}

size_t
join_fds_list (const struct join_fds *j, int *fds)
{
  size_t n = 0;
  for (int i = 0; i < SBX_NS_COUNT; i++)
    if (j->ns[i] >= 0)
      fds[n++] = j->ns[i];
  if (j->root >= 0)
    fds[n++] = j->root;
  return n;
}

/* The SBX_NS_* of a namespace fd, -1 if it is none. */
static int
ns_kind_of (int fd)
{
  int type = ioctl (fd, NS_GET_NSTYPE);
  if (type < 0)
    return -1;
  for (int i = 0; i < SBX_NS_COUNT; i++)
    if (sbx_namespaces[i].clone_flag == type)
      return i;
  return -1;
}

static int
take_one (int fd, struct join_fds *j, struct sbx_error *err)
{
  int kind = ns_kind_of (fd);
  int *slot;
  struct stat st;
  if (kind >= 0)
    slot = &j->ns[kind];
  else if (fstat (fd, &st) == 0 && S_ISDIR (st.st_mode))
    slot = &j->root;
  else
    return sbx_error_set (err, EINVAL, "join: fd %d is neither a namespace nor a directory", fd);
  if (*slot >= 0)
    return sbx_error_set (err, EINVAL, "join: %s given twice", kind >= 0 ? sbx_namespaces[kind].proc_name : "root");
  *slot = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  return *slot < 0 ? sbx_error_set (err, errno, "join: dup") : 0;
}

int
join_fds_from_list (const int *fds, size_t n, struct join_fds *j, struct sbx_error *err)
{
  join_fds_init (j);
  for (size_t i = 0; i < n; i++)
    if (take_one (fds[i], j, err) < 0)
      {
        join_fds_close (j);
        return -1;
      }
  if (j->root < 0)
    {
      join_fds_close (j);
      return sbx_error_set (err, EINVAL, "join: no root directory among the fds");
    }
  return 0;
}
