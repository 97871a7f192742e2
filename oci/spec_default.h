/* The config.json `sbx-oci spec` writes: built with yajl_gen from constants and
 * the caller's ids (never printf into a JSON template). */
#ifndef SBX_OCI_SPEC_DEFAULT_H
#define SBX_OCI_SPEC_DEFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

char *oci_default_spec_json (bool rootless, uid_t uid, gid_t gid, size_t *len);

#endif
