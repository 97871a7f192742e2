/* The config.json `sbx-oci spec` writes: built with yajl_gen from constants and
 * the caller's ids (never printf into a JSON template). */
#ifndef SBX_OCI_SPEC_DEFAULT_H
#define SBX_OCI_SPEC_DEFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* runc's masked and read-only paths (NULL-terminated), also used by the Python sandbox. */
extern const char *const oci_default_masked_paths[];
extern const char *const oci_default_readonly_paths[];

char *oci_default_spec_json (bool rootless, uid_t uid, gid_t gid, size_t *len);

#endif
