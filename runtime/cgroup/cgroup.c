/* Cgroup mode detection, path resolution, and the choice of a backend (cg->ops);
 * the file operations both backends share are in cgroup_fs.c. */
#include "build-config.h"
#include "runtime/cgroup/cgroup.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

enum cgroup_mode
cgroup_detect_mode (void)
{
  struct statfs sfs;
  if (statfs ("/sys/fs/cgroup", &sfs) < 0)
    return CGROUP_MODE_NONE;
  if (sfs.f_type == CGROUP2_SUPER_MAGIC)
    return CGROUP_MODE_UNIFIED;
  if (sfs.f_type != TMPFS_MAGIC)
    return CGROUP_MODE_NONE;
  if (statfs ("/sys/fs/cgroup/unified", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    return CGROUP_MODE_HYBRID;
  return CGROUP_MODE_LEGACY;
}

const char *
cgroup_mode_name (enum cgroup_mode m)
{
  switch (m)
    {
    case CGROUP_MODE_UNIFIED:
      return "unified";
    case CGROUP_MODE_HYBRID:
      return "hybrid";
    case CGROUP_MODE_LEGACY:
      return "legacy";
    default:
      return "none";
    }
}

/* systemd's "a-b-c.slice" lives at "/a.slice/a-b.slice/a-b-c.slice". */
static char *
expand_slice (const char *slice, struct sbx_error *err)
{
  size_t n = strlen (slice);
  char *out, *p;
  if (n < 6 || strcmp (slice + n - 6, ".slice") != 0 || strchr (slice, '/'))
    {
      sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not a systemd slice name", slice);
      return NULL;
    }
  if (strcmp (slice, "-.slice") == 0)
    return xstrdup ("");
  out = xmalloc0 (n * n + 2);
  p = out;
  for (size_t i = 0; i < n - 6; i++)
    if (slice[i] == '-')
      {
        if (i == 0 || slice[i - 1] == '-' || i + 1 == n - 6)
          {
            free (out);
            sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not a valid slice name", slice);
            return NULL;
          }
        p += sprintf (p, "/%.*s.slice", (int) i, slice);
      }
  sprintf (p, "/%s", slice);
  return out;
}

char *
cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd, const char *parent,
                     struct sbx_error *err)
{
  if (!parent)
    parent = "/sbx-oci";
  if (!cgroups_path || !*cgroups_path)
    return xasprintf ("%s/%s", parent, id);
  if (systemd || (strchr (cgroups_path, ':') && cgroups_path[0] != '/'))
    {
      /* "slice:prefix:name": no systemd runs here, so map it to the cgroupfs path
       * systemd would use: <expanded slice>/<prefix>-<name>.scope */
      _cleanup_free_ char *copy = xstrdup (cgroups_path), *slice_path = NULL;
      char *slice = copy, *prefix, *name;
      prefix = strchr (slice, ':');
      name = prefix ? strchr (prefix + 1, ':') : NULL;
      if (!prefix || !name || strchr (name + 1, ':'))
        {
          sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not of the form slice:prefix:name", cgroups_path);
          return NULL;
        }
      *prefix++ = '\0';
      *name++ = '\0';
      if (!*name || strchr (name, '/') || strchr (prefix, '/'))
        {
          sbx_error_set (err, 0, "linux.cgroupsPath: '%s' is not of the form slice:prefix:name", cgroups_path);
          return NULL;
        }
      slice_path = expand_slice (*slice ? slice : "system.slice", err);
      if (!slice_path)
        return NULL;
      if (strlen (name) > 6 && strcmp (name + strlen (name) - 6, ".slice") == 0)
        return xasprintf ("%s/%s", slice_path, name);
      if (*prefix)
        return xasprintf ("%s/%s-%s.scope", slice_path, prefix, name);
      return xasprintf ("%s/%s.scope", slice_path, name);
    }
  if (cgroups_path[0] == '/')
    {
      /* Normalise repeated slashes; ".." was refused by validation. */
      char *out = xmalloc0 (strlen (cgroups_path) + 1), *o = out;
      for (const char *p = cgroups_path; *p; p++)
        if (!(*p == '/' && (o > out && o[-1] == '/')))
          *o++ = *p;
      if (o > out + 1 && o[-1] == '/')
        o[-1] = '\0';
      if (strcmp (out, "/") == 0)
        {
          free (out);
          sbx_error_set (err, 0, "linux.cgroupsPath: the root cgroup cannot hold a container");
          return NULL;
        }
      return out;
    }
  /* Relative: under our own parent, never under the caller's cgroup (which on our
   * machines belongs to someone else). */
  return xasprintf ("%s/%s", parent, cgroups_path);
}

void
cgroup_init (struct cgroup *cg, enum cgroup_mode mode, const char *path)
{
  memset (cg, 0, sizeof *cg);
  cg->mode = mode;
  cg->path = path ? xstrdup (path) : NULL;
  cg->owned_from = CGROUP_OWNS_NOTHING;
  cg->v2_dirfd = cg->v2_peak_fd = -1;
  for (int i = 0; i < CG1_COUNT; i++)
    cg->v1_dirfd[i] = cg->v1_rootfd[i] = -1;
  cg->ops = mode == CGROUP_MODE_UNIFIED ? &cgroup_v2_ops : (mode == CGROUP_MODE_NONE ? NULL : &cgroup_v1_ops);
}

void
cgroup_drop_roots (struct cgroup *cg)
{
  if (cg->v2_peak_fd >= 0)
    close (cg->v2_peak_fd);
  cg->v2_peak_fd = -1;
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_rootfd[i] >= 0)
      {
        close (cg->v1_rootfd[i]);
        cg->v1_rootfd[i] = -1;
      }
}

