/* The JSON parser (runtime/base/json_parse.c): what RFC 8259 accepts is accepted and decoded
 * exactly, what it refuses is refused with the reason and position the suites rely
 * on, and json_span gives the bytes of an object as written (the seccomp cache key).
 * The config parser's fuzzer drives the same code with random input; this pins the
 * grammar down case by case. */
#include "build-config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/json.h"

static int failures;

/* ok: the document parses and its "v" member is the string `want` (want NULL: only
 * that it parses). */
static void
accept (const char *doc, const char *want)
{
  struct sbx_error err = { 0 };
  yajl_val root = json_parse (doc, strlen (doc), "t", &err);
  yajl_val v;
  if (!root)
    {
      printf ("FAIL accept %s: %s\n", doc, err.msg);
      failures++;
      sbx_error_clear (&err);
      return;
    }
  if (want && (!(v = json_member (root, "v")) || v->type != yajl_t_string || strcmp (v->u.string, want) != 0))
    {
      printf ("FAIL accept %s: v is not \"%s\"\n", doc, want);
      failures++;
    }
  json_free (root);
}

/* refused, with `why` in the message ("" for any) */
static void
refuse (const char *doc, size_t len, const char *why)
{
  struct sbx_error err = { 0 };
  yajl_val root = json_parse (doc, len, "t", &err);
  if (root)
    {
      printf ("FAIL refuse %.*s: parsed\n", (int) len, doc);
      failures++;
      json_free (root);
      return;
    }
  if (!err.msg || !strstr (err.msg, why))
    {
      printf ("FAIL refuse %.*s: \"%s\" lacks \"%s\"\n", (int) len, doc, err.msg ? err.msg : "", why);
      failures++;
    }
  sbx_error_clear (&err);
}

static void
refuse_str (const char *doc, const char *why)
{
  refuse (doc, strlen (doc), why);
}

static char *
nested (int depth)
{
  char *s = malloc ((size_t) depth * 2 + 16);
  int n = 0;
  n += sprintf (s + n, "{\"v\":");
  for (int i = 0; i < depth; i++)
    s[n++] = '[';
  for (int i = 0; i < depth; i++)
    s[n++] = ']';
  strcpy (s + n, "}");
  return s;
}

