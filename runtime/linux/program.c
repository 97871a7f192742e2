#include "build-config.h"
#include "runtime/linux/program.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"

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

/* The home directory of uid in the container's /etc/passwd, or NULL. The file is the
 * container's to write: only a regular file is read, without blocking, at most 1 MiB
 * of it. */
static char *
passwd_home (uid_t uid)
{
  _cleanup_close_ int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC), path = -1, fd = -1;
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, cap = 1u << 20;
  struct stat st;
  char *line, *save = NULL, self[64];
  /* Resolved inside the root with no magic link (a link to /proc/PID/cwd/... must
     not reach a host file), looked at before it is opened (never a device), and
     opened through our own fd of it, so that it cannot be swapped in between. */
  if (root < 0)
    return NULL;
  path = sys_openat2 (root, "etc/passwd", O_PATH | O_CLOEXEC, 0, RESOLVE_ROOT_FLAGS);
  if (path < 0 || fstat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return NULL;
  snprintf (self, sizeof self, "/proc/self/fd/%d", path);
  fd = open (self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  buf = xmalloc0 (cap + 1);
  while (len < cap)
    {
      ssize_t n = read (fd, buf + len, cap - len);
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  for (line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      /* name:password:uid:gid:gecos:home:shell */
      char *field[7] = { NULL };
      size_t n = 0;
      for (char *f = line; n < 7; n++)
        {
          field[n] = f;
          f = strchr (f, ':');
          if (!f)
            {
              n++;
              break;
            }
          *f++ = '\0';
        }
      if (n >= 6 && field[2][0] && strspn (field[2], "0123456789") == strlen (field[2])
          && strtoul (field[2], NULL, 10) == uid && field[5][0])
        return xstrdup (field[5]);
    }
  return NULL;
}

char **
program_env (const struct oci_process *p)
{
  char **env;
  char *home;
  for (size_t i = 0; i < p->n_env; i++)
    if (strncmp (p->env[i], "HOME=", 5) == 0)
      return (char **) p->env;
  /* As runc and crun: a process without HOME gets the one its user has in the
     container's /etc/passwd, else "/". */
  home = passwd_home (p->user.uid);
  env = xmalloc0 ((p->n_env + 2) * sizeof *env);
  memcpy (env, p->env, p->n_env * sizeof *env);
  env[p->n_env] = xasprintf ("HOME=%s", home ? home : "/");
  free (home);
  return env;
}

int
program_exec (const char *path, const struct oci_process *p, char *const *env, struct sbx_error *err)
{
  execve (path, (char *const *) p->args, env);
  sbx_error_set (err, errno, "exec %s", path);
  err->exit_hint = errno == ENOENT ? SBX_EXIT_NOT_FOUND : SBX_EXIT_NOT_EXECUTABLE;
  return -1;
}
