/* The features.md document (what this runtime implements, not what the host has). */
#ifndef SBX_OCI_FEATURES_H
#define SBX_OCI_FEATURES_H

char *oci_features_json (void);

#endif