int
main (void)
{
  /* strings: escapes, UTF-8 as is, \u escapes and surrogate pairs decoded */
  accept ("{\"v\": \"plain\"}", "plain");
  accept ("{\"v\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}", "a\"b\\c/d\b\f\n\r\t");
  accept ("{\"v\":\"\\u00e9\\u20AC\"}", "\xc3\xa9\xe2\x82\xac");
  accept ("{\"v\":\"\\ud83d\\ude00\"}", "\xf0\x9f\x98\x80");
  accept ("{\"v\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  accept ("{\"v\":\"\x7f\"}", "\x7f");
  accept ("{\"v\":\"\"}", "");
  accept (" \t\r\n{ \"v\" : \"x\" , \"w\" : [ 1 , -2.5e+3 , 0.0 , 1E9 , true , false , null , { } , [ ] ] } \n",
          "x");
  accept ("[]", NULL);
  accept ("\"a top-level string\"", NULL);
  accept ("-0", NULL);
  refuse_str ("{\"v\":\"\\x41\"}", "invalid escape");
  refuse_str ("{\"v\":\"\\u12\"}", "\\u escape");
  refuse_str ("{\"v\":\"\\ud83d\"}", "surrogate");
  refuse_str ("{\"v\":\"\\ude00\\ud83d\"}", "surrogate");
  refuse_str ("{\"v\":\"\\u0000\"}", "NUL");
  refuse_str ("{\"\\u0000\":1}", "NUL");
  refuse_str ("{\"v\":\"a\tb\"}", "control character");
  refuse_str ("{\"v\":\"\xc0\xaf\"}", "UTF-8");          /* overlong '/' */
  refuse_str ("{\"v\":\"\xed\xa0\x80\"}", "UTF-8");      /* a surrogate, encoded */
  refuse_str ("{\"v\":\"\xf4\x90\x80\x80\"}", "UTF-8");  /* above U+10FFFF */
  refuse_str ("{\"v\":\"\xe2\x82\"}", "UTF-8");          /* cut short */
  refuse_str ("{\"v\":\"\x80\"}", "UTF-8");
  refuse_str ("{\"v\":\"open", "premature end");
  refuse_str ("{\"v\":\"ends in a backslash\\", "premature end");
  /* numbers */
  refuse_str ("[01]", "expected ','");
  refuse_str ("[1.]", "decimal point");
  refuse_str ("[.5]", "value expected");
  refuse_str ("[1e]", "exponent");
  refuse_str ("[+1]", "value expected");
  refuse_str ("[-]", "invalid number");
  refuse_str ("[NaN]", "value expected");
  /* literals and structure */
  refuse_str ("[tru]", "invalid literal");
  refuse_str ("[nul", "invalid literal");
  refuse_str ("[1,]", "value expected");
  refuse_str ("{\"a\":1,}", "object key");
  refuse_str ("{\"a\" 1}", "':'");
  refuse_str ("{a:1}", "object key");
  refuse_str ("[1 2]", "expected ','");
  refuse_str ("{\"a\":1}{}", "trailing garbage");
  refuse_str ("{\"a\":1}\n  x", "line 2 col 3");
  refuse_str ("{\n  /* c */ \"a\":1}", "line 2 col 3: comments");
  refuse_str ("[1] // c", "comments");
  refuse_str ("", "empty document");
  refuse_str (" \n ", "empty document");
  refuse_str ("{\"a\":1,\"a\":2}", "duplicate");
  refuse_str ("{\"a\":", "premature end");
  refuse_str ("[", "premature end");
  refuse ("{\"a\":\"x\0y\"}", 11, "NUL byte");
  /* nesting: 63 arrays under the root object is the limit of 64 levels */
  {
    char *ok = nested (63), *deep = nested (64);
    accept (ok, NULL);
    refuse_str (deep, "nesting");
    free (ok);
    free (deep);
  }
  /* many keys: the hashed duplicate check (past 16 keys) */
  {
    char doc[4096];
    int n = sprintf (doc, "{");
    for (int i = 0; i < 100; i++)
      n += sprintf (doc + n, "%s\"k%d\":%d", i ? "," : "", i, i);
    strcpy (doc + n, "}");
    accept (doc, NULL);
    n--;
    n += sprintf (doc + n, ",\"k57\":0}");
    refuse_str (doc, "duplicate");
  }
  /* json_span: an object's bytes as written */
  {
    const char *doc = "{ \"s\" : { \"b\" : [1, 2] } , \"t\": 1 }";
    struct sbx_error err = { 0 };
    yajl_val root = json_parse (doc, strlen (doc), "t", &err);
    size_t start, end;
    if (!root || !json_span (json_member (root, "s"), &start, &end)
        || strncmp (doc + start, "{ \"b\" : [1, 2] }", end - start) != 0 || end - start != 16)
      {
        printf ("FAIL json_span\n");
        failures++;
      }
    json_free (root);
  }
  /* json_parse_config: linux.seccomp.syscalls is found, not parsed (here it holds a
     bad escape, which json_parse refuses), and parsed on demand, with the error
     placed in the whole document; another "syscalls" is parsed as usual */
  {
    const char *doc = "{\"linux\": {\"seccomp\": {\"defaultAction\": \"x\",\n"
                      " \"syscalls\": [{\"names\": [\"a]\\\"}\"]}, {\"names\": [\"b\\q\"]}]}},\n"
                      " \"syscalls\": [1]}";
    struct sbx_error err = { 0 };
    yajl_val root = json_parse_config (doc, strlen (doc), "t", &err), rules, other, parsed = NULL;
    size_t start, end;
    rules = root ? json_member (json_member (json_member (root, "linux"), "seccomp"), "syscalls") : NULL;
    other = root ? json_member (root, "syscalls") : NULL;
    if (!root || !json_is_deferred (rules) || rules->u.array.len != 0 || !json_span (rules, &start, &end)
        || doc[start] != '[' || doc[end - 1] != ']' || doc[end] != '}' || json_is_deferred (other)
        || other->u.array.len != 1)
      {
        printf ("FAIL deferral: linux.seccomp.syscalls not deferred with its span (%s)\n", err.msg ? err.msg : "");
        failures++;
      }
    sbx_error_clear (&err);
    if (root)
      parsed = json_parse_deferred (doc, rules, "t", &err);
    if (parsed || !err.msg || !strstr (err.msg, "line 2 col") || !strstr (err.msg, "invalid escape"))
      {
        printf ("FAIL deferral: the deferred array's error: %s\n", err.msg ? err.msg : "(none)");
        failures++;
      }
    sbx_error_clear (&err);
    json_free (parsed);
    json_free (root);
    refuse_str (doc, "invalid escape");
    /* a valid deferred array parses to what json_parse makes of it */
    {
      const char *ok = "{\"linux\": {\"seccomp\": {\"syscalls\": [{\"names\": [\"a]\\\"}\", \"b\"]}]}}}";
      root = json_parse_config (ok, strlen (ok), "t", &err);
      rules = root ? json_member (json_member (json_member (root, "linux"), "seccomp"), "syscalls") : NULL;
      parsed = json_is_deferred (rules) ? json_parse_deferred (ok, rules, "t", &err) : NULL;
      if (!parsed || parsed->type != yajl_t_array || parsed->u.array.len != 1
          || strcmp (json_member (parsed->u.array.values[0], "names")->u.array.values[0]->u.string, "a]\"}") != 0)
        {
          printf ("FAIL deferral: the deferred array's contents (%s)\n", err.msg ? err.msg : "");
          failures++;
        }
      sbx_error_clear (&err);
      json_free (parsed);
      json_free (root);
    }
    /* unterminated, and nested too deep: refused by the skip itself */
    {
      char deep[400];
      int n = sprintf (deep, "{\"linux\": {\"seccomp\": {\"syscalls\": ");
      for (int i = 0; i < 70; i++)
        deep[n++] = '[';
      deep[n] = '\0';
      root = json_parse_config (deep, strlen (deep), "t", &err);
      if (root || !err.msg || !strstr (err.msg, "nesting"))
        {
          printf ("FAIL deferral: deep nesting: %s\n", err.msg ? err.msg : "(parsed)");
          failures++;
        }
      sbx_error_clear (&err);
      json_free (root);
      root = json_parse_config (deep, n - 60, "t", &err);
      if (root || !err.msg || !strstr (err.msg, "premature end"))
        {
          printf ("FAIL deferral: unterminated: %s\n", err.msg ? err.msg : "(parsed)");
          failures++;
        }
      sbx_error_clear (&err);
      json_free (root);
    }
  }
  if (failures)
    {
      printf ("json: %d failure(s)\n", failures);
      return 1;
    }
  printf ("json: all cases agree\n");
  return 0;
}
