/* The state root and per-container state dirs:
 *   ROOT/ID/state.json   the state (oci/state.c), written atomically
 *   ROOT/ID/config.json  snapshot of the config at create time (exec, hooks, delete use it)
 *   ROOT/ID/exec.fifo    exists between create and start: the init blocks reading it
 * Container ids are limited to [A-Za-z0-9_+.-], 1-255 characters, not "." or "..",
 * not starting with "-": an id is a path component here. */
#ifndef SBX_STATEDIR_H
#define SBX_STATEDIR_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci/state.h"
#include "runtime/base/error.h"

#define STATE_FILE "state.json"
#define CONFIG_SNAPSHOT "config.json"
#define EXEC_FIFO "exec.fifo"

enum container_status
{
  STATUS_CREATED,
  STATUS_RUNNING,
  STATUS_PAUSED,
  STATUS_STOPPED,
};
const char *container_status_name (enum container_status s);

int statedir_validate_id (const char *id, struct sbx_error *err);
/* A fresh id: prefix + 16 random hex digits (malloc'd). */
char *statedir_generate_id (const char *prefix);
/* The default state root: /run/sbx-oci as root, $XDG_RUNTIME_DIR/sbx-oci otherwise. */
/* Whether a uid 0 runtime is only the root of a user namespace that has an
 * XDG_RUNTIME_DIR (rootless podman): its state then goes there, as runc's does, since
 * the host's /run is not its to write. */
bool statedir_rootless_root (void);
/* The default --root: /run/sbx-oci for root in the host's user namespace, else
 * $XDG_RUNTIME_DIR/sbx-oci, else /tmp/sbx-oci-UID. */
char *statedir_default_root (bool host_root);
/* Open (and with create, make, mode 0700) the state root. */
int statedir_open_root (const char *root, bool create, struct sbx_error *err);
/* Create ROOT/ID exclusively; EEXIST -> "container ID already exists". */
int statedir_claim (int rootfd, const char *id, struct sbx_error *err);
/* Open ROOT/ID; ENOENT -> "container ID does not exist". */
int statedir_open (int rootfd, const char *id, struct sbx_error *err);
/* Remove ROOT/ID and everything in it. Missing is not an error. */
int statedir_remove (int rootfd, const char *id, struct sbx_error *err);
int statedir_read_state (int dirfd, const char *id, struct sbx_state *s, struct sbx_error *err);
/* The dir exists but state.json does not: a create that died before recording it. */
bool statedir_half_created (int dirfd);
bool statedir_still_named (int rootfd, int dirfd, const char *id);
int statedir_write_state (int dirfd, const struct sbx_state *s, struct sbx_error *err);
/* A create made the cgroup at PATH: its record in the state dir (statedir.c: why). */
int statedir_record_cgroup (int dirfd, const char *path, struct sbx_error *err);
/* A half-created container's recorded cgroup, emptied and removed (none: nothing). */
void statedir_remove_recorded_cgroup (int dirfd);
/* Remove NAME if it is what a killed create (no state.json, "@claim." AGE seconds old)
   or delete ("@deleting.") left, locked by no one: true if it was. */
bool statedir_sweep_abandoned (int rootfd, const char *name, int age);
/* Take an exclusive lock on the container (start/kill/delete serialise on it). */
int statedir_lock (int dirfd, struct sbx_error *err);

/* /proc/PID/stat field 22 (start time in clock ticks), 0 if the process is gone or
 * (unless zombie_ok) a zombie. */
uint64_t proc_start_time_of (pid_t pid, bool zombie_ok);
static inline uint64_t
proc_start_time (pid_t pid)
{
  return proc_start_time_of (pid, false);
}
/* Is the process recorded in the state still the container's init (not a zombie,
 * not a recycled pid)? */
bool state_init_alive (const struct sbx_state *s);
/* created / running / paused / stopped, as runtime.md defines them. */
enum container_status statedir_status (int dirfd, const struct sbx_state *s);

#endif
