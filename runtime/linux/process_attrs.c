#include "build-config.h"
#include "runtime/linux/process_attrs.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/ioprio.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mountapi.h"
#include "runtime/linux/namespaces.h"

int
process_apply_rlimits (const struct oci_process *p, struct sbx_error *err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit rl = { .rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard };
      if (setrlimit (p->rlimits[i].resource, &rl) < 0)
        return sbx_error_set (err, errno, "process.rlimits[%zu]: setrlimit %s (soft %llu, hard %llu)", i,
                              p->rlimits[i].type, (unsigned long long) rl.rlim_cur,
                              (unsigned long long) rl.rlim_max);
    }
  return 0;
}

/* CAP_SYS_RESOURCE in the host's user namespace, which raising a hard limit needs
   (the kernel checks it there, whatever namespace the init is in). */
static bool
may_raise_hard_limits (void)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2];
  if (!userns_self_is_initial () || syscall (SYS_capget, &h, d) < 0)
    return false;
  return (d[CAP_SYS_RESOURCE / 32].effective & (1U << (CAP_SYS_RESOURCE % 32))) != 0;
}

int
process_check_rlimits (const struct oci_process *p, struct sbx_error *err)
{
  if (p->n_rlimits == 0 || may_raise_hard_limits ())
    return 0;
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit now;
      if (getrlimit (p->rlimits[i].resource, &now) == 0 && p->rlimits[i].hard > now.rlim_max)
        return sbx_error_set (err, EPERM,
                              "process.rlimits[%zu]: the %s hard limit %llu is above the runtime's own (%llu), "
                              "and raising it needs CAP_SYS_RESOURCE in the host's user namespace",
                              i, p->rlimits[i].type, (unsigned long long) p->rlimits[i].hard,
                              (unsigned long long) now.rlim_max);
    }
  return 0;
}

struct sched_attr_v1
{
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
};

int
process_apply_scheduling (const struct oci_process *p, struct sbx_error *err)
{
  if (p->has_scheduler)
    {
      const struct oci_scheduler *s = &p->scheduler;
      struct sched_attr_v1 attr = {
        .size = sizeof attr,
        .sched_policy = (uint32_t) s->policy_value,
        .sched_flags = s->flags,
        .sched_nice = s->nice,
        .sched_priority = (uint32_t) s->priority,
        .sched_runtime = s->runtime,
        .sched_deadline = s->deadline,
        .sched_period = s->period,
      };
      if (syscall (SYS_sched_setattr, 0, &attr, 0) < 0)
        return sbx_error_set (err, errno, "process.scheduler: sched_setattr %s", s->policy);
    }
  if (p->has_io_priority)
    {
      int prio = IOPRIO_PRIO_VALUE (p->io_priority.class_value, (int) p->io_priority.priority);
      if (syscall (SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio) < 0)
        return sbx_error_set (err, errno, "process.ioPriority: ioprio_set");
    }
  return 0;
}

int
process_apply_memory_policy (const struct oci_linux *l, struct sbx_error *err)
{
  const struct oci_memory_policy *mp = &l->memory_policy;
  /* maxnode counts one more bit than the mask holds: set_mempolicy(2) reads
     maxnode - 1 of them. No nodes: a NULL mask, as MPOL_DEFAULT and MPOL_LOCAL need. */
  if (mp->present && syscall (SYS_set_mempolicy, mp->mode, mp->has_nodes ? mp->nodemask : NULL,
                              mp->has_nodes ? (unsigned long) OCI_MEMPOLICY_MAX_NODES + 1 : 0UL)
                         < 0)
    return sbx_error_set (err, errno, "linux.memoryPolicy: set_mempolicy");
  return 0;
}

int
process_apply_personality (const struct oci_linux *l, struct sbx_error *err)
{
  if (l->has_personality && personality (l->personality) < 0)
    return sbx_error_set (err, errno, "linux.personality: personality");
  return 0;
}

static bool
file_says (const char *path, const char *want)
{
  char buf[16] = { 0 };
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  return fd >= 0 && read (fd, buf, sizeof buf - 1) > 0 && strncmp (buf, want, strlen (want)) == 0;
}

