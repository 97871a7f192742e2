/* Where an interpreter lives: asked of the interpreter itself, so a pyenv or venv
 * Python (its prefix, base prefix and site-packages outside /usr) works as well as
 * Debian's. Asked once per interpreter: the answer is kept in the skeleton cache. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"

/* -I: no environment, no user site, no cwd on sys.path; -S: no site import (we only
 * want its list). One fact per line. */
static const char query_code[] = "import sys, sysconfig, site\n"
                                 "print(sys.executable)\n"
                                 "print('%d.%d.%d' % sys.version_info[:3])\n"
                                 "paths = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]\n"
                                 "paths += [sysconfig.get_path(k) for k in ('stdlib', 'platstdlib', 'purelib', "
                                 "'platlib')]\n"
                                 "paths += site.getsitepackages()\n"
                                 "print('\\n'.join(p for p in paths if p))\n";

#define QUERY_TIMEOUT_MS 20000
#define QUERY_MAX_OUTPUT 65536

char *
sandbox_default_python (struct sbx_error *err)
{
  const char *path = getenv ("PATH");
  _cleanup_free_ char *copy = NULL;
  char *save = NULL;
  if (access ("/usr/bin/python3", X_OK) == 0)
    return xstrdup ("/usr/bin/python3");
  copy = xstrdup (path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (char *dir = strtok_r (copy, ":", &save); dir; dir = strtok_r (NULL, ":", &save))
    {
      _cleanup_free_ char *cand = xasprintf ("%s/python3", dir);
      if (dir[0] == '/' && access (cand, X_OK) == 0)
        return xstrdup (cand);
    }
  sbx_error_set (err, ENOENT, "no python3: neither /usr/bin/python3 nor python3 on PATH (use --python)");
  return NULL;
}

/* Run PYTHON -I -S -c query_code and collect its stdout. */
static char *
run_query (const char *python, struct sbx_error *err)
{
  int out[2];
  pid_t pid;
  size_t len = 0, cap = 4096;
  char *buf;
  int status = 0;
  int64_t waited = 0;
  if (pipe2 (out, O_CLOEXEC) < 0)
    return sbx_error_set (err, errno, "pipe"), NULL;
  pid = fork ();
  if (pid < 0)
    {
      close (out[0]);
      close (out[1]);
      return sbx_error_set (err, errno, "fork"), NULL;
    }
  if (pid == 0)
    {
      char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C.UTF-8", NULL };
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      dup2 (null, 0);
      dup2 (out[1], 1);
      dup2 (null, 2); /* a non-Python's complaint would be a second error line */
      execve (python, (char *const[]) { (char *) python, "-I", "-S", "-c", (char *) query_code, NULL }, env);
      _exit (127);
    }
  close (out[1]);
  buf = xmalloc0 (cap);
  for (;;)
    {
      struct pollfd pfd = { .fd = out[0], .events = POLLIN };
      ssize_t n;
      int r = poll (&pfd, 1, 100);
      if (r == 0)
        {
          waited += 100;
          if (waited >= QUERY_TIMEOUT_MS)
            {
              kill (pid, SIGKILL);
              break;
            }
          continue;
        }
      if (r < 0 && errno == EINTR)
        continue;
      if (len + 1 >= cap && cap < QUERY_MAX_OUTPUT)
        buf = xrealloc (buf, cap *= 2);
      n = read (out[0], buf + len, cap - len - 1);
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  close (out[0]);
  buf[len] = '\0';
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      free (buf);
      if (WIFEXITED (status) && WEXITSTATUS (status) == 127)
        return sbx_error_set (err, ENOENT, "--python %s: cannot be executed", python), NULL;
      return sbx_error_set (err, 0, "--python %s: asking it for its paths failed (%s %d)", python,
                            WIFEXITED (status) ? "exit status" : "signal",
                            WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status)),
             NULL;
    }
  return buf;
}

/* Keep a directory to bind unless /usr (bound anyway) or a kept one already holds it;
 * drop kept ones it holds. */
