/* Which uid to claim to a D-Bus daemon (bus_identity.h).
 *
 * libdbus authenticates with the EXTERNAL mechanism, claiming its geteuid(); the bus
 * daemon compares the claim with the peer credentials of the socket, which the kernel
 * gives in the daemon's own user namespace. Run as uid 0 of a user namespace, as
 * rootless podman runs the runtime, the claim (0) and what the user's bus sees (the
 * user's uid) differ, and the bus refuses the connection: runc claims the user's uid
 * instead (libcontainer/cgroups/systemd/user.go, DetectUID). contrib/musl-deps.sh
 * renames libdbus's calls to geteuid() to sbx_dbus_geteuid(), so that the musl build
 * claims the uid that the user namespace's parent knows this process by. */
#include "build-config.h"
#include "runtime/cgroup/bus_identity.h"

#include <stdio.h>
#include <unistd.h>

/* The uid that UID of this process's user namespace maps to in its parent, from
   /proc/self/uid_map ("inside outside count" lines); UID itself when no line maps it
   (the initial namespace's map is the identity). */
static uid_t
uid_in_parent (uid_t uid)
{
  FILE *f = fopen ("/proc/self/uid_map", "re");
  unsigned long inside, outside, count;
  uid_t found = uid;
  if (!f)
    return uid;
  while (fscanf (f, "%lu %lu %lu", &inside, &outside, &count) == 3)
    if (uid >= inside && uid - inside < count)
      {
        found = (uid_t) (outside + (uid - inside));
        break;
      }
  fclose (f);
  return found;
}

uid_t
bus_identity_uid (void)
{
  return uid_in_parent (geteuid ());
}

/* libdbus's geteuid() (renamed in its static archive by contrib/musl-deps.sh). */
uid_t sbx_dbus_geteuid (void);

uid_t
sbx_dbus_geteuid (void)
{
  return bus_identity_uid ();
}
