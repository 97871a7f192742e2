#include "build-config.h"
#include "runtime/base/cli.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#include "runtime/base/util.h"

int
cli_usage_error (struct sbx_error *err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  sbx_error_setv (err, 0, fmt, ap);
  va_end (ap);
  err->exit_hint = SBX_EXIT_USAGE;
  return -1;
}

int
cli_parse_uint (const char *opt, const char *s, unsigned max, unsigned *out, struct sbx_error *err)
{
  char *end;
  unsigned long v;
  errno = 0;
  v = strtoul (s, &end, 10);
  if (!*s || *end || errno || v > max || *s == '-')
    return cli_usage_error (err, "%s: '%s' is not a number in [0, %u]", opt, s, max);
  *out = (unsigned) v;
  return 0;
}

/* "96m", "1g", "512k", "1024", "-1": bytes, binary units like runc. */
int
cli_parse_bytes (const char *opt, const char *s, int64_t *out, struct sbx_error *err)
{
  char *end;
  double v;
  int64_t mult = 1;
  if (strcmp (s, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  v = strtod (s, &end);
  if (end == s || !(v >= 0) || !isdigit ((unsigned char) *s))
    return cli_usage_error (err, "%s: '%s' is not a size like 512k, 96m or 1g", opt, s);
  if (*end)
    {
      static const char units[] = "kmgt"; /* binary: k = 2^10, m = 2^20, ... */
      const char *u = strchr (units, tolower ((unsigned char) *end));
      if (!u)
        return cli_usage_error (err, "%s: '%s' is not a size like 512k, 96m or 1g", opt, s);
      mult = 1LL << (10 * (u - units + 1));
      end++;
    }
  if ((*end == 'b' || *end == 'B') && end[1] == '\0')
    end++;
  if (*end)
    return cli_usage_error (err, "%s: '%s' is not a size like 512k, 96m or 1g", opt, s);
  if (v * (double) mult >= 9.2e18)
    return cli_usage_error (err, "%s: '%s' is too large", opt, s);
  *out = (int64_t) (v * (double) mult);
  return 0;
}

void
cli_print_help (const struct command *cmd, FILE *out)
{
  fprintf (out, "Usage: sbx-oci %s %s\n\n%s\n", cmd->name, cmd->args, cmd->summary);
  if (cmd->opts && cmd->opts[0].name)
    fprintf (out, "\nOptions:\n");
  for (const struct cli_opt *o = cmd->opts; o && o->name; o++)
    {
      char left[64];
      if (!o->help)
        continue;
      if (o->key < 256)
        snprintf (left, sizeof left, "-%c, --%s%s%s", o->key, o->name, o->has_arg ? " " : "", o->has_arg ? o->arg : "");
      else
        snprintf (left, sizeof left, "    --%s%s%s", o->name, o->has_arg ? " " : "", o->has_arg ? o->arg : "");
      fprintf (out, "  %-30s %s\n", left, o->help);
    }
  fprintf (out, "  %-30s %s\n", "-h, --help", "show this help");
}

int
cli_parse (const struct command *cmd, int argc, char **argv, cli_opt_fn fn, void *data, struct sbx_error *err)
{
  struct option longopts[64];
  char shortopts[128];
  size_t n = 0, s = 0;
  int c;

  /* '+': stop at the first positional argument (exec's command line must not be
   * parsed as our options); ':' makes a missing argument distinguishable. */
  if (!cmd->permute)
    shortopts[s++] = '+';
  shortopts[s++] = ':';
  for (const struct cli_opt *o = cmd->opts; o && o->name && n < ARRAY_SIZE (longopts) - 2; o++)
    {
      longopts[n++] = (struct option) { o->name, o->has_arg, NULL, o->key };
      if (o->key < 256)
        {
          shortopts[s++] = (char) o->key;
          if (o->has_arg == required_argument)
            shortopts[s++] = ':';
          else if (o->has_arg == optional_argument)
            {
              shortopts[s++] = ':';
              shortopts[s++] = ':';
            }
        }
    }
  longopts[n++] = (struct option) { "help", no_argument, NULL, 'h' };
  longopts[n] = (struct option) { 0 };
  shortopts[s++] = 'h';
  shortopts[s] = '\0';

  optind = 0; /* reset getopt for this argv */
  opterr = 0;
  while ((c = getopt_long (argc, argv, shortopts, longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          cli_print_help (cmd, stdout);
          return CLI_HELP_SHOWN;
        }
      if (c == '?')
        {
          if (optopt && optopt < 256)
            return cli_usage_error (err, "%s: unknown option -%c (see sbx-oci %s --help)", cmd->name, optopt, cmd->name);
          return cli_usage_error (err, "%s: unknown option %s (see sbx-oci %s --help)", cmd->name, argv[optind - 1],
                                  cmd->name);
        }
      if (c == ':')
        return cli_usage_error (err, "%s: option %s needs an argument", cmd->name, argv[optind - 1]);
      if (fn (data, c, optarg, err) < 0)
        return -1;
    }
  return optind;
}
