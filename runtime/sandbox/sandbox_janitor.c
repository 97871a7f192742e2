/* What a `sbx-oci python` killed with SIGKILL leaves: its sandbox dies with it (the
 * init has a parent-death signal), but the state dir, the empty cgroups and the
 * temporary workdir stay. Every one-shot `sbx-oci python` sweeps them before its own run.
 *
 * A container is swept only if all of these hold, so a run in progress is never
 * touched: it was made by `sbx-oci python` (annotation run.sbx-oci.sandbox), its
 * state is complete (not half-created), its init is gone, and the runtime process
 * that ran it (annotation run.sbx-oci.sandbox.owner: pid and start time) is gone.
 *
 * A create or a delete killed midway (a Jupyter server's SIGKILL of a kernel that is
 * starting or ending) leaves a dir with no state.json, or one renamed "@deleting.",
 * with no owner to tell: both are swept once no one holds their lock
 * (statedir_sweep_abandoned), the half-created ones only under ids this command
 * generates ("py-" and 16 hex digits), with the cgroup they recorded.
 *
 * A server's workers do not sweep each run (a sweep reads every state, and a server
 * may hold thousands): the server sweeps when it starts and when a signal killed one
 * of its workers (serve/server.c). */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/config.h"
#include "oci/state.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/container/container.h"
#include "runtime/linux/fs.h"
#include "runtime/container/statedir.h"

char *
sandbox_owner_annotation (void)
{
  return xasprintf ("%d %llu", (int) getpid (), (unsigned long long) proc_start_time (getpid ()));
}

static const char *
annotation (const struct sbx_state *s, const char *key)
{
  yajl_val v = json_member (s->annotations, key);
  return v && v->type == yajl_t_string ? v->u.string : NULL;
}

static bool
owner_alive (const char *owner)
{
  int pid = 0;
  unsigned long long start = 0;
  if (!owner || sscanf (owner, "%d %llu", &pid, &start) != 2 || pid <= 0)
    return true; /* unknown: leave it alone */
  return proc_start_time (pid) == start;
}

/* The annotation is copied from a config, which whoever runs `sbx-oci create` on this
   state root writes: only what `sbx-oci python` makes is removed on its word, an
   absolute path without . or .. components whose last one is "sbx-python-" and the six
   letters or digits mkdtemp(3) adds, a directory (not a link) that root does not own (as root, ours are the sandbox
   user's). */
static bool
temp_workdir_plausible (const struct sbx_ctx *ctx, const char *path)
{
  const char *base = strrchr (path, '/');
  struct stat st;
  if (path[0] != '/' || !base || strstr (path, "/./") || strstr (path, "/../") || strstr (path, "//"))
    return false;
  base++;
  if (strncmp (base, "sbx-python-", 11) != 0 || strlen (base) != 17)
    return false;
  for (const char *p = base + 11; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      return false;
  if (lstat (path, &st) < 0 || !S_ISDIR (st.st_mode))
    return false;
  return !ctx->as_root || st.st_uid != 0;
}

/* An orphan's temporary workdir ("" if it had none), or NULL if id is no orphan. */
static char *
orphan_workdir (int rootfd, const char *id)
{
  struct sbx_state s = { 0 };
  struct sbx_error e = { 0 };
  _cleanup_close_ int dfd = statedir_open (rootfd, id, &e);
  char *workdir = NULL;
  if (dfd < 0 || statedir_half_created (dfd) || statedir_read_state (dfd, id, &s, &e) < 0)
    {
      sbx_error_clear (&e);
      oci_state_clear (&s);
      return NULL;
    }
  if (annotation (&s, "run.sbx-oci.sandbox") && !state_init_alive (&s)
      && !owner_alive (annotation (&s, SANDBOX_OWNER_ANNOTATION)))
    {
      const char *w = annotation (&s, SANDBOX_TEMP_WORKDIR_ANNOTATION);
      workdir = xstrdup (w ? w : "");
    }
  oci_state_clear (&s);
  return workdir;
}

/* A half-created state dir's temporary workdir, from the config snapshot its create
   wrote first: "" if it names none or the create died before writing it, NULL if it
   is not `sbx-oci python`'s or its runtime lives (not to be swept). */
static char *
half_created_workdir (int rootfd, const char *id)
{
  struct sbx_error e = { 0 };
  struct oci_parse_ctx pctx = { 0 };
  struct oci_config *cfg;
  char *workdir = NULL;
  _cleanup_close_ int dfd = statedir_open (rootfd, id, &e);
  sbx_error_clear (&e);
  if (dfd < 0 || !statedir_half_created (dfd))
    return NULL;
  if (faccessat (dfd, CONFIG_SNAPSHOT, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return xstrdup ("");
  cfg = oci_config_load (dfd, CONFIG_SNAPSHOT, &pctx, &e);
  sbx_error_clear (&e);
  if (cfg && oci_config_annotation (cfg, "run.sbx-oci.sandbox")
      && !owner_alive (oci_config_annotation (cfg, SANDBOX_OWNER_ANNOTATION)))
    {
      const char *w = oci_config_annotation (cfg, SANDBOX_TEMP_WORKDIR_ANNOTATION);
      workdir = xstrdup (w ? w : "");
    }
  if (cfg)
    oci_config_free (cfg);
  return workdir;
}

/* An id `sbx-oci python` generated (statedir_generate_id ("py-")), not one a user gave. */
static bool
generated_id (const char *name)
{
  if (strncmp (name, "py-", 3) != 0 || strlen (name) != 19)
    return false;
  for (const char *p = name + 3; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

#define ABANDONED_AGE_S 60

void
sandbox_sweep_orphans (struct sbx_ctx *ctx)
{
  struct sbx_error e = { 0 };
  _cleanup_close_ int rootfd = statedir_open_root (ctx->root, false, &e);
  DIR *d;
  struct dirent *de;
  sbx_error_clear (&e);
  if (rootfd < 0)
    return;
  {
    /* the root fd is O_PATH: a second, readable one to list it */
    int list = openat (rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    d = list >= 0 ? fdopendir (list) : NULL;
    if (!d)
      {
        if (list >= 0)
          close (list);
        return;
      }
  }
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *workdir = NULL;
      if (de->d_name[0] == '.')
        continue;
      if (strncmp (de->d_name, "@deleting.", 10) == 0 || strncmp (de->d_name, "@claim.", 7) == 0)
        {
          statedir_sweep_abandoned (rootfd, de->d_name, ABANDONED_AGE_S);
          continue;
        }
      if (generated_id (de->d_name) && (workdir = half_created_workdir (rootfd, de->d_name)))
        {
          if (statedir_sweep_abandoned (rootfd, de->d_name, ABANDONED_AGE_S) && temp_workdir_plausible (ctx, workdir))
            fs_remove_tree (AT_FDCWD, workdir);
          continue;
        }
      if (de->d_name[0] == '@')
        continue;
      workdir = orphan_workdir (rootfd, de->d_name);
      if (!workdir)
        continue;
      if (container_delete (ctx, de->d_name, true, &e) < 0)
        sbx_error_clear (&e);
      else if (temp_workdir_plausible (ctx, workdir))
        fs_remove_tree (AT_FDCWD, workdir);
    }
  closedir (d);
}
