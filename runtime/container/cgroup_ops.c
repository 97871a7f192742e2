/* Operations on a container's cgroup: update, pause/resume, ps, stats. */
#include "build-config.h"
#include "runtime/container/container.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oci/config.h"
#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/cgroup_devices.h"
#include "runtime/container/load.h"
#include "runtime/container/statedir.h"

struct opened
{
  struct loaded l;
  struct cgroup cg;
};

static void
opened_free (struct opened *o)
{
  loaded_free (&o->l);
  cgroup_close (&o->cg);
}

static int
open_container (struct sbx_ctx *ctx, const char *id, bool lock, struct opened *o, struct sbx_error *err)
{
  cgroup_init (&o->cg, CGROUP_MODE_NONE, NULL);
  if (container_load (ctx, id, lock, &o->l, err) < 0 || cgroup_open_from_state (&o->l.state, &o->cg, err) < 0)
    return -1;
  if (!o->cg.ops)
    return sbx_error_set (err, 0, "container %s has no cgroup (created with --cgroup-manager disabled or rootless)",
                          id);
  return 0;
}

int
container_update (struct sbx_ctx *ctx, const char *id, const struct oci_resources *r, struct sbx_error *err)
{
  struct opened o;
  struct oci_config *snapshot = NULL;
  struct cgroup_device_defaults defaults = { 0 };
  int ret = -1;
  if (open_container (ctx, id, true, &o, err) < 0)
    goto out;
  if (o.l.status == STATUS_STOPPED)
    {
      sbx_error_set (err, 0, "cannot update container %s: it is stopped", id);
      goto out;
    }
  if (cgroup_path_is_kept (o.cg.path))
    {
      /* a limit its config does not set would stay for the next sandbox in the slot */
      sbx_error_set (err, 0, "cannot update container %s: its cgroup is kept by `sbx-oci serve` for the sandboxes "
                             "after it", id);
      goto out;
    }
  if (o.cg.mode != CGROUP_MODE_UNIFIED)
    {
      uint32_t missing = cgroup_v1_required_for (r) & ~o.cg.v1_mask;
      if (missing)
        {
          sbx_error_set (err, 0, "cannot update container %s: it was created without the cgroup controller this "
                                 "change needs (mask 0x%x)", id, missing);
          goto out;
        }
    }
  if (r->has_devices)
    {
      /* The default devices and linux.devices stay allowed after an update. */
      struct oci_parse_ctx pctx = { 0 };
      snapshot = oci_config_load (o.l.state_fd, CONFIG_SNAPSHOT, &pctx, err);
      if (!snapshot)
        goto out;
      defaults.devices = snapshot->linux_.devices;
      defaults.n = snapshot->linux_.n_devices;
    }
  /* A systemd scope's unit gets the new limits too, once the files (which check them)
     have taken them: daemon-reload writes the unit's own back into the cgroup
     (cgroup_systemd.c). */
  ret = o.cg.ops->apply (&o.cg, r, r->has_devices ? &defaults : NULL, &ctx->log, err);
  if (ret == 0 && o.cg.systemd_unit)
    ret = cgroup_systemd_update (&o.cg, r, err);
out:
  oci_config_free (snapshot);
  opened_free (&o);
  return ret;
}

int
container_pause (struct sbx_ctx *ctx, const char *id, bool pause, struct sbx_error *err)
{
  struct opened o;
  int ret = -1;
  if (open_container (ctx, id, true, &o, err) < 0)
    goto out;
  if (pause && o.l.status != STATUS_RUNNING && o.l.status != STATUS_CREATED)
    {
      sbx_error_set (err, 0, "cannot pause container %s: it is %s", id, container_status_name (o.l.status));
      goto out;
    }
  if (!pause && o.l.status != STATUS_PAUSED)
    {
      sbx_error_set (err, 0, "cannot resume container %s: it is %s, not paused", id, container_status_name (o.l.status));
      goto out;
    }
  ret = o.cg.ops->freeze (&o.cg, pause, err);
out:
  opened_free (&o);
  return ret;
}

int
container_pids (struct sbx_ctx *ctx, const char *id, pid_t **pids, size_t *n, struct sbx_error *err)
{
  struct opened o;
  int ret = -1;
  *pids = NULL;
  *n = 0;
  if (open_container (ctx, id, false, &o, err) == 0)
    ret = o.cg.ops->pids (&o.cg, pids, n, err);
  opened_free (&o);
  return ret;
}

int
container_stats (struct sbx_ctx *ctx, const char *id, struct cgroup_stats *s, bool *running, struct sbx_error *err)
{
  struct opened o;
  int ret = -1;
  if (open_container (ctx, id, false, &o, err) == 0)
    {
      ret = o.cg.ops->stats (&o.cg, s);
      *running = o.l.status != STATUS_STOPPED;
    }
  opened_free (&o);
  return ret;
}
