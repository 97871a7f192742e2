#include "build-config.h"
#include "runtime/container/load.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"

void
loaded_free (struct loaded *l)
{
  if (l->state_fd >= 0)
    close (l->state_fd);
  if (l->root_fd >= 0)
    close (l->root_fd);
  l->state_fd = l->root_fd = -1;
  oci_state_clear (&l->state);
}

int
container_load (struct sbx_ctx *ctx, const char *id, bool lock, struct loaded *l, struct sbx_error *err)
{
  memset (l, 0, sizeof *l);
  l->root_fd = l->state_fd = -1;
  if (statedir_validate_id (id, err) < 0)
    return -1;
  l->root_fd = statedir_open_root (ctx->root, false, err);
  if (l->root_fd < 0)
    {
      if (err->errnum == ENOENT)
        {
          sbx_error_clear (err);
          return sbx_error_set (err, 0, "container %s does not exist", id);
        }
      return -1;
    }
  l->state_fd = statedir_open (l->root_fd, id, err);
  if (l->state_fd < 0)
    return -1;
  if (lock && statedir_lock (l->state_fd, err) < 0)
    return -1;
  if (statedir_read_state (l->state_fd, id, &l->state, err) < 0)
    {
      /* No state.json in a dir a delete has taken away meanwhile (statedir_remove):
         the container is gone, not half-created. */
      if (statedir_half_created (l->state_fd) && !statedir_still_named (l->root_fd, l->state_fd, id))
        {
          sbx_error_clear (err);
          return sbx_error_set (err, 0, "container %s does not exist", id);
        }
      return -1;
    }
  l->status = statedir_status (l->state_fd, &l->state);
  return 0;
}

int
container_open_init_pidfd (const struct sbx_state *s, struct sbx_error *err)
{
  int fd = (int) syscall (SYS_pidfd_open, s->pid, 0);
  if (fd < 0)
    return sbx_error_set (err, errno, "pidfd_open %d", (int) s->pid);
  /* Opened first, checked second: if the start time still matches, the pidfd
   * refers to the recorded init and cannot be recycled under us. */
  if (!state_init_alive (s))
    {
      close (fd);
      return sbx_error_set (err, ESRCH, "the container process has exited");
    }
  return fd;
}