static int
write_attr (const char *path, const char *value, struct sbx_error *err)
{
  _cleanup_close_ int fd = open (path, O_WRONLY | O_CLOEXEC);
  /* Make sure it is the procfs attr file, not something mounted over /proc. */
  if (fd < 0 || !fs_is_procfs (fd))
    return sbx_error_set (err, fd < 0 ? errno : EXDEV, "open %s", path);
  if (write (fd, value, strlen (value)) < 0)
    return sbx_error_set (err, errno, "write %s", path);
  return 0;
}

static bool
selinux_enabled (void)
{
  struct stat st;
  return stat ("/sys/fs/selinux/enforce", &st) == 0;
}

int
process_apply_process_labels (const struct oci_process *p, struct sbx_error *err)
{
  if (p->selinux_label)
    {
      if (!selinux_enabled ())
        return sbx_error_set (err, 0, "process.selinuxLabel: SELinux is not enabled on this host");
      if (write_attr ("/proc/thread-self/attr/exec", p->selinux_label, err) < 0)
        return sbx_error_wrap (err, "process.selinuxLabel");
    }
  if (p->apparmor_profile && *p->apparmor_profile)
    {
      _cleanup_free_ char *value = xasprintf ("exec %s", p->apparmor_profile);
      if (!file_says ("/sys/module/apparmor/parameters/enabled", "Y"))
        return sbx_error_set (err, 0, "process.apparmorProfile: AppArmor is not enabled on this host");
      if (access ("/proc/thread-self/attr/apparmor/exec", F_OK) == 0)
        {
          if (write_attr ("/proc/thread-self/attr/apparmor/exec", value, err) < 0)
            return sbx_error_wrap (err, "process.apparmorProfile");
        }
      else if (write_attr ("/proc/thread-self/attr/exec", value, err) < 0)
        return sbx_error_wrap (err, "process.apparmorProfile");
    }
  return 0;
}

int
process_apply_lsm_labels (const struct oci_config *c, struct sbx_error *err)
{
  if (c->linux_.mount_label && !selinux_enabled ())
    return sbx_error_set (err, 0, "linux.mountLabel: SELinux is not enabled on this host");
  if (c->linux_.mount_label)
    return sbx_error_set (err, 0, "linux.mountLabel: SELinux mount labels are not supported by sbx-oci");
  return c->process ? process_apply_process_labels (c->process, err) : 0;
}

int
process_new_session_keyring (struct sbx_error *err)
{
  /* Keyrings are not namespaced: give the container a fresh, empty session keyring
   * so it cannot reach the caller's keys. */
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL, 0, 0, 0) < 0 && errno != ENOSYS)
    return sbx_error_set (err, errno, "join a new session keyring (use --no-new-keyring to skip)");
  return 0;
}

int
process_set_no_new_privs (struct sbx_error *err)
{
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return sbx_error_set (err, errno, "process.noNewPrivileges: prctl(PR_SET_NO_NEW_PRIVS)");
  return 0;
}

static int
open_private_procfs (struct sbx_error *err)
{
  _cleanup_close_ int fsfd = sys_fsopen ("proc", FSOPEN_CLOEXEC);
  int mnt;
  if (fsfd < 0 || sys_fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sbx_error_set (err, errno, "linux.sysctl: create a private procfs");
  mnt = sys_fsmount (fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mnt < 0)
    return sbx_error_set (err, errno, "linux.sysctl: mount a private procfs");
  return mnt;
}

int
process_apply_sysctls (const struct oci_linux *l, struct sbx_error *err)
{
  _cleanup_close_ int proc = -1;
  if (l->n_sysctl == 0)
    return 0;
  proc = open_private_procfs (err);
  if (proc < 0)
    return -1;
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      _cleanup_free_ char *rel = xasprintf ("sys/%s", l->sysctl[i].key);
      _cleanup_close_ int fd = -1;
      for (char *p = rel + 4; *p; p++)
        if (*p == '.')
          *p = '/';
      /* Beneath the private procfs, no symlinks, no crossing into other mounts. */
      fd = sys_openat2 (proc, rel, O_WRONLY | O_CLOEXEC | O_NOCTTY, 0,
                        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
      if (fd < 0)
        return sbx_error_set (err, errno, "linux.sysctl.%s: open /proc/%s", l->sysctl[i].key, rel);
      if (write (fd, l->sysctl[i].value, strlen (l->sysctl[i].value)) < 0)
        return sbx_error_set (err, errno, "linux.sysctl.%s: write '%s'", l->sysctl[i].key, l->sysctl[i].value);
    }
  return 0;
}