void
cgroup_close (struct cgroup *cg)
{
  if (cg->v2_dirfd >= 0)
    close (cg->v2_dirfd);
  for (int i = 0; i < CG1_COUNT; i++)
    if (cg->v1_dirfd[i] >= 0)
      close (cg->v1_dirfd[i]);
  cgroup_drop_roots (cg);
  free (cg->path);
  free (cg->systemd_unit);
  free (cg->systemd_slice);
  cgroup_init (cg, CGROUP_MODE_NONE, NULL);
}

int
cgroup_open_from_state (const struct sbx_state *s, struct cgroup *cg, struct sbx_error *err)
{
  cgroup_init (cg, (enum cgroup_mode) s->cgroup_mode, s->cgroup_path);
  cg->v1_mask = s->cgroup_v1_mask;
  if (s->systemd_unit && *s->systemd_unit)
    {
      cg->systemd_unit = xstrdup (s->systemd_unit);
      cg->systemd_user = s->systemd_user;
      cg->systemd_started = true;
    }
  if (cg->mode == CGROUP_MODE_NONE || !s->cgroup_path || !*s->cgroup_path)
    {
      cg->mode = CGROUP_MODE_NONE;
      cg->ops = NULL;
      return 0;
    }
  return cg->ops->open (cg, err);
}

bool
cgroup_is_frozen (const struct sbx_state *s)
{
  struct cgroup cg;
  struct sbx_error err = { 0 };
  bool frozen = false;
  if (s->cgroup_mode == CGROUP_MODE_NONE)
    return false;
  if (cgroup_open_from_state (s, &cg, &err) == 0 && cg.ops)
    frozen = cg.ops->is_frozen (&cg) > 0;
  sbx_error_clear (&err);
  cgroup_close (&cg);
  return frozen;
}

static int
open_beneath (int dirfd, const char *sub)
{
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  return (int) syscall (SYS_openat2, dirfd, sub, &how, sizeof how);
}

/* exec --cgroup [CONTROLLER[,CONTROLLER...]:]SUB (runc's and crun's option): the
 * process joins SUB below the container's cgroup instead of the cgroup itself. SUB is
 * the container's to make, so it is resolved beneath the container's cgroup with no
 * symlink and no "..": the process can never land outside. On v1, a hierarchy (or one
 * not named by CONTROLLER) without SUB keeps the container's own cgroup, as with crun;
 * SUB must exist somewhere. */
int
cgroup_descend (struct cgroup *cg, const char *spec, struct sbx_error *err)
{
  const char *colon = strchr (spec, ':');
  const char *sub = colon ? colon + 1 : spec;
  _cleanup_free_ char *controllers = colon ? strndup (spec, (size_t) (colon - spec)) : NULL;
  bool found = false;
  while (*sub == '/')
    sub++;
  for (const char *c = sub; *c;)
    {
      size_t n = strcspn (c, "/");
      if (n == 2 && c[0] == '.' && c[1] == '.')
        return sbx_error_set (err, 0, "exec --cgroup %s: `..` components are not allowed", spec);
      c += n;
      while (*c == '/')
        c++;
    }
  if (!*sub)
    return 0; /* the container's own cgroup */
  if (cg->v2_dirfd >= 0)
    {
      int fd = open_beneath (cg->v2_dirfd, sub);
      if (fd < 0 && errno == ENOENT)
        return sbx_error_set (err, ENOENT, "exec --cgroup %s: no such sub-cgroup of the container's cgroup", spec);
      if (fd < 0)
        return sbx_error_set (err, errno, "exec --cgroup %s", spec);
      close (cg->v2_dirfd);
      cg->v2_dirfd = fd;
      found = true;
    }
  for (int i = 0; i < CG1_COUNT; i++)
    {
      int fd;
      if (cg->v1_dirfd[i] < 0)
        continue;
      if (controllers)
        {
          bool named = false;
          for (const char *c = controllers; *c;)
            {
              size_t n = strcspn (c, ",");
              named |= n == strlen (cgroup_v1_names[i]) && strncmp (c, cgroup_v1_names[i], n) == 0;
              c += n + (c[n] == ',');
            }
          if (!named)
            continue;
        }
      fd = open_beneath (cg->v1_dirfd[i], sub);
      if (fd < 0 && errno == ENOENT)
        continue;
      if (fd < 0)
        return sbx_error_set (err, errno, "exec --cgroup %s (%s)", spec, cgroup_v1_names[i]);
      close (cg->v1_dirfd[i]);
      cg->v1_dirfd[i] = fd;
      found = true;
    }
  if (!found)
    return sbx_error_set (err, ENOENT, "exec --cgroup %s: no such sub-cgroup of the container's cgroup", spec);
  return 0;
}
