/* A connection to a systemd manager over D-Bus (libdbus-1), for the systemd cgroup
 * driver (cgroup_systemd.c): the system instance for root, the user's own instance
 * (user@UID.service) otherwise. Only this file and systemd_props.c include libdbus:
 * the rest of the runtime never connects to anything unless a container asks for a
 * systemd-managed cgroup. */
#ifndef SBX_SYSTEMD_BUS_H
#define SBX_SYSTEMD_BUS_H

#include <stdbool.h>

#include "runtime/base/error.h"

struct sd_bus_conn;
struct DBusMessageIter;

/* Whether a systemd manager runs for this caller: the system's (sd_booted(3):
   /run/systemd/system exists) for root in the host's user namespace, else the user's
   (its bus socket in XDG_RUNTIME_DIR). */
bool sd_manager_running (bool user);

/* Connected to the system bus (DBUS_SYSTEM_BUS_ADDRESS or the standard socket), or
   with USER the user's bus (DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus), and
   subscribed to the manager's JobRemoved signal. NULL, ERR naming the bus, on failure. */
struct sd_bus_conn *sd_bus_connect (bool user, struct sbx_error *err);
void sd_bus_close (struct sd_bus_conn *c);

/* A call to the manager object (org.freedesktop.systemd1.Manager.METHOD). FILL appends
   the arguments (NULL: none). If JOB_PATH is not NULL the method returns a job
   ("o"), which is waited for: -1 unless its result is "done". NO_SUCH_UNIT, if not
   NULL, is set instead of failing when systemd answers that the unit is not loaded. */
typedef int (*sd_fill_fn) (struct DBusMessageIter *args, const void *data, struct sbx_error *err);
int sd_manager_call (struct sd_bus_conn *c, const char *method, sd_fill_fn fill, const void *data, bool wait_job,
                     bool *no_such_unit, struct sbx_error *err);

#endif
