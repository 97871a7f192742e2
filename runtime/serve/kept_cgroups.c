/* The server's kept cgroups (runtime/cgroup/cgroup_kept.c): each worker that runs a
 * sandbox is given a slot, and the slot's cgroup, /sbx-oci/serve-PID-N, is the
 * sandbox's (create_opts.kept_cgroup). When the worker ends, the next worker given
 * the slot recycles the cgroup instead of making one. A slot is the lowest free, so
 * their number is the most workers there were at once, and sessions give theirs back
 * (they keep their sandbox: nothing to reuse). The server removes its kept cgroups
 * when it stops; those of a server that was killed, the next one removes. */
#include "build-config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/serve/server.h"

#define KEPT_PARENT "/sbx-oci"

static char *
slot_path (unsigned slot)
{
  return xasprintf (KEPT_PARENT "/serve-%d-%u", (int) getpid (), slot);
}

int
kept_slot_take (struct serve *s)
{
  unsigned i;
  for (i = 0; i < s->n_kept && s->kept_by[i] != 0; i++)
    ;
  if (i == s->n_kept)
    {
      s->kept_by = xrealloc (s->kept_by, (s->n_kept + 1) * sizeof *s->kept_by);
      s->n_kept++;
    }
  s->kept_by[i] = -1; /* until kept_slot_give names the worker */
  return (int) i;
}

void
kept_slot_enter (struct serve *s, int slot)
{
  /* the server's pid, not the worker's: called in the worker, named as the server */
  s->kept_cgroup = xasprintf (KEPT_PARENT "/serve-%d-%u", (int) getppid (), (unsigned) slot);
}

void
kept_slot_give (struct serve *s, int slot, pid_t pid)
{
  if (slot >= 0 && (unsigned) slot < s->n_kept)
    s->kept_by[slot] = pid > 0 ? pid : 0;
}

void
kept_slot_free_of (struct serve *s, pid_t pid)
{
  for (unsigned i = 0; i < s->n_kept; i++)
    if (s->kept_by[i] == pid)
      s->kept_by[i] = 0;
}

void
kept_slots_remove (struct serve *s)
{
  for (unsigned i = 0; i < s->n_kept; i++)
    {
      _cleanup_free_ char *path = slot_path (i);
      cgroup_remove_everywhere (path);
    }
  free (s->kept_by);
  s->kept_by = NULL;
  s->n_kept = 0;
}

/* cgroup_sweep_children's test: a kept cgroup of a server that is gone. */
static bool
of_a_server_gone (const char *name)
{
  int pid, end = 0;
  unsigned slot;
  if (sscanf (name, "serve-%d-%u%n", &pid, &slot, &end) != 2 || name[end] != '\0' || pid <= 0)
    return false;
  return pid != getpid () && kill (pid, 0) < 0 && errno == ESRCH;
}

void
kept_slots_sweep (void)
{
  cgroup_sweep_children (KEPT_PARENT, of_a_server_gone);
}
