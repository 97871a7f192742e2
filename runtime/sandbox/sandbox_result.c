/* The result of a one-shot run as one JSON object, for programs that drive
 * `sbx-oci python` (contrib/python). Field by field:
 *   id, error           error is non-null when the sandbox could not be set up: then
 *                       no program ran and exit_code is null
 *   exit_code, signal   the program's status (128+N on signal N) and the signal's name
 *   oom_killed          the kernel killed a process of the sandbox for memory
 *   timed_out           --timeout passed and everything was killed
 *   cpu_time_exceeded   a process reached --cpu-time (SIGXCPU, then SIGKILL)
 *   limits_hit          every limit that stopped or hampered the run: "memory" (an
 *                       OOM kill), "pids" (the cgroup refused a fork or a thread),
 *                       "fsize" (SIGXFSZ, or a workdir file --fsize long), "cpu_time",
 *                       "timeout", "output" (a stream was capped), "tmp_size"
 *                       (/tmp or /dev/shm was full when the program ended; as
 *                       root: rootless the runtime cannot hold them), "nofile"
 *                       (the program's stderr said "Too many open files": the
 *                       kernel counts no EMFILE, so one the program caught and
 *                       kept quiet about is not seen, and neither is a full /tmp
 *                       the program emptied again)
 *   wall_ms, cpu_user_ms, cpu_sys_ms, cpu_scope
 *   peak_memory_bytes, peak_memory_scope
 *   stdout_bytes, stderr_bytes, stdout_truncated, stderr_truncated (and with
 *                       --result -, stdout and stderr as text, invalid UTF-8 replaced)
 *   files               [{path, change: created|modified|deleted, type, size}] in the
 *                       workdir; files_truncated when the walk hit its bound
 *   workdir             the host path (null when it was a temporary one)
 *   limits, network, degraded[], landlock_abi
 *   no_subprocess       --no-subprocess was given; then exec_refused (how many execs
 *                       the program tried) and exec_refused_paths (the first 16)
 *   session             a session's cell (--session): {name, state: "kept" (the cell
 *                       ended: its state is the session's) or "rolled back" (it died:
 *                       the session is as it was before it)}; null otherwise */
#include "build-config.h"
#include "runtime/sandbox/sandbox_result.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oci/vocab.h"
#include "runtime/base/json.h"
#include "runtime/base/util.h"

/* A copy of buf with every invalid UTF-8 sequence replaced by U+FFFD. */
static char *
utf8_sanitize (const char *buf, size_t len)
{
  char *out = xmalloc0 (len * 3 + 1), *o = out;
  const unsigned char *s = (const unsigned char *) buf, *end = s + len;
  while (s < end)
    {
      size_t n = 0;
      unsigned cp = 0;
      if (*s < 0x80)
        n = 1;
      else if ((*s & 0xe0) == 0xc0 && *s >= 0xc2)
        n = 2, cp = *s & 0x1f;
      else if ((*s & 0xf0) == 0xe0)
        n = 3, cp = *s & 0x0f;
      else if ((*s & 0xf8) == 0xf0 && *s <= 0xf4)
        n = 4, cp = *s & 0x07;
      if (n > 1)
        {
          if ((size_t) (end - s) < n)
            n = 0;
          for (size_t i = 1; n && i < n; i++)
            {
              if ((s[i] & 0xc0) != 0x80)
                n = 0;
              else
                cp = cp << 6 | (s[i] & 0x3f);
            }
          /* overlong, surrogate or out of range */
          if (n && ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))))
            n = 0;
        }
      if (n == 0 || (n == 1 && *s == 0))
        {
          /* U+FFFD; a NUL too (yajl takes NUL-terminated strings) */
          memcpy (o, "\xef\xbf\xbd", 3);
          o += 3;
          s++;
          continue;
        }
      memcpy (o, s, n);
      o += n;
      s += n;
    }
  *o = '\0';
  return out;
}

