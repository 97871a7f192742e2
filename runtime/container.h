/* Container lifecycle operations (runtime.md "Operations"), called by the thin
 * subcommand files. */
#ifndef SBX_CONTAINER_H
#define SBX_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"

struct create_opts
{
  const char *id;
  const char *bundle;      /* NULL: the current directory */
  const char *config_path; /* NULL: BUNDLE/config.json */
  const char *pid_file;
  const char *console_socket;
  int preserve_fds;
  bool no_pivot;
  bool no_new_keyring;
};

int container_create (struct sbx_ctx *ctx, const struct create_opts *o, struct sbx_error *err);
/* Create and start in one process. In the foreground (detach false) it waits,
 * forwards signals, deletes the container (unless keep) and sets *exit_status to
 * the program's status (128+N when killed by signal N). */
int container_run (struct sbx_ctx *ctx, const struct create_opts *o, bool detach, bool keep, int *exit_status,
                   struct sbx_error *err);
int container_start (struct sbx_ctx *ctx, const char *id, struct sbx_error *err);
int container_kill (struct sbx_ctx *ctx, const char *id, int sig, bool all, struct sbx_error *err);
int container_delete (struct sbx_ctx *ctx, const char *id, bool force, struct sbx_error *err);
/* container_cgroup.c */
struct oci_resources;
struct cgroup_stats;
int container_update (struct sbx_ctx *ctx, const char *id, const struct oci_resources *r, struct sbx_error *err);
int container_pause (struct sbx_ctx *ctx, const char *id, bool pause, struct sbx_error *err);
int container_pids (struct sbx_ctx *ctx, const char *id, pid_t **pids, size_t *n, struct sbx_error *err);
int container_stats (struct sbx_ctx *ctx, const char *id, struct cgroup_stats *s, bool *running,
                     struct sbx_error *err);
/* The OCI state JSON of a container (malloc'd). */
char *container_state (struct sbx_ctx *ctx, const char *id, struct sbx_error *err);

#endif
