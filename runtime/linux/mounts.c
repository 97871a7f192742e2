#include "build-config.h"
#include "runtime/linux/mounts.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/sync.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mountapi.h"

#define ATIME_ATTRS (MOUNT_ATTR_NOATIME | MOUNT_ATTR_STRICTATIME)

/* An atime option picks one mode of the MOUNT_ATTR__ATIME field. */
static bool
apply_atime (const struct sbx_mount_opt_info *o, uint64_t *set, uint64_t *clr)
{
  uint64_t mode;
  if (!(o->value & ATIME_ATTRS) && !(o->value == MOUNT_ATTR_RELATIME && o->ms_flag == MS_RELATIME))
    return false;
  if (o->kind == MO_ATTR_SET || o->kind == MO_REC_ATTR_SET)
    mode = o->value; /* noatime, strictatime or relatime (0) */
  else
    mode = MOUNT_ATTR_RELATIME; /* atime, norelatime, nostrictatime: the kernel default */
  *set = (*set & ~(uint64_t) MOUNT_ATTR__ATIME) | mode;
  *clr |= MOUNT_ATTR__ATIME;
  return true;
}

static void
apply_attr (bool set, uint64_t attr, uint64_t *s, uint64_t *c)
{
  if (set)
    {
      *s |= attr;
      *c &= ~attr;
    }
  else
    {
      *c |= attr;
      *s &= ~attr;
    }
}

static int
plan_one (const struct oci_mount *m, size_t idx, struct mount_plan *p, struct sbx_error *err)
{
  p->m = m;
  p->bind = str_eq (m->type, "bind");
  for (size_t j = 0; j < m->n_options; j++)
    {
      struct sbx_mount_opt_info o;
      if (sbx_mount_opt_lookup (m->options[j], &o) && (o.kind == MO_BIND || o.kind == MO_RBIND))
        {
          p->bind = true;
          p->recursive |= o.kind == MO_RBIND;
        }
    }
  p->cgroup = !p->bind && (str_eq (m->type, "cgroup") || str_eq (m->type, "cgroup2"));
  p->fs_options = xmalloc0 ((m->n_options + 1) * sizeof (char *));

  for (size_t j = 0; j < m->n_options; j++)
    {
      const char *opt = m->options[j];
      struct sbx_mount_opt_info info;
      const struct sbx_mount_opt_info *o = &info;
      if (!sbx_mount_opt_lookup (opt, &info))
        {
          /* A bind mount makes no file system, so KEY=VALUE data has nothing to go
             to: ignored, as mount(2) ignores the data of MS_BIND and runc and crun
             accept it (runtime-tools binds /etc with "mode=755,size=1k"). An unknown
             word is refused: it is more likely a misspelt flag than data. */
          if (p->bind && strchr (opt, '='))
            continue;
          if (p->bind)
            return sbx_error_set (err, 0, "mounts[%zu].options[%zu]: unknown option '%s' for a bind mount", idx, j,
                                  opt);
          p->fs_options[p->n_fs_options++] = opt; /* filesystem-specific: passed to fsconfig */
          continue;
        }
      switch (o->kind)
        {
        case MO_NOOP:
        case MO_BIND:
        case MO_RBIND:
          break;
        case MO_ATTR_SET:
        case MO_ATTR_CLEAR:
          if (!apply_atime (o, &p->attr_set, &p->attr_clr))
            apply_attr (o->kind == MO_ATTR_SET, o->value, &p->attr_set, &p->attr_clr);
          break;
        case MO_REC_ATTR_SET:
        case MO_REC_ATTR_CLEAR:
          if (!apply_atime (o, &p->rec_attr_set, &p->rec_attr_clr))
            apply_attr (o->kind == MO_REC_ATTR_SET, o->value, &p->rec_attr_set, &p->rec_attr_clr);
          break;
        case MO_SB_FLAG:
          /* Superblock flags belong to a new filesystem; a bind shares the source's. */
          if (!p->bind)
            p->fs_options[p->n_fs_options++] = opt;
          break;
        case MO_SB_FLAG_CLEAR:
          break; /* the default for a new superblock */
        case MO_PROPAGATION:
        case MO_REC_PROPAGATION:
          p->propagation = o->value;
          p->rec_propagation = o->kind == MO_REC_PROPAGATION;
          break;
        case MO_REMOUNT:
          p->remount = true;
          break;
        case MO_IDMAP:
        case MO_RIDMAP:
          p->idmap = true;
          p->recursive_idmap |= o->kind == MO_RIDMAP;
          break;
        case MO_TMPCOPYUP:
          if (!str_eq (m->type, "tmpfs"))
            return sbx_error_set (err, 0, "mounts[%zu].options[%zu]: tmpcopyup needs type tmpfs", idx, j);
          p->tmpcopyup = true;
          break;
        }
    }
  /* uidMappings without idmap/ridmap: an idmapped mount all the same, recursive with
     rbind, so that no sub-mount of it is left unmapped */
  if (m->n_uid_mappings && !p->idmap)
    {
      p->idmap = true;
      p->recursive_idmap = p->recursive;
    }
  if (m->destination[strspn (m->destination, "/")] == '\0' || strcmp (m->destination, ".") == 0)
    return sbx_error_set (err, 0, "mounts[%zu].destination: mounting over the container root is not supported", idx);
  return 0;
}

