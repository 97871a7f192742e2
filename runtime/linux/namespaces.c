#include "build-config.h"
#include "runtime/linux/namespaces.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "runtime/base/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int
open_ns (const char *path, size_t index, int want_flag, const char *type, struct sbx_error *err)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  int got;
  if (fd < 0)
    return sbx_error_set (err, errno, "linux.namespaces[%zu].path: open %s namespace %s", index, type, path);
  got = ioctl (fd, NS_GET_NSTYPE);
  if (got < 0 || got != want_flag)
    {
      close (fd);
      /* config-linux.md: MUST error if path is not a namespace of type `type`. */
      return sbx_error_set (err, 0, "linux.namespaces[%zu].path: %s is not a %s namespace", index, path, type);
    }
  return fd;
}

static bool
is_own_namespace (int fd, const char *proc_name)
{
  char path[64];
  struct stat a, b;
  snprintf (path, sizeof path, "/proc/self/ns/%s", proc_name);
  return fstat (fd, &a) == 0 && stat (path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int
ns_plan_build (const struct oci_config *c, bool clone_into_cgroup, struct ns_plan *p, struct sbx_error *err)
{
  const struct oci_linux *l = &c->linux_;
  bool any_joined_non_user = false;
  memset (p, 0, sizeof *p);
  for (int i = 0; i < SBX_NS_COUNT; i++)
    p->join_fd[i] = -1;
  for (int i = 0; i < SBX_NS_COUNT; i++)
    {
      const struct oci_namespace *ns = &l->ns[i];
      if (!ns->present)
        continue;
      if (ns->path)
        {
          p->join_fd[i] = open_ns (ns->path, ns->index, sbx_namespaces[i].clone_flag, sbx_namespaces[i].oci_name, err);
          if (p->join_fd[i] < 0)
            {
              ns_plan_close (p);
              return -1;
            }
          if (i != SBX_NS_USER && i != SBX_NS_PID)
            any_joined_non_user = true;
        }
      else
        p->clone_flags |= sbx_namespaces[i].clone_flag;
    }
  /* A sysctl in a joined namespace (podman hands over the network namespace it
     made): fine unless that namespace is the runtime's own, which is the host's. */
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      int ns = oci_sysctl_namespace (l->sysctl[i].key);
      if (ns >= 0 && p->join_fd[ns] >= 0 && is_own_namespace (p->join_fd[ns], sbx_namespaces[ns].proc_name))
        {
          ns_plan_close (p);
          return sbx_error_set (err, 0, "linux.sysctl.%s: the %s namespace joined at %s is the runtime's own: the "
                                        "sysctl would change the host",
                                l->sysctl[i].key, sbx_namespaces[ns].oci_name, l->ns[ns].path);
        }
    }
  p->userns = (p->clone_flags & CLONE_NEWUSER) != 0;
  p->userns_joined = p->join_fd[SBX_NS_USER] >= 0;
  p->pidns_new = (p->clone_flags & CLONE_NEWPID) != 0;
  p->cgroupns_new = (p->clone_flags & CLONE_NEWCGROUP) != 0;
  p->mountns_joined = p->join_fd[SBX_NS_MNT] >= 0;
  p->timens_in_parent = (p->clone_flags & CLONE_NEWTIME) && l->n_time_offsets > 0;
  if (p->timens_in_parent)
    p->clone_flags &= ~CLONE_NEWTIME;
  p->two_stage = p->userns_joined || (p->userns && any_joined_non_user);
  /* The cgroup namespace must be rooted at the container's cgroup: only
   * CLONE_INTO_CGROUP puts the child there before its namespaces exist. */
  if (p->cgroupns_new && (!clone_into_cgroup || p->two_stage))
    {
      p->cgroupns_late = true;
      p->clone_flags &= ~CLONE_NEWCGROUP;
    }
  if (p->two_stage)
    {
      p->unshare_flags = p->clone_flags;
      p->clone_flags = 0;
    }
  return 0;
}

void
ns_plan_close (struct ns_plan *p)
{
  for (int i = 0; i < SBX_NS_COUNT; i++)
    if (p->join_fd[i] >= 0)
      {
        close (p->join_fd[i]);
        p->join_fd[i] = -1;
      }
}

int
ns_join_paths (const struct ns_plan *p, bool two_stage, struct sbx_error *err)
{
  /* pid is joined by the parent; user (two stages) is handled below. First try every
   * other namespace with the privileges we have in the runtime's user namespace; one
   * owned by the user namespace we join can only be entered after joining it. */
  static const int order[] = { SBX_NS_NET, SBX_NS_IPC, SBX_NS_UTS, SBX_NS_CGROUP, SBX_NS_TIME, SBX_NS_MNT };
  bool retry[SBX_NS_COUNT] = { false };
  for (size_t k = 0; k < ARRAY_SIZE (order); k++)
    {
      int i = order[k];
      if (p->join_fd[i] < 0)
        continue;
      if (setns (p->join_fd[i], sbx_namespaces[i].clone_flag) < 0)
        {
          if (errno == EPERM && two_stage && p->userns_joined)
            retry[i] = true;
          else
            return sbx_error_set (err, errno, "setns %s namespace", sbx_namespaces[i].oci_name);
        }
    }
  if (two_stage && p->userns_joined)
    {
      if (setns (p->join_fd[SBX_NS_USER], CLONE_NEWUSER) < 0)
        return sbx_error_set (err, errno, "setns user namespace");
      for (size_t k = 0; k < ARRAY_SIZE (order); k++)
        if (retry[order[k]] && setns (p->join_fd[order[k]], sbx_namespaces[order[k]].clone_flag) < 0)
          return sbx_error_set (err, errno, "setns %s namespace", sbx_namespaces[order[k]].oci_name);
    }
  return 0;
}

int
ns_write_time_offsets (const struct oci_config *c, struct sbx_error *err)
{
  char buf[256];
  size_t len = 0;
  _cleanup_close_ int fd = open ("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sbx_error_set (err, errno, "linux.timeOffsets: open /proc/self/timens_offsets");
  for (size_t i = 0; i < c->linux_.n_time_offsets; i++)
    {
      const struct oci_time_offset *t = &c->linux_.time_offsets[i];
      len += snprintf (buf + len, sizeof buf - len, "%s %lld %u\n", t->clock, (long long) t->secs, t->nanosecs);
    }
  if (write (fd, buf, len) < 0)
    return sbx_error_set (err, errno, "linux.timeOffsets: write offsets");
  return 0;
}

int
ns_loopback_up (struct sbx_error *err)
{
  struct ifreq ifr;
  _cleanup_close_ int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sbx_error_set (err, errno, "network namespace: socket to configure lo");
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return sbx_error_set (err, errno, "network namespace: read the flags of lo");
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
    return sbx_error_set (err, errno, "network namespace: bring lo up");
  return 0;
}
