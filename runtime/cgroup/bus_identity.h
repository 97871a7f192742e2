/* The uid this process is known by to a D-Bus daemon outside its user namespace
 * (bus_identity.c): the user's bus and its runtime dir are named by it. */
#ifndef SBX_BUS_IDENTITY_H
#define SBX_BUS_IDENTITY_H

#include <sys/types.h>

/* geteuid() as the user namespace's parent sees it: in the host's namespace, and
   for the usual one level of nesting (rootless podman), the host's uid. */
uid_t bus_identity_uid (void);

#endif