int
mounts_plan (const struct oci_config *c, struct mount_plan **out, struct sbx_error *err)
{
  struct mount_plan *plans = xmalloc0 ((c->n_mounts + 1) * sizeof *plans);
  for (size_t i = 0; i < c->n_mounts; i++)
    if (plan_one (&c->mounts[i], i, &plans[i], err) < 0)
      {
        mounts_plan_free (plans, c->n_mounts);
        return -1;
      }
  *out = plans;
  return 0;
}

void
mounts_plan_free (struct mount_plan *p, size_t n)
{
  if (!p)
    return;
  for (size_t i = 0; i < n; i++)
    free (p[i].fs_options);
  free (p);
}

/* The first component of a container path ("proc" for "/proc/self/x"). */
static size_t
first_component (const char *path, const char **start)
{
  while (*path == '/')
    path++;
  *start = path;
  return strcspn (path, "/");
}

/* /proc, /sys and /dev of the rootfs must be real directories: a symlink there sends
 * procfs (and the masks, and device nodes) somewhere else (CVE-2019-19921,
 * CVE-2023-27561, CVE-2026-41579). */
int
mounts_check_special_dir (int rootfd, const char *path, struct sbx_error *err)
{
  static const char *const special[] = { "proc", "sys", "dev" };
  const char *comp;
  size_t len = first_component (path, &comp);
  struct stat st;
  for (size_t i = 0; i < ARRAY_SIZE (special); i++)
    if (len == strlen (special[i]) && strncmp (comp, special[i], len) == 0
        && fstatat (rootfd, special[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
      return sbx_error_set (err, 0, "/%s in the rootfs is a symlink; refusing to mount or create anything there",
                            special[i]);
  return 0;
}

/* Inside /proc only procfs itself and runc's list of files that lxcfs-style tools
 * bind over are allowed: anything else over /proc could fake the kernel's answers
 * (CVE-2019-16884). */
static int
check_proc_destination (const struct mount_plan *p, struct sbx_error *err)
{
  static const char *const allowed[] = { "/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
                                         "/proc/swaps", "/proc/uptime", "/proc/loadavg", "/proc/slabinfo",
                                         "/proc/net/dev", "/proc/sys/kernel/ns_last_pid" };
  const char *comp, *d = p->m->destination;
  size_t len = first_component (d, &comp);
  char norm[PATH_MAX];
  size_t n = 0;
  if (len != 4 || strncmp (comp, "proc", 4) != 0 || comp[4] == '\0' || str_eq (p->m->type, "proc"))
    return 0;
  /* compare as an absolute path without repeated or trailing slashes */
  norm[n++] = '/';
  for (const char *q = d; *q && n < sizeof norm - 2; q++)
    if (!(*q == '/' && norm[n - 1] == '/'))
      norm[n++] = *q;
  while (n > 1 && norm[n - 1] == '/')
    n--;
  norm[n] = '\0';
  for (size_t i = 0; i < ARRAY_SIZE (allowed); i++)
    if (strcmp (norm, allowed[i]) == 0)
      return 0;
  return sbx_error_set (err, 0, "mounting over %s is not allowed (only procfs and a few files such as /proc/meminfo "
                                "may be mounted inside /proc)", d);
}

/* 1 for exactly "/proc", 2 for exactly "/sys", else 0. */
static int
special_top_dir (const char *path)
{
  const char *comp;
  size_t len = first_component (path, &comp);
  const char *rest = comp + len;
  while (*rest == '/')
    rest++;
  if (*rest)
    return 0;
  if (len == 4 && strncmp (comp, "proc", 4) == 0)
    return 1;
  if (len == 3 && strncmp (comp, "sys", 3) == 0)
    return 2;
  return 0;
}

/* /proc or /sys opened with no symlink followed at all: the directory the
 * filesystem lands on is the one at that name now, not where a swapped-in symlink
 * points (a host-side race on the bundle, CVE-2023-27561). */
static int
open_special_top_dir (int rootfd, int which, struct sbx_error *err)
{
  const char *name = which == 1 ? "proc" : "sys";
  int fd = sys_openat2 (rootfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                        RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (fd < 0 && errno == ENOENT)
    {
      if (FS_CREATE (mkdirat (rootfd, name, 0555)) < 0 && errno != EEXIST)
        return sbx_error_set (err, errno, "create /%s in the rootfs", name);
      fd = sys_openat2 (rootfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                        RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    }
  if (fd < 0)
    return sbx_error_set (err, errno == ELOOP || errno == ENOTDIR ? 0 : errno,
                          "/%s in the rootfs is %s; refusing to mount anything there", name,
                          errno == ELOOP || errno == ENOTDIR ? "a symlink or not a directory" : "unusable");
  return fd;
}

static int
record_special (struct mounts_special *sp, int which, int mnt, struct sbx_error *err)
{
  struct stat st;
  if (!sp)
    return 0;
  if (fstat (mnt, &st) < 0)
    return sbx_error_set (err, errno, "stat the new mount");
  if (which == 1)
    sp->proc_dev = st.st_dev, sp->proc_ino = st.st_ino;
  else
    sp->sys_dev = st.st_dev, sp->sys_ino = st.st_ino;
  return 0;
}

static bool
plan_has_fs_option (const struct mount_plan *p, const char *prefix)
{
  for (size_t i = 0; i < p->n_fs_options; i++)
    if (strncmp (p->fs_options[i], prefix, strlen (prefix)) == 0)
      return true;
  return false;
}

/* A bind source this user namespace may not reach (its mapped root cannot search a
   host directory on the way): the parent opens it with the host's credentials and
   sends the tree, detached (spawn.c). */
static int
bind_source_from_parent (const struct mounts_env *env, size_t i, bool *is_tree, struct sbx_error *err)
{
  uint32_t idx = (uint32_t) i;
  int fd = -1;
  size_t n = 1;
  sbx_error_clear (err);
  if (sync_send (env->sync_fd, SYNC_BIND_SOURCE, &idx, sizeof idx, err) < 0
      || sync_expect_fds (env->sync_fd, SYNC_BIND_SOURCE_FD, &fd, &n, err) < 0)
    return -1;
  if (n != 1)
    return sbx_error_set (err, EPROTO, "sync: no tree for the bind source");
  *is_tree = true;
  return fd;
}

int
mounts_apply (const struct oci_config *c, const struct mount_plan *plans, const struct mounts_env *env_in,
              struct sbx_error *err)
{
  _cleanup_free_ int *sources = xmalloc0 ((c->n_mounts + 1) * sizeof (int));
  _cleanup_free_ bool *is_tree = xmalloc0 ((c->n_mounts + 1) * sizeof (bool));
  struct mounts_env e = *env_in, *env = &e;
  int ret = -1;
  if (fstat (e.rootfd, &e.root_st) < 0)
    return sbx_error_set (err, errno, "stat the container root");
  for (size_t i = 0; i < c->n_mounts; i++)
    sources[i] = -1;
  /* Every bind source first, while nothing is created yet: creating may switch our
     file-system ids for good (FS_CREATE), and the sources are host paths. */
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      const struct mount_plan *p = &plans[i];
      if (!p->bind || p->remount)
        continue;
      if (p->idmap)
        {
          sources[i] = env->idmap_fds && env->idmap_fds[i] >= 0 ? fcntl (env->idmap_fds[i], F_DUPFD_CLOEXEC, 3) : -1;
          is_tree[i] = true;
          if (sources[i] < 0)
            {
              sbx_error_set (err, 0, "idmapped mount was not prepared");
              sbx_error_wrap (err, "mounts[%zu] (bind on %s)", i, p->m->destination);
              goto out;
            }
        }
      else if ((sources[i] = mount_open_bind_source (p, env, &is_tree[i], err)) < 0
               && !((err->errnum == EACCES || err->errnum == EPERM) && env->userns && env->sync_fd >= 0
                    && (sources[i] = bind_source_from_parent (env, i, &is_tree[i], err)) >= 0))
        {
          sbx_error_wrap (err, "mounts[%zu] (bind on %s)", i, p->m->destination);
          goto out;
        }
    }
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      const struct mount_plan *p = &plans[i];
      int r;
      if (mounts_check_special_dir (env->rootfd, p->m->destination, err) < 0 || check_proc_destination (p, err) < 0)
        {
          sbx_error_wrap (err, "mounts[%zu]", i);
          goto out;
        }
      if (p->remount)
        r = mount_remount (p, env, err);
      else if (p->bind)
        r = mount_bind (p, env, sources[i], is_tree[i], err);
      else
        {
          int which = special_top_dir (p->m->destination);
          /* only a tmpfs without mode= asks whether its mount point was there before */
          bool existed = which || !str_eq (p->m->type, "tmpfs") || plan_has_fs_option (p, "mode=")
                         || fs_exists_in_root (env->rootfd, p->m->destination);
          _cleanup_close_ int targetfd = which ? open_special_top_dir (env->rootfd, which, err)
                                               : fs_mkdir_in_root (env->rootfd, p->m->destination, 0755, err);
          int mnt = -1;
          if (targetfd < 0)
            r = -1;
          else if (fs_is_inode (targetfd, &env->root_st))
            r = sbx_error_set (err, 0, "the destination resolves to the container root");
          else if (p->cgroup)
            r = mount_cgroup (p, targetfd, env, err);
          else
            {
              r = mount_one_fs (p, targetfd, existed, which ? &mnt : NULL, err);
              if (r < 0 && err->errnum == EPERM && str_eq (p->m->type, "sysfs"))
                {
                  sbx_error_clear (err);
                  r = mount_sysfs_bind (p, targetfd, which ? &mnt : NULL, err);
                }
            }
          if (r == 0 && mnt >= 0)
            r = record_special (env->special, which, mnt, err);
          if (mnt >= 0)
            close (mnt);
        }
      if (r < 0)
        {
          sbx_error_wrap (err, "mounts[%zu] (%s on %s)", i, p->m->type ? p->m->type : "bind", p->m->destination);
          goto out;
        }
    }
  ret = 0;
out:
  for (size_t i = 0; i < c->n_mounts; i++)
    if (sources[i] >= 0)
      close (sources[i]);
  return ret;
}
