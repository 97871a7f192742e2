#include "build-config.h"
#include "oci/vocab.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/resource.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

const struct sbx_ns_info sbx_namespaces[SBX_NS_COUNT] = {
  [SBX_NS_USER] = { "user", "user", CLONE_NEWUSER },
  [SBX_NS_PID] = { "pid", "pid", CLONE_NEWPID },
  [SBX_NS_NET] = { "network", "net", CLONE_NEWNET },
  [SBX_NS_MNT] = { "mount", "mnt", CLONE_NEWNS },
  [SBX_NS_IPC] = { "ipc", "ipc", CLONE_NEWIPC },
  [SBX_NS_UTS] = { "uts", "uts", CLONE_NEWUTS },
  [SBX_NS_CGROUP] = { "cgroup", "cgroup", CLONE_NEWCGROUP },
  [SBX_NS_TIME] = { "time", "time", CLONE_NEWTIME },
};

int
sbx_ns_from_oci_name (const char *name)
{
  for (int i = 0; i < SBX_NS_COUNT; i++)
    if (strcmp (sbx_namespaces[i].oci_name, name) == 0)
      return i;
  return -1;
}

/* ------------------------------------------------------------------ signals */

static const struct
{
  const char *name;
  int sig;
} signal_table[] = {
  { "HUP", SIGHUP },       { "INT", SIGINT },       { "QUIT", SIGQUIT },     { "ILL", SIGILL },
  { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },     { "IOT", SIGIOT },       { "BUS", SIGBUS },
  { "FPE", SIGFPE },       { "KILL", SIGKILL },     { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
  { "USR2", SIGUSR2 },     { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },     { "TERM", SIGTERM },
  { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },     { "CLD", SIGCHLD },      { "CONT", SIGCONT },
  { "STOP", SIGSTOP },     { "TSTP", SIGTSTP },     { "TTIN", SIGTTIN },     { "TTOU", SIGTTOU },
  { "URG", SIGURG },       { "XCPU", SIGXCPU },     { "XFSZ", SIGXFSZ },     { "VTALRM", SIGVTALRM },
  { "PROF", SIGPROF },     { "WINCH", SIGWINCH },   { "IO", SIGIO },         { "POLL", SIGPOLL },
  { "PWR", SIGPWR },       { "SYS", SIGSYS },
};

static int
parse_small_int (const char *s, int max)
{
  char *end;
  long v;
  if (!*s || !isdigit ((unsigned char) *s))
    return -1;
  errno = 0;
  v = strtol (s, &end, 10);
  if (errno || *end || v < 0 || v > max)
    return -1;
  return (int) v;
}

int
sbx_signal_parse (const char *s)
{
  int n;
  if (!s || !*s)
    return -1;
  n = parse_small_int (s, SBX_SIGRTMAX);
  if (n >= 0)
    return n >= 1 ? n : -1;
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < sizeof signal_table / sizeof signal_table[0]; i++)
    if (strcasecmp (signal_table[i].name, s) == 0)
      return signal_table[i].sig;
  if (strncasecmp (s, "RTMIN", 5) == 0 || strncasecmp (s, "RTMAX", 5) == 0)
    {
      bool min = strncasecmp (s, "RTMIN", 5) == 0;
      int base = min ? SBX_SIGRTMIN : SBX_SIGRTMAX, off = 0, sig;
      const char *rest = s + 5;
      if (*rest)
        {
          if ((min && *rest != '+') || (!min && *rest != '-'))
            return -1;
          off = parse_small_int (rest + 1, SBX_SIGRTMAX - SBX_SIGRTMIN);
          if (off < 0)
            return -1;
        }
      sig = min ? base + off : base - off;
      return sig >= SBX_SIGRTMIN && sig <= SBX_SIGRTMAX ? sig : -1;
    }
  return -1;
}

const char *
sbx_signal_name (int sig)
{
  for (size_t i = 0; i < sizeof signal_table / sizeof signal_table[0]; i++)
    if (signal_table[i].sig == sig)
      return signal_table[i].name;
  return NULL;
}

/* ------------------------------------------------------------------ rlimits */

