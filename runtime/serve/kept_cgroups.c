/* The server's kept cgroups (runtime/cgroup/cgroup_kept.c): each worker that runs a
 * sandbox is given a slot, and the slot's cgroup, /sbx-oci/@serve-NS-PID-START-N (the
 * server's pid namespace, pid and start time: no container id has an "@", and no
 * other server, in this pid namespace or another, has all three), is the sandbox's
 * (create_opts.kept_cgroup). When the worker ends, the next worker given the slot
 * recycles the cgroup instead of making one. A slot is the lowest free, so their
 * number is the most workers there were at once; sessions give theirs back (they keep
 * their sandbox: nothing to reuse). A worker killed by a signal could not end its
 * container, whose record (an orphan, swept later) names the slot's cgroup: that slot
 * is retired, never given again, so that removing the orphan can touch no later
 * sandbox. The server empties and removes its kept cgroups when it stops; those of a
 * server that was killed, the next one removes (if empty). */
#include "build-config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/serve/server.h"
#include "runtime/container/statedir.h"

#define KEPT_PARENT "/sbx-oci"
#define SLOT_RETIRED ((pid_t) -2)

/* Our pid namespace's inode: a pid and a start time are ours to judge only in it. */
static uint64_t
pid_ns (void)
{
  struct stat st;
  return stat ("/proc/self/ns/pid", &st) == 0 ? (uint64_t) st.st_ino : 0;
}

void
kept_slots_init (struct serve *s)
{
  uint64_t start = proc_start_time (getpid ()), ns = pid_ns ();
  if (start && ns) /* else no slots: every sandbox has a cgroup of its own */
    s->kept_prefix = xasprintf ("%s/@serve-%" PRIu64 "-%d-%" PRIu64, s->cgroup_parent ? s->cgroup_parent : KEPT_PARENT,
                                ns, (int) getpid (), start);
}

static char *
slot_path (const struct serve *s, unsigned slot)
{
  return xasprintf ("%s-%u", s->kept_prefix, slot);
}

int
kept_slot_take (struct serve *s)
{
  unsigned i;
  if (!s->kept_prefix)
    return -1;
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
  s->kept_cgroup = slot >= 0 ? slot_path (s, (unsigned) slot) : NULL;
}

void
kept_slot_give (struct serve *s, int slot, pid_t pid)
{
  if (slot >= 0 && (unsigned) slot < s->n_kept)
    s->kept_by[slot] = pid > 0 ? pid : 0;
}

void
kept_slot_free_of (struct serve *s, pid_t pid, bool killed)
{
  for (unsigned i = 0; i < s->n_kept; i++)
    if (s->kept_by[i] == pid)
      s->kept_by[i] = killed ? SLOT_RETIRED : 0;
}

void
kept_slots_remove (struct serve *s)
{
  for (unsigned i = 0; i < s->n_kept; i++)
    {
      _cleanup_free_ char *path = slot_path (s, i);
      cgroup_empty_and_remove (path);
    }
  free (s->kept_by);
  s->kept_by = NULL;
  s->n_kept = 0;
}

/* cgroup_sweep_children's test: a kept cgroup of a server of our pid namespace that
   is gone (another namespace's are not ours to judge). */
static bool
of_a_server_gone (const char *name)
{
  int pid, end = 0;
  unsigned long long ns, start;
  unsigned slot;
  if (sscanf (name, "@serve-%llu-%d-%llu-%u%n", &ns, &pid, &start, &slot, &end) != 4 || name[end] != '\0'
      || pid <= 0 || ns != pid_ns ())
    return false;
  return proc_start_time (pid) != (uint64_t) start;
}

void
kept_slots_sweep (void)
{
  cgroup_sweep_children (KEPT_PARENT, of_a_server_gone);
}
