/* A run's environment as its process's C environ (libsbx-warm.so, for zygote.py):
 *
 *   int sbx_warm_environ (const char *entries, size_t len)
 *
 * ENTRIES is the environment of the run's program, "NAME=VALUE" strings each ended by
 * a NUL, LEN bytes in all (the tail of the program's memfd). It becomes environ, what
 * getenv(3) and the program's subprocesses see; the interpreter's os.environ is set
 * beside it (its dict, directly). Why not os.environ.clear() and update(), as before:
 * they call putenv and unsetenv once a variable through Python's methods, and every
 * page they write in a fork of the warm interpreter is a copy (about 80 a run for the
 * sandbox's 15 variables). One array and one copy of the strings here instead; the
 * old array, the join's, stays (the process is the run's, and short-lived).
 * Returns 0, or -1 without memory (environ is then unchanged). */
#include "build-config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__ ((visibility ("default"))) int sbx_warm_environ (const char *entries, size_t len);

extern char **environ;

int
sbx_warm_environ (const char *entries, size_t len)
{
  size_t n = 0, i = 0;
  char *copy, **env;
  for (size_t k = 0; k < len; k++)
    n += entries[k] == '\0';
  copy = malloc (len ? len : 1);
  env = calloc (n + 1, sizeof *env);
  if (!copy || !env)
    {
      free (copy);
      free (env);
      return -1;
    }
  memcpy (copy, entries, len);
  for (size_t k = 0; k < len && i < n; k += strnlen (copy + k, len - k) + 1)
    env[i++] = copy + k; /* an unended last string (not zygote.py's) is left out */
  environ = env;
  return 0;
}
