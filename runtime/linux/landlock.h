/* Landlock as a second filesystem layer, asked for with annotations (the runtime spec
 * has no field for it; crun uses "run.oci." keys the same way):
 *
 *   run.sbx-oci.landlock.read         "PATH:PATH:..."  read files, list dirs, execute
 *   run.sbx-oci.landlock.write-files  "PATH:..."       also write and truncate existing
 *                                                      files and use device ioctls
 *                                                      (/dev, /proc), create nothing
 *   run.sbx-oci.landlock.write        "PATH:..."       everything (the workdir, /tmp)
 *   run.sbx-oci.landlock.best-effort  "true"           run without it on a kernel
 *                                                      that has no Landlock (warned)
 *
 * Paths are the container's, resolved after pivot_root. Anything not granted is
 * denied: every access right the kernel's Landlock ABI knows is handled. From ABI 6
 * the domain is also scoped: no abstract unix socket or signal outside it. Without
 * best-effort, a kernel without Landlock makes create fail (fail closed). */
#ifndef SBX_LANDLOCK_H
#define SBX_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/config.h"
#include "runtime/base/error.h"
#include "runtime/base/log.h"

#define LANDLOCK_ANNOTATION_PREFIX "run.sbx-oci.landlock."

struct landlock_rule
{
  char *path;
  uint64_t access;
};

struct landlock_plan
{
  int abi; /* 0: Landlock not asked for (or best effort on a kernel without it) */
  struct landlock_rule *rules;
  size_t n_rules;
};

/* The kernel's Landlock ABI version, 0 if it has none. */
int landlock_abi (void);
/* Parse the annotations and check the kernel (before any side effect). */
int landlock_plan_build (const struct oci_config *c, struct sbx_log *log, struct landlock_plan *p,
                         struct sbx_error *err);
/* Restrict the calling process (and its future children); call after pivot_root,
 * with CAP_SYS_ADMIN in the user namespace or no_new_privs. */
int landlock_apply (const struct landlock_plan *p, struct sbx_error *err);
void landlock_plan_free (struct landlock_plan *p);

#endif