/* Milliseconds to the microsecond: yajl_gen_double prints 17 digits of noise. */
static yajl_gen_status
gen_key_double (yajl_gen g, const char *key, double v)
{
  char buf[64];
  int n = snprintf (buf, sizeof buf, "%.3f", v);
  yajl_gen_status st = gen_string (g, key);
  return st != yajl_gen_status_ok ? st : yajl_gen_number (g, buf, (size_t) n);
}

static yajl_gen_status
gen_key_null (yajl_gen g, const char *key)
{
  yajl_gen_status st = gen_string (g, key);
  return st != yajl_gen_status_ok ? st : yajl_gen_null (g);
}

struct files_ctx
{
  yajl_gen g;
  bool failed;
};

static const char *
type_name (mode_t m)
{
  return S_ISREG (m) ? "file" : S_ISDIR (m) ? "dir" : S_ISLNK (m) ? "symlink" : "other";
}

static void
gen_file (void *data, const struct workdir_entry *e, const char *change)
{
  struct files_ctx *f = data;
  yajl_gen g = f->g;
  if (f->failed)
    return;
  GEN (yajl_gen_map_open (g));
  {
    /* names are the sandbox's choice of bytes: JSON wants UTF-8 */
    _cleanup_free_ char *path = utf8_sanitize (e->path, strlen (e->path));
    GEN (gen_key_string (g, "path", path));
  }
  GEN (gen_key_string (g, "change", change));
  GEN (gen_key_string (g, "type", type_name (e->mode)));
  GEN (gen_key_int (g, "size", (long long) e->size));
  GEN (yajl_gen_map_close (g));
  return;
gen_fail:
  f->failed = true;
}

static yajl_gen_status
gen_stream (yajl_gen g, const char *name, const struct output_stream *s, bool text)
{
  _cleanup_free_ char *bytes = xasprintf ("%s_bytes", name), *trunc = xasprintf ("%s_truncated", name);
  yajl_gen_status st;
  if ((st = gen_key_int (g, bytes, s ? (long long) s->total : 0)) != yajl_gen_status_ok
      || (st = gen_key_bool (g, trunc, s && s->truncated)) != yajl_gen_status_ok)
    return st;
  if (text)
    {
      _cleanup_free_ char *clean = utf8_sanitize (s && s->buf ? s->buf : "", s ? s->len : 0);
      st = gen_key_string (g, name, clean);
    }
  return st;
}

