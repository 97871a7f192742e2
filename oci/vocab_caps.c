/* Capability names, through libcap: it learns a new capability's name with the kernel
 * headers it ships, so the runtime has no list of its own to fall behind.
 *
 * OCI writes the kernel's names ("CAP_SYS_ADMIN"); libcap's are the same in lower case
 * and its lookup ignores case. cap_from_name stops at the first character that is not
 * a letter or '_' and takes a leading digit as a number, so a name is checked for its
 * form here first: "CAP_BPF2" or "3" is not a capability's name. */
#include "build-config.h"
#include "oci/vocab.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

int
sbx_capability_from_name (const char *name)
{
  cap_value_t v;
  if (!name || strncasecmp (name, "CAP_", 4) != 0 || !name[4])
    return -1;
  for (const char *c = name + 4; *c; c++)
    if (!isalpha ((unsigned char) *c) && *c != '_')
      return -1;
  if (cap_from_name (name, &v) < 0 || v < 0 || v > 63)
    return -1;
  return (int) v;
}

int
sbx_capability_count (void)
{
  int n = (int) cap_max_bits ();
  return n > 64 ? 64 : n;
}

/* libcap's name for cap in the kernel's spelling; false if it knows none (it then
 * answers with the number). */
static bool
known_name (int cap, char buf[SBX_CAP_NAME_MAX])
{
  char *name = cap_to_name ((cap_value_t) cap);
  bool ok = name && strncasecmp (name, "cap_", 4) == 0 && strlen (name) < SBX_CAP_NAME_MAX;
  if (ok)
    for (size_t i = 0;; i++)
      {
        buf[i] = (char) toupper ((unsigned char) name[i]);
        if (!name[i])
          break;
      }
  cap_free (name);
  return ok;
}

const char *
sbx_capability_name (int cap, char buf[SBX_CAP_NAME_MAX])
{
  if (!known_name (cap, buf))
    snprintf (buf, SBX_CAP_NAME_MAX, "capability %d", cap);
  return buf;
}

size_t
sbx_capability_known_names (char names[64][SBX_CAP_NAME_MAX])
{
  size_t n = 0;
  while (n < 64 && known_name ((int) n, names[n]))
    n++;
  return n;
}
