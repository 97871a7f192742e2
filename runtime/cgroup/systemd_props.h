/* A container's scope as systemd unit properties ("a(sv)" of StartTransientUnit and
 * SetUnitProperties): where it goes, that its subtree is ours (Delegate), its limits
 * (so that systemd writes the same values again at daemon-reload instead of its
 * defaults), and the config's org.systemd.property.* annotations. */
#ifndef SBX_SYSTEMD_PROPS_H
#define SBX_SYSTEMD_PROPS_H

#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "oci/resources.h"
#include "runtime/base/error.h"

struct DBusMessageIter;

struct sd_scope_spec
{
  const char *unit;        /* "libpod-ID.scope" */
  const char *slice;       /* "machine.slice" */
  const char *description; /* "sbx-oci container ID" */
  pid_t pid;               /* the container's init, moved into the scope */
  pid_t keeper;            /* > 0: the runtime's keeper, moved there too */
  const struct oci_resources *resources;
  yajl_val annotations; /* NULL: none */
};

/* StartTransientUnit's arguments: name, mode, properties, no auxiliary units. */
int sd_props_fill_start (struct DBusMessageIter *args, const void *spec, struct sbx_error *err);

struct sd_update_spec
{
  const char *unit;
  const struct oci_resources *resources;
};
/* SetUnitProperties' arguments: name, runtime only, the limits the update names. */
int sd_props_fill_update (struct DBusMessageIter *args, const void *spec, struct sbx_error *err);

/* A method's single unit-name argument (StopUnit adds the mode). */
int sd_props_fill_unit (struct DBusMessageIter *args, const void *unit, struct sbx_error *err);
int sd_props_fill_stop (struct DBusMessageIter *args, const void *unit, struct sbx_error *err);

#endif