static int
add_bind (struct sandbox_interp *in, const char *raw, struct sbx_error *err)
{
  char real[PATH_MAX];
  struct stat st;
  if (!realpath (raw, real) || stat (real, &st) < 0 || !S_ISDIR (st.st_mode))
    return 0; /* site-packages that does not exist yet: nothing to see */
  if (path_is_under (real, "/usr"))
    return 0;
  if (strcmp (real, "/") == 0 || path_is_under (real, "/proc") || path_is_under (real, "/sys") || path_is_under (real, "/dev")
      || path_is_under (real, "/etc"))
    return sbx_error_set (err, 0, "the interpreter's path %s cannot be bound into the sandbox "
                                  "(install it under /usr, /opt or a dedicated prefix)",
                          real);
  for (size_t i = 0; i < in->n_binds; i++)
    if (path_is_under (real, in->binds[i]))
      return 0;
  for (size_t i = 0; i < in->n_binds;)
    if (path_is_under (in->binds[i], real))
      {
        free (in->binds[i]);
        in->binds[i] = in->binds[--in->n_binds];
      }
    else
      i++;
  in->binds = xrealloc (in->binds, (in->n_binds + 1) * sizeof *in->binds);
  in->binds[in->n_binds++] = xstrdup (real);
  return 0;
}

static void
find_etc_python (struct sandbox_interp *in)
{
  int major = 0, minor = 0;
  _cleanup_free_ char *dir = NULL;
  struct stat st;
  if (sscanf (in->version, "%d.%d", &major, &minor) != 2)
    return;
  dir = xasprintf ("/etc/python%d.%d", major, minor);
  if (stat (dir, &st) == 0 && S_ISDIR (st.st_mode))
    in->etc_python = xstrdup (dir);
}

int
sandbox_interp_query (const char *python, struct sandbox_interp *in, struct sbx_error *err)
{
  _cleanup_free_ char *out = run_query (python, err);
  char *save = NULL, *line;
  int i = 0;
  memset (in, 0, sizeof *in);
  if (!out)
    return -1;
  for (line = strtok_r (out, "\n", &save); line; line = strtok_r (NULL, "\n", &save), i++)
    {
      if (i == 0)
        {
          if (line[0] != '/')
            return sbx_error_set (err, 0, "--python %s: sys.executable is '%s', not an absolute path", python, line);
          in->executable = xstrdup (line);
          {
            /* the directory the executable really is in (a venv's bin links out) */
            char real[PATH_MAX];
            if (realpath (line, real))
              {
                char *slash = strrchr (real, '/');
                if (slash && slash != real)
                  *slash = '\0';
                if (add_bind (in, real, err) < 0)
                  return -1;
              }
          }
        }
      else if (i == 1)
        in->version = xstrdup (line);
      else if (add_bind (in, line, err) < 0)
        return -1;
    }
  if (!in->executable || !in->version)
    return sbx_error_set (err, 0, "--python %s: did not answer like a Python interpreter", python);
  find_etc_python (in);
  return 0;
}

char *
sandbox_interp_serialize (const struct sandbox_interp *in)
{
  size_t len = strlen (in->executable) + strlen (in->version) + 8 + (in->etc_python ? strlen (in->etc_python) : 1);
  char *out, *p;
  for (size_t i = 0; i < in->n_binds; i++)
    len += strlen (in->binds[i]) + 1;
  out = p = xmalloc0 (len + 1);
  p += sprintf (p, "%s\n%s\n%s\n", in->executable, in->version, in->etc_python ? in->etc_python : "-");
  for (size_t i = 0; i < in->n_binds; i++)
    p += sprintf (p, "%s\n", in->binds[i]);
  return out;
}

int
sandbox_interp_parse (const char *text, struct sandbox_interp *in, struct sbx_error *err)
{
  _cleanup_free_ char *copy = xstrdup (text);
  char *save = NULL, *line;
  int i = 0;
  memset (in, 0, sizeof *in);
  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save), i++)
    {
      if (line[0] != '/' && i != 1 && !(i == 2 && strcmp (line, "-") == 0))
        return sbx_error_set (err, 0, "interpreter cache: line %d is not a path", i + 1);
      if (i == 0)
        in->executable = xstrdup (line);
      else if (i == 1)
        in->version = xstrdup (line);
      else if (i == 2)
        in->etc_python = strcmp (line, "-") == 0 ? NULL : xstrdup (line);
      else
        {
          in->binds = xrealloc (in->binds, (in->n_binds + 1) * sizeof *in->binds);
          in->binds[in->n_binds++] = xstrdup (line);
        }
    }
  if (i < 3)
    return sbx_error_set (err, 0, "interpreter cache: truncated");
  return 0;
}

void
sandbox_interp_free (struct sandbox_interp *in)
{
  free (in->executable);
  free (in->version);
  free (in->etc_python);
  for (size_t i = 0; i < in->n_binds; i++)
    free (in->binds[i]);
  free (in->binds);
  memset (in, 0, sizeof *in);
}