const struct sbx_rlimit_info sbx_rlimits[] = {
  { "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};
const size_t sbx_rlimits_count = sizeof sbx_rlimits / sizeof sbx_rlimits[0];

int
sbx_rlimit_from_name (const char *name)
{
  for (size_t i = 0; i < sbx_rlimits_count; i++)
    if (strcmp (sbx_rlimits[i].name, name) == 0)
      return sbx_rlimits[i].resource;
  return -1;
}

/* -------------------------------------------------------------------- hooks */

const char *const sbx_hook_names[SBX_HOOK_COUNT] = {
  [SBX_HOOK_PRESTART] = "prestart",
  [SBX_HOOK_CREATE_RUNTIME] = "createRuntime",
  [SBX_HOOK_CREATE_CONTAINER] = "createContainer",
  [SBX_HOOK_START_CONTAINER] = "startContainer",
  [SBX_HOOK_POSTSTART] = "poststart",
  [SBX_HOOK_POSTSTOP] = "poststop",
};

unsigned long
sbx_propagation_from_name (const char *name)
{
  if (!name)
    return 0;
  /* The root's propagation is always set recursively (MS_REC), so "rprivate" (what
     crun's and podman's configs write) means what "private" does; runc and crun
     take both spellings. */
  if (name[0] == 'r' && name[1] != '\0')
    name++;
  if (strcmp (name, "shared") == 0)
    return MS_SHARED;
  if (strcmp (name, "slave") == 0)
    return MS_SLAVE;
  if (strcmp (name, "private") == 0)
    return MS_PRIVATE;
  if (strcmp (name, "unbindable") == 0)
    return MS_UNBINDABLE;
  return 0;
}

/* ------------------------------------------------------------ memory policy */

/* The kernel's MPOL_* numbers (uapi/linux/mempolicy.h), which numaif.h has only in
 * libnuma's headers: written out. */
const char *const sbx_mempolicy_modes[] = {
  "MPOL_DEFAULT",   "MPOL_PREFERRED",      "MPOL_BIND", "MPOL_INTERLEAVE",
  "MPOL_LOCAL",     "MPOL_PREFERRED_MANY", "MPOL_WEIGHTED_INTERLEAVE",
};
const size_t sbx_mempolicy_modes_count = sizeof sbx_mempolicy_modes / sizeof sbx_mempolicy_modes[0];

const struct sbx_mempolicy_flag sbx_mempolicy_flags[] = {
  { "MPOL_F_NUMA_BALANCING", 1u << 13 },
  { "MPOL_F_RELATIVE_NODES", 1u << 14 },
  { "MPOL_F_STATIC_NODES", 1u << 15 },
};
const size_t sbx_mempolicy_flags_count = sizeof sbx_mempolicy_flags / sizeof sbx_mempolicy_flags[0];

/* ------------------------------------------------------------------ seccomp */

const char *const sbx_seccomp_actions[SCMP_A_COUNT] = {
  [SCMP_A_KILL] = "SCMP_ACT_KILL",       [SCMP_A_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
  [SCMP_A_KILL_THREAD] = "SCMP_ACT_KILL_THREAD", [SCMP_A_TRAP] = "SCMP_ACT_TRAP",
  [SCMP_A_ERRNO] = "SCMP_ACT_ERRNO",     [SCMP_A_TRACE] = "SCMP_ACT_TRACE",
  [SCMP_A_ALLOW] = "SCMP_ACT_ALLOW",     [SCMP_A_LOG] = "SCMP_ACT_LOG",
  [SCMP_A_NOTIFY] = "SCMP_ACT_NOTIFY",
};

const char *const sbx_seccomp_ops[SCMP_OP_COUNT] = {
  [SCMP_OP_NE] = "SCMP_CMP_NE", [SCMP_OP_LT] = "SCMP_CMP_LT", [SCMP_OP_LE] = "SCMP_CMP_LE",
  [SCMP_OP_EQ] = "SCMP_CMP_EQ", [SCMP_OP_GE] = "SCMP_CMP_GE", [SCMP_OP_GT] = "SCMP_CMP_GT",
  [SCMP_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

const char *const sbx_seccomp_archs[] = {
  "SCMP_ARCH_X86",       "SCMP_ARCH_X86_64",    "SCMP_ARCH_X32",       "SCMP_ARCH_ARM",
  "SCMP_ARCH_AARCH64",   "SCMP_ARCH_MIPS",      "SCMP_ARCH_MIPS64",    "SCMP_ARCH_MIPS64N32",
  "SCMP_ARCH_MIPSEL",    "SCMP_ARCH_MIPSEL64",  "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
  "SCMP_ARCH_PPC64",     "SCMP_ARCH_PPC64LE",   "SCMP_ARCH_S390",      "SCMP_ARCH_S390X",
  "SCMP_ARCH_PARISC",    "SCMP_ARCH_PARISC64",  "SCMP_ARCH_RISCV64",   "SCMP_ARCH_LOONGARCH64",
  "SCMP_ARCH_M68K",      "SCMP_ARCH_SH",        "SCMP_ARCH_SHEB",
};
const size_t sbx_seccomp_archs_count = sizeof sbx_seccomp_archs / sizeof sbx_seccomp_archs[0];

const char *const sbx_seccomp_flags[] = {
  "SECCOMP_FILTER_FLAG_TSYNC",
  "SECCOMP_FILTER_FLAG_LOG",
  "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};
const size_t sbx_seccomp_flags_count = sizeof sbx_seccomp_flags / sizeof sbx_seccomp_flags[0];

int
sbx_name_index (const char *const *table, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (table[i] && table[i][0] == name[0] && strcmp (table[i], name) == 0)
      return (int) i;
  return -1;
}
