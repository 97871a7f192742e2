/* libFuzzer target: every JSON document sbx-oci reads, through parse -> validate ->
 * free, with no side effects. The first byte picks the document kind (so one corpus
 * covers all of them); the rest is the document.
 *   0 config.json   1 process.json (exec --process)   2 LinuxResources (update)
 *   3 state.json */
#include "build-config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/config.h"
#include "oci/resources.h"
#include "oci/seccomp_config.h"
#include "oci/state.h"
#include "runtime/base/json.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* json_parse_config with its deferred seccomp rules parsed must accept exactly what
 * json_parse accepts (json_parse.c's claim that deferring is sound). */
static void
check_deferral (const char *buf, size_t len)
{
  struct sbx_error err = { 0 };
  yajl_val full = json_parse (buf, len, "config.json", &err);
  yajl_val lazy, rules = NULL, rules_doc = NULL;
  bool lazy_ok;
  sbx_error_clear (&err);
  lazy = json_parse_config (buf, len, "config.json", &err);
  sbx_error_clear (&err);
  lazy_ok = lazy != NULL;
  if (lazy && lazy->type == yajl_t_object)
    {
      yajl_val l = json_member (lazy, "linux"), sc = l && l->type == yajl_t_object ? json_member (l, "seccomp") : NULL;
      rules = sc && sc->type == yajl_t_object ? json_member (sc, "syscalls") : NULL;
    }
  if (json_is_deferred (rules))
    {
      rules_doc = json_parse_deferred (buf, rules, "config.json", &err);
      sbx_error_clear (&err);
      lazy_ok = rules_doc != NULL;
    }
  if (lazy_ok != (full != NULL))
    abort ();
  json_free (rules_doc);
  json_free (lazy);
  json_free (full);
}

static void
fuzz_config (char *buf, size_t len)
{
  struct sbx_error err = { 0 };
  struct oci_config *c;
  check_deferral (buf, len);
  c = oci_config_parse (buf, len, "config.json", NULL, &err); /* takes buf */
  if (c)
    {
      struct oci_resources r;
      struct oci_seccomp s;
      oci_config_validate (c, true, &err);
      sbx_error_clear (&err);
      /* after a failed parse the partial result is still the caller's to clear */
      oci_resources_parse (c->linux_.resources, "linux.resources", &r, &err);
      oci_resources_clear (&r);
      sbx_error_clear (&err);
      if (oci_seccomp_parse (c->linux_.seccomp, "linux.seccomp", &s, &err) == 0)
        {
          s.text = c->raw;
          oci_seccomp_load_rules (&s, &err);
        }
      oci_seccomp_clear (&s);
      oci_config_free (c);
    }
  sbx_error_clear (&err);
}

static void
fuzz_tree (int kind, const char *buf, size_t len)
{
  struct sbx_error err = { 0 };
  yajl_val tree = json_parse (buf, len, "input", &err);
  if (tree && kind == 1)
    {
      struct oci_process p;
      memset (&p, 0, sizeof p);
      if (oci_process_parse (tree, "process", NULL, &p, &err) == 0)
        oci_process_validate (&p, "process", &err);
      oci_process_clear (&p);
    }
  else if (tree && kind == 2)
    {
      struct oci_resources r;
      oci_resources_parse (tree, "resources", &r, &err);
      oci_resources_clear (&r);
    }
  json_free (tree);
  sbx_error_clear (&err);
}

static void
fuzz_state (const char *buf, size_t len)
{
  struct sbx_error err = { 0 };
  struct sbx_state s;
  oci_state_parse (buf, len, &s, &err);
  oci_state_clear (&s);
  sbx_error_clear (&err);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int kind;
  char *buf;
  if (size < 1 || size > SBX_JSON_MAX_SIZE)
    return 0;
  kind = data[0] % 4;
  buf = malloc (size);
  memcpy (buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  switch (kind)
    {
    case 0:
      fuzz_config (buf, size - 1); /* owns buf */
      return 0;
    case 3:
      fuzz_state (buf, size - 1);
      break;
    default:
      fuzz_tree (kind, buf, size - 1);
      break;
    }
  free (buf);
  return 0;
}
