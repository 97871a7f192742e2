/* The one JSON object `sbx-oci python --result` writes (sandbox_result.c). */
#ifndef SBX_SANDBOX_RESULT_H
#define SBX_SANDBOX_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/sandbox/sandbox.h"
#include "runtime/sandbox/sandbox_exec_guard.h"
#include "runtime/sandbox/sandbox_output.h"
#include "runtime/sandbox/sandbox_report.h"

struct sandbox_result
{
  const char *id;
  const char *error; /* the sandbox could not be set up (exit_code etc. then mean nothing) */
  bool started;
  int exit_code;   /* the program's, 128+N for signal N */
  int signal;      /* 0 if it exited */
  bool oom_killed; /* the kernel's OOM killer killed a process of the sandbox */
  bool timed_out;  /* --timeout passed: everything was killed */
  bool cpu_time_exceeded; /* ended by SIGXCPU or SIGKILL after reaching RLIMIT_CPU */
  bool pids_limit_hit;    /* the cgroup refused a fork or thread at --pids */
  bool fsize_reached;     /* SIGXFSZ, or a workdir file --fsize long after the run */
  bool tmp_filled;        /* /tmp or /dev/shm (--tmp-size) was full at the end */
  bool nofile_reported;   /* the program's stderr said EMFILE ("Too many open files") */
  double wall_ms;
  double cpu_user_ms, cpu_sys_ms;
  const char *cpu_scope; /* "cgroup" (every process) or "waited" (the program and what it reaped) */
  uint64_t peak_memory_bytes;
  const char *peak_memory_scope; /* "cgroup" or "largest-process" */
  struct output_stream *out, *err;
  bool include_output; /* stdout/stderr text in the JSON (--result -) */
  const struct workdir_snapshot *before, *after;
  const char *workdir; /* the host path, or NULL if it was temporary (gone) */
  const struct sandbox_limits *limits;
  const struct sandbox_policy *policy;
  int landlock_abi;
  const struct exec_guard *guard; /* --no-subprocess: what it refused; NULL without */
  const struct sandbox_report *report; /* the program's own report (value, exception, figures), or NULL */
  const char *session; /* a session's cell: its name */
  bool session_kept;   /* the cell's state is the session's (else rolled back) */
};

char *sandbox_result_json (const struct sandbox_result *r, size_t *len);

#endif