char *
sandbox_result_json (const struct sandbox_result *r, size_t *len)
{
  yajl_gen g = gen_new (false);
  struct files_ctx files = { .g = g };
  const struct sandbox_policy *p = r->policy;
  static const char *const networks[] = { "none", "loopback", "full" };
  char *out = NULL;
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "id", r->id ? r->id : ""));
  if (r->error)
    GEN (gen_key_string (g, "error", r->error));
  else
    GEN (gen_key_null (g, "error"));
  if (r->started)
    GEN (gen_key_int (g, "exit_code", r->exit_code));
  else
    GEN (gen_key_null (g, "exit_code"));
  if (r->signal)
    {
      const char *name = sbx_signal_name (r->signal);
      _cleanup_free_ char *full = name ? xasprintf ("SIG%s", name) : xasprintf ("SIGRT%d", r->signal - SBX_SIGRTMIN);
      GEN (gen_key_string (g, "signal", full));
    }
  else
    GEN (gen_key_null (g, "signal"));
  GEN (gen_key_bool (g, "oom_killed", r->oom_killed));
  GEN (gen_key_bool (g, "timed_out", r->timed_out));
  GEN (gen_key_bool (g, "cpu_time_exceeded", r->cpu_time_exceeded));
  GEN (gen_string (g, "limits_hit"));
  GEN (yajl_gen_array_open (g));
  if (r->oom_killed)
    GEN (gen_string (g, "memory"));
  if (r->pids_limit_hit)
    GEN (gen_string (g, "pids"));
  if (r->fsize_reached)
    GEN (gen_string (g, "fsize"));
  if (r->tmp_filled)
    GEN (gen_string (g, "tmp_size"));
  if (r->nofile_reported)
    GEN (gen_string (g, "nofile"));
  if (r->cpu_time_exceeded)
    GEN (gen_string (g, "cpu_time"));
  if (r->timed_out)
    GEN (gen_string (g, "timeout"));
  if ((r->out && r->out->truncated) || (r->err && r->err->truncated))
    GEN (gen_string (g, "output"));
  GEN (yajl_gen_array_close (g));
  GEN (gen_key_double (g, "wall_ms", r->wall_ms));
  GEN (gen_key_double (g, "cpu_user_ms", r->cpu_user_ms));
  GEN (gen_key_double (g, "cpu_sys_ms", r->cpu_sys_ms));
  GEN (gen_key_string (g, "cpu_scope", r->cpu_scope ? r->cpu_scope : "waited"));
  GEN (gen_key_int (g, "peak_memory_bytes", (long long) r->peak_memory_bytes));
  GEN (gen_key_string (g, "peak_memory_scope", r->peak_memory_scope ? r->peak_memory_scope : "largest-process"));
  GEN (gen_stream (g, "stdout", r->out, r->include_output));
  GEN (gen_stream (g, "stderr", r->err, r->include_output));
  GEN (gen_string (g, "files"));
  GEN (yajl_gen_array_open (g));
  if (r->before && r->after)
    workdir_diff (r->before, r->after, gen_file, &files);
  if (files.failed)
    goto gen_fail;
  GEN (yajl_gen_array_close (g));
  GEN (gen_key_bool (g, "files_truncated", (r->before && r->before->truncated) || (r->after && r->after->truncated)));
  if (r->workdir)
    GEN (gen_key_string (g, "workdir", r->workdir));
  else
    GEN (gen_key_null (g, "workdir"));
  if (p)
    {
      GEN (gen_key_string (g, "network", networks[p->network]));
      GEN (gen_string (g, "limits"));
      GEN (yajl_gen_map_open (g));
      GEN (gen_key_int (g, "memory_bytes", (long long) p->memory));
      GEN (gen_key_int (g, "cpu_time_s", (long long) p->cpu_time));
      GEN (gen_key_int (g, "pids", (long long) p->pids));
      GEN (gen_key_int (g, "nofile", (long long) p->nofile));
      GEN (gen_key_int (g, "fsize_bytes", (long long) p->fsize));
      GEN (gen_key_double (g, "timeout_s", p->timeout));
      GEN (yajl_gen_map_close (g));
    }
  GEN (gen_string (g, "degraded"));
  GEN (yajl_gen_array_open (g));
  for (size_t i = 0; r->limits && i < r->limits->n_degraded; i++)
    GEN (gen_string (g, r->limits->degraded[i]));
  GEN (yajl_gen_array_close (g));
  GEN (gen_key_int (g, "landlock_abi", r->landlock_abi));
  GEN (gen_key_bool (g, "no_subprocess", r->guard != NULL));
  if (r->guard)
    {
      GEN (gen_key_int (g, "exec_refused", (long long) r->guard->refused));
      GEN (gen_string (g, "exec_refused_paths"));
      GEN (gen_string_array (g, (const char *const *) r->guard->paths, r->guard->n_paths));
    }
  GEN (sandbox_report_gen (g, r->report));
  if (r->session)
    {
      GEN (gen_string (g, "session"));
      GEN (yajl_gen_map_open (g));
      GEN (gen_key_string (g, "name", r->session));
      GEN (gen_key_string (g, "state", r->session_kept ? "kept" : "rolled back"));
      GEN (yajl_gen_map_close (g));
    }
  else
    GEN (gen_key_null (g, "session"));
  GEN (yajl_gen_map_close (g));
  out = gen_finish (g, len);
gen_fail:
  yajl_gen_free (g);
  return out;
}
