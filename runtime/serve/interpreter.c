/* The warm interpreter of `sbx-oci serve` (runtime/warm/zygote.py on python3, with
 * libsbx-warm.so): found, started with the preload imported, stopped, and replaced
 * every --recycle runs. Each run's process is its child (runtime/warm/warm_spawn.c). */
#include "build-config.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/serve/server.h"

extern const char sbx_warm_zygote_py[];

/* libsbx-warm.so: beside the binary (the build tree), else where make install puts it. */
char *
warm_lib_find (struct sbx_error *err)
{
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  const char *env = getenv ("SBX_OCI_WARM_LIB");
  char *path;
  if (env && *env)
    return access (env, R_OK) == 0 ? xstrdup (env) : (sbx_error_set (err, errno, "SBX_OCI_WARM_LIB %s", env), NULL);
  if (n > 0)
    {
      exe[n] = '\0';
      *strrchr (exe, '/') = '\0';
      path = xasprintf ("%s/libsbx-warm.so", exe);
      if (access (path, R_OK) == 0)
        return path;
      free (path);
    }
  path = xasprintf ("%s/libsbx-warm.so", SBX_PKGLIBDIR);
  if (access (path, R_OK) == 0)
    return path;
  sbx_error_set (err, errno, "serve: %s (libsbx-warm.so) is not there: it is built and installed with sbx-oci", path);
  free (path);
  return NULL;
}

int
zygote_start (struct serve *s, struct sbx_error *err)
{
  int sv[2];
  pid_t pid;
  char threads[32];
  char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/", NULL, NULL, NULL, NULL, NULL };
  /* its program on fd 4 (a sealed memfd), not in its argv: the forks' command line is
     the interpreter's, and /proc/PID/cmdline stays short */
  char *argv[] = { s->python, "-s", "-E", "-c",
                   "import os; exec(compile(os.pread(4, 1 << 22, 0), '<sbx-oci-zygote>', 'exec'))",
                   "3", s->lib, (char *) (s->preload ? s->preload : ""), NULL };
  int program = memfd_create ("sbx-oci-zygote", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  char buf[16];
  struct pollfd pfd;
  ssize_t got;
  /* the thread counts the sandboxes get: numeric libraries size their pools at import */
  snprintf (threads, sizeof threads, "%u", s->p.lib_threads ? s->p.lib_threads : 1);
  {
    static const char *const vars[] = { "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                        "NUMEXPR_NUM_THREADS" };
    for (size_t i = 0; i < ARRAY_SIZE (vars); i++)
      env[3 + i] = xasprintf ("%s=%s", vars[i], threads);
  }
  if (program < 0)
    return sbx_error_set (err, errno, "serve: memfd_create");
  fd_write_all (program, sbx_warm_zygote_py, strlen (sbx_warm_zygote_py));
  if (fcntl (program, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0
      || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      close (program);
      return sbx_error_set (err, errno, "serve: the warm interpreter's program");
    }
  pid = fork ();
  if (pid < 0)
    return sbx_error_set (err, errno, "serve: fork");
  if (pid == 0)
    {
      sigset_t none;
      int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (null < 0 || dup2 (null, 0) < 0 || dup2 (s->log_fd, 1) < 0 || dup2 (s->log_fd, 2) < 0 || dup2 (sv[1], 3) < 0
          || dup2 (program, 4) < 0 || chdir ("/") < 0)
        _exit (127);
      /* nothing else of ours or of our caller's: the forks would carry it */
      syscall (SYS_close_range, 5, ~0U, 0);
      execve (s->python, argv, env);
      _exit (127);
    }
  for (size_t i = 3; env[i]; i++)
    free (env[i]);
  close (sv[1]);
  close (program);
  /* ready once it has imported what it preloads */
  pfd = (struct pollfd) { .fd = sv[0], .events = POLLIN };
  if (poll (&pfd, 1, 120000) <= 0 || (got = recv (sv[0], buf, sizeof buf, 0)) != 5 || memcmp (buf, "READY", 5) != 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      close (sv[0]);
      return sbx_error_set (err, 0, "serve: the warm interpreter %s did not start (preload: %s; its error is above)",
                            s->python, s->preload ? s->preload : "none");
    }
  s->zygote_fd = sv[0];
  s->zygote_pid = pid;
  s->zygote_runs = 0;
  s->standby_failures = 0; /* a new interpreter: standbys may work again */
  return 0;
}

void
zygote_stop (struct serve *s)
{
  if (s->zygote_fd >= 0)
    close (s->zygote_fd); /* it exits at EOF */
  s->zygote_fd = -1;
  if (s->zygote_pid > 0)
    {
      kill (s->zygote_pid, SIGKILL);
      waitpid (s->zygote_pid, NULL, 0);
    }
  s->zygote_pid = -1;
}

/* Every --recycle runs, a new warm interpreter: forks of one process share its
   address-space layout. The old one serves the workers that already hold its socket;
   once the last of them has let go of it (EOF) and its last run's process (its
   child) is reaped, it exits; its end is no restart. */
void
zygote_recycle (struct serve *s)
{
  int old_fd = s->zygote_fd;
  pid_t old_pid = s->zygote_pid;
  struct sbx_error err = { 0 };
  if (!s->recycle || s->zygote_runs < s->recycle)
    return;
  s->zygote_fd = -1;
  s->zygote_pid = -1;
  if (zygote_start (s, &err) < 0)
    {
      _cleanup_free_ char *msg = sbx_error_string (&err);
      slog (s, "recycling the warm interpreter failed (keeping it): %s", msg);
      sbx_error_clear (&err);
      s->zygote_fd = old_fd;
      s->zygote_pid = old_pid;
      s->zygote_runs = 0;
      return;
    }
  close (old_fd);
  s->retired = xrealloc (s->retired, (s->n_retired + 1) * sizeof *s->retired);
  s->retired[s->n_retired++] = old_pid;
  slog (s, "a new warm interpreter after %u runs (the old one ends with its last run)", s->recycle);
}
