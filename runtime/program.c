#include "build-config.h"
#include "runtime/program.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *
env_path (const struct oci_process *p)
{
  const char *path = NULL;
  for (size_t i = 0; i < p->n_env; i++)
    if (strncmp (p->env[i], "PATH=", 5) == 0)
      path = p->env[i] + 5; /* the last one wins, as with putenv */
  return path ? path : DEFAULT_PATH;
}

static int
check_executable (const char *path)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return -errno;
  if (S_ISDIR (st.st_mode))
    return -EISDIR;
  if (!S_ISREG (st.st_mode) || !(st.st_mode & 0111))
    return -EACCES;
  return 0;
}

char *
program_lookup (const struct oci_process *p, struct sbx_error *err)
{
  const char *name = p->args[0];
  const char *search;
  bool saw_eacces = false;
  if (strchr (name, '/'))
    {
      int r = check_executable (name);
      if (r == 0)
        return xstrdup (name);
      sbx_error_set (err, -r, "exec %s", name);
      err->exit_hint = r == -ENOENT || r == -ENOTDIR ? SBX_EXIT_NOT_FOUND : SBX_EXIT_NOT_EXECUTABLE;
      return NULL;
    }
  search = env_path (p);
  while (search)
    {
      const char *colon = strchr (search, ':');
      size_t len = colon ? (size_t) (colon - search) : strlen (search);
      _cleanup_free_ char *cand = len ? xasprintf ("%.*s/%s", (int) len, search, name) : xstrdup (name);
      int r = check_executable (cand);
      if (r == 0)
        return steal_pointer (&cand);
      if (r == -EACCES)
        saw_eacces = true;
      search = colon ? colon + 1 : NULL;
    }
  if (saw_eacces)
    {
      sbx_error_set (err, EACCES, "exec %s", name);
      err->exit_hint = SBX_EXIT_NOT_EXECUTABLE;
    }
  else
    {
      sbx_error_set (err, 0, "exec: \"%s\": executable file not found in $PATH", name);
      err->exit_hint = SBX_EXIT_NOT_FOUND;
    }
  return NULL;
}

int
program_exec (const char *path, const struct oci_process *p, struct sbx_error *err)
{
  static const char *const empty[] = { NULL };
  execve (path, (char *const *) p->args, (char *const *) (p->env ? p->env : empty));
  sbx_error_set (err, errno, "exec %s", path);
  err->exit_hint = errno == ENOENT ? SBX_EXIT_NOT_FOUND : SBX_EXIT_NOT_EXECUTABLE;
  return -1;
}
