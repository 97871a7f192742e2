/* Finding an existing container through its state dir: shared by every operation
 * that takes an id (start, kill, delete, state, update, pause, ps, exec). */
#ifndef SBX_CONTAINER_LOAD_H
#define SBX_CONTAINER_LOAD_H

#include <stdbool.h>

#include "oci/state.h"
#include "runtime/base/context.h"
#include "runtime/base/error.h"
#include "runtime/container/statedir.h"

struct loaded
{
  int root_fd;
  int state_fd;
  struct sbx_state state;
  enum container_status status;
};

/* Open ROOT/ID, optionally take its lock (held until loaded_free), read state.json
 * and work out the status. On error *l is still safe to pass to loaded_free. */
int container_load (struct sbx_ctx *ctx, const char *id, bool lock, struct loaded *l, struct sbx_error *err);
void loaded_free (struct loaded *l);
/* A pidfd for the container's init, checked to still be the recorded process. */
int container_open_init_pidfd (const struct sbx_state *s, struct sbx_error *err);

#endif
