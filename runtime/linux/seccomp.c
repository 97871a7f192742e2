#include "build-config.h"
#include "runtime/linux/seccomp.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/sha256.h"
#include "runtime/base/util.h"
#include "runtime/linux/fs.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* Indexed like sbx_seccomp_archs (oci/vocab.c). */
static const uint32_t arch_tokens[] = {
  SCMP_ARCH_X86,     SCMP_ARCH_X86_64,   SCMP_ARCH_X32,         SCMP_ARCH_ARM,     SCMP_ARCH_AARCH64,
  SCMP_ARCH_MIPS,    SCMP_ARCH_MIPS64,   SCMP_ARCH_MIPS64N32,   SCMP_ARCH_MIPSEL,  SCMP_ARCH_MIPSEL64,
  SCMP_ARCH_MIPSEL64N32, SCMP_ARCH_PPC,  SCMP_ARCH_PPC64,       SCMP_ARCH_PPC64LE, SCMP_ARCH_S390,
  SCMP_ARCH_S390X,   SCMP_ARCH_PARISC,   SCMP_ARCH_PARISC64,    SCMP_ARCH_RISCV64, 0 /* LOONGARCH64 */,
  0 /* M68K */,      0 /* SH */,         0 /* SHEB */,
};

/* Indexed like sbx_seccomp_flags. */
static const unsigned int flag_values[] = {
  SECCOMP_FILTER_FLAG_TSYNC,
  SECCOMP_FILTER_FLAG_LOG,
  SECCOMP_FILTER_FLAG_SPEC_ALLOW,
  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
};

static const enum scmp_compare op_values[SCMP_OP_COUNT] = {
  [SCMP_OP_NE] = SCMP_CMP_NE, [SCMP_OP_LT] = SCMP_CMP_LT, [SCMP_OP_LE] = SCMP_CMP_LE, [SCMP_OP_EQ] = SCMP_CMP_EQ,
  [SCMP_OP_GE] = SCMP_CMP_GE, [SCMP_OP_GT] = SCMP_CMP_GT, [SCMP_OP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

static uint32_t
action_value (enum sbx_seccomp_action a, bool has_errno, uint32_t errno_ret)
{
  uint32_t e = has_errno ? errno_ret : EPERM;
  switch (a)
    {
    case SCMP_A_KILL:
    case SCMP_A_KILL_THREAD:
      return SCMP_ACT_KILL_THREAD;
    case SCMP_A_KILL_PROCESS:
      return SCMP_ACT_KILL_PROCESS;
    case SCMP_A_TRAP:
      return SCMP_ACT_TRAP;
    case SCMP_A_ERRNO:
      return SCMP_ACT_ERRNO (e);
    case SCMP_A_TRACE:
      return SCMP_ACT_TRACE (e);
    case SCMP_A_LOG:
      return SCMP_ACT_LOG;
    case SCMP_A_NOTIFY:
      return SCMP_ACT_NOTIFY;
    case SCMP_A_ALLOW:
    default:
      return SCMP_ACT_ALLOW;
    }
}

static bool
denies (enum sbx_seccomp_action a)
{
  return a != SCMP_A_ALLOW && a != SCMP_A_LOG;
}

/* Arguments with distinct indexes form one rule (all must match, libseccomp's AND);
 * several conditions on the same index are alternatives: one rule each (runc does
 * the same: an argument cannot equal two values at once). */
static int
add_rule (scmp_filter_ctx ctx, uint32_t action, int nr, const struct oci_seccomp_rule *r)
{
  struct scmp_arg_cmp cmp[6];
  bool repeated = false;
  for (size_t i = 0; i < r->n_args; i++)
    {
      cmp[i] = (struct scmp_arg_cmp) { .arg = r->args[i].index, .op = op_values[r->args[i].op],
                                       .datum_a = r->args[i].value, .datum_b = r->args[i].value_two };
      for (size_t j = 0; j < i; j++)
        repeated |= r->args[j].index == r->args[i].index;
    }
  if (!repeated)
    return seccomp_rule_add_array (ctx, action, nr, (unsigned) r->n_args, cmp);
  for (size_t i = 0; i < r->n_args; i++)
    {
      int rc = seccomp_rule_add_array (ctx, action, nr, 1, &cmp[i]);
      if (rc < 0)
        return rc;
    }
  return 0;
}

static int
compile_rules (const struct oci_seccomp *s, struct sbx_log *log, scmp_filter_ctx *out, int *max_nr, struct sbx_error *err)
{
  uint32_t def = action_value (s->default_action, s->has_default_errno_ret, s->default_errno_ret);
  scmp_filter_ctx ctx;
  if (s->default_action == SCMP_A_NOTIFY)
    return sbx_error_set (err, 0, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action");
  ctx = seccomp_init (def);
  if (!ctx)
    return sbx_error_set (err, 0, "linux.seccomp: seccomp_init failed");
  /* We load the filter ourselves; libseccomp must not set no_new_privs for us. */
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  /* A binary tree over the syscall numbers instead of a linear list: the kernel
     emulates the filter once per syscall number when it loads it (to cache the
     constant "allow" answers), so a long allow-list costs at every load, not only
     at every syscall (libseccomp >= 2.5; older ones refuse and stay linear). */
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  *max_nr = -1;
  for (size_t i = 0; i < s->n_archs; i++)
    {
      uint32_t tok = arch_tokens[s->archs[i]];
      int rc;
      if (!tok)
        {
          seccomp_release (ctx);
          return sbx_error_set (err, 0, "linux.seccomp.architectures[%zu]: %s is not supported by libseccomp %u.%u",
                                i, sbx_seccomp_archs[s->archs[i]], seccomp_version ()->major, seccomp_version ()->minor);
        }
      rc = seccomp_arch_add (ctx, tok);
      if (rc < 0 && rc != -EEXIST)
        {
          seccomp_release (ctx);
          return sbx_error_set (err, -rc, "linux.seccomp.architectures[%zu]: %s", i, sbx_seccomp_archs[s->archs[i]]);
        }
    }
  for (size_t i = 0; i < s->n_rules; i++)
    {
      const struct oci_seccomp_rule *r = &s->rules[i];
      uint32_t action = action_value (r->action, r->has_errno_ret, r->errno_ret);
      for (size_t j = 0; j < r->n_names; j++)
        {
          int nr = seccomp_syscall_resolve_name (r->names[j]);
          int rc;
          if (nr == __NR_SCMP_ERROR)
            {
              if (denies (r->action) && !denies (s->default_action))
                {
                  seccomp_release (ctx);
                  return sbx_error_set (err, 0, "linux.seccomp.syscalls[%zu].names[%zu]: unknown syscall '%s' in a "
                                                "rule that denies (refusing to fail open)", i, j, r->names[j]);
                }
              sbx_log_write (log, SBX_LOG_WARNING, "linux.seccomp.syscalls[%zu]: unknown syscall '%s' skipped", i,
                             r->names[j]);
              continue;
            }
          if (nr > *max_nr)
            *max_nr = nr;
          if (action == def)
            continue; /* libseccomp refuses rules that repeat the default */
          rc = add_rule (ctx, action, nr, r);
          if (rc < 0)
            {
              seccomp_release (ctx);
              return sbx_error_set (err, -rc, "linux.seccomp.syscalls[%zu]: rule for %s", i, r->names[j]);
            }
        }
    }
  *out = ctx;
  return 0;
}

/* The ENOSYS stub checks the native architecture only (x86_64 here); elsewhere the
 * filter runs without it. */
#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define NATIVE_AUDIT_ARCH 0
#endif

/* The stub before libseccomp's program: native syscalls above max_nr -> ENOSYS. */
static size_t
enosys_stub (struct sock_filter *p, int max_nr)
{
  size_t k = 0;
  p[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch));
  p[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 0, 4);
  p[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr));
  /* x32 syscall numbers carry bit 30: leave them to libseccomp's program */
  p[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 2, 0);
  p[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, (uint32_t) max_nr, 0, 1);
  p[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
  return k;
}

static int
export_program (scmp_filter_ctx ctx, const struct oci_seccomp *s, int max_nr, struct seccomp_program *out,
                struct sbx_error *err)
{
  _cleanup_close_ int fd = (int) syscall (SYS_memfd_create, "seccomp", MFD_CLOEXEC);
  struct stat st;
  size_t n, stub = 0;
  bool want_stub = NATIVE_AUDIT_ARCH != 0 && denies (s->default_action) && max_nr >= 0;
  if (fd < 0)
    return sbx_error_set (err, errno, "memfd_create");
  if (seccomp_export_bpf (ctx, fd) < 0 || fstat (fd, &st) < 0)
    return sbx_error_set (err, 0, "linux.seccomp: cannot export the filter");
  n = (size_t) st.st_size / sizeof (struct sock_filter);
  out->insns = xmalloc0 ((n + 8) * sizeof (struct sock_filter));
  if (want_stub)
    stub = enosys_stub (out->insns, max_nr);
  if (pread (fd, out->insns + stub, st.st_size, 0) != st.st_size)
    return sbx_error_set (err, errno, "linux.seccomp: read the exported filter");
  out->n = n + stub;
  if (out->n > BPF_MAXINSNS)
    return sbx_error_set (err, E2BIG, "linux.seccomp: the filter has %zu instructions (kernel limit %d)", out->n,
                          BPF_MAXINSNS);
  return 0;
}

/* The cache key: the seccomp section as regenerated by yajl (canonical spacing), and
 * everything that changes what it compiles to. */
static void
cache_key (const struct oci_seccomp *s, char hex[65])
{
  const struct scmp_version *v = seccomp_version ();
  char *json = NULL;
  const char *bytes;
  size_t len = 0, start, end;
  struct sha256 h;
  unsigned char d[32];
  char extra[128];
  if (s->text && json_span (s->tree, &start, &end))
    {
      /* the section as written: no regeneration (a third of create's own work
         for a long profile); other spacing only means another cache entry */
      bytes = s->text + start;
      len = end - start;
    }
  else
    {
      yajl_gen g = gen_new (false);
      gen_tree (g, s->tree);
      bytes = json = gen_finish (g, &len);
      yajl_gen_free (g);
    }
  snprintf (extra, sizeof extra, "|libseccomp %u.%u.%u|sbx-oci %s|enosys-prefix 1|tree|header 2", v->major, v->minor,
            v->micro, PACKAGE_VERSION);
  sha256_init (&h);
  sha256_update (&h, bytes ? bytes : "", len);
  sha256_update (&h, extra, strlen (extra));
  sha256_final (&h, d);
  free (json);
  for (int i = 0; i < 32; i++)
    {
      hex[2 * i] = "0123456789abcdef"[d[i] >> 4];
      hex[2 * i + 1] = "0123456789abcdef"[d[i] & 15];
    }
  hex[64] = '\0';
}

/* A cache entry: one header record, then the program. The header keeps what the
 * rules say beyond the program (a listener is wanted; execveat is allowed outright,
 * for the exec trampoline), so that a hit needs no rules (json_parse_config defers
 * them; parsing the python profile's rules is ~0.6M instructions). Format 1 had no
 * execveat bit: its entries are recompiled, not misread. */
#define CACHE_MAGIC_CODE 0xffff
#define CACHE_MAGIC_JT 'S'
#define CACHE_FORMAT 2
#define CACHE_NOTIFY 1u
#define CACHE_EXECVEAT 2u

static bool
cache_read (const char *dir, const char *key, struct seccomp_program *out)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s.bpf", dir, key);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  const off_t rec = sizeof (struct sock_filter);
  struct sock_filter *buf;
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || st.st_uid != geteuid () || st.st_size < 2 * rec || st.st_size % rec
      || st.st_size > (BPF_MAXINSNS + 1) * rec)
    return false;
  buf = xmalloc0 (st.st_size);
  if (read (fd, buf, st.st_size) != st.st_size || buf[0].code != CACHE_MAGIC_CODE || buf[0].jt != CACHE_MAGIC_JT
      || buf[0].jf != CACHE_FORMAT)
    {
      free (buf);
      return false;
    }
  out->notify = buf[0].k & CACHE_NOTIFY;
  out->allows_execveat = buf[0].k & CACHE_EXECVEAT;
  out->n = (size_t) (st.st_size / rec) - 1;
  memmove (buf, buf + 1, out->n * sizeof *buf);
  out->insns = buf;
  return true;
}

static void
cache_write (const char *dir, const char *key, const struct seccomp_program *p)
{
  _cleanup_close_ int dfd = -1;
  _cleanup_free_ char *name = xasprintf ("%s.bpf", key);
  _cleanup_free_ struct sock_filter *buf = xmalloc0 ((p->n + 1) * sizeof *buf);
  struct sbx_error e = { 0 };
  buf[0] = (struct sock_filter) { .code = CACHE_MAGIC_CODE, .jt = CACHE_MAGIC_JT, .jf = CACHE_FORMAT,
                                  .k = (p->notify ? CACHE_NOTIFY : 0) | (p->allows_execveat ? CACHE_EXECVEAT : 0) };
  memcpy (buf + 1, p->insns, p->n * sizeof *buf);
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return;
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dfd >= 0)
    fs_write_atomic (dfd, name, (const char *) buf, (p->n + 1) * sizeof *buf, 0600, &e);
  sbx_error_clear (&e); /* a cache that cannot be written is only slower */
}

int
sbx_seccomp_prepare (struct oci_seccomp *s, const char *cache_dir, bool compile, struct sbx_log *log,
                     struct seccomp_program *out, struct sbx_error *err)
{
  scmp_filter_ctx ctx = NULL;
  char key[65];
  int max_nr = -1, ret;
  if (out->insns)
    return 0; /* an earlier call took it from the cache */
  memset (out, 0, sizeof *out);
  for (size_t i = 0; i < sbx_seccomp_flags_count; i++)
    if (s->flags & (1u << i))
      out->flags |= flag_values[i];
  cache_key (s, key);
  /* A hit: these bytes were parsed, checked and compiled before; their rules are
     not needed (unknown-name warnings were given then). */
  if (!(cache_dir && cache_read (cache_dir, key, out)))
    {
      if (oci_seccomp_load_rules (s, err) < 0)
        return -1;
      out->notify = s->uses_notify;
      out->allows_execveat = oci_seccomp_allows_unconditionally (s, "execveat");
      if (!compile)
        return 0;
      if (compile_rules (s, log, &ctx, &max_nr, err) < 0)
        return -1;
      ret = export_program (ctx, s, max_nr, out, err);
      seccomp_release (ctx);
      if (ret < 0)
        {
          sbx_seccomp_free (out);
          return -1;
        }
      if (cache_dir)
        cache_write (cache_dir, key, out);
    }
  if (out->notify)
    out->flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  return 0;
}

void
sbx_seccomp_free (struct seccomp_program *p)
{
  free (p->insns);
  p->insns = NULL;
  p->n = 0;
}

int
sbx_seccomp_load (const struct seccomp_program *p, int *notify_fd, struct sbx_error *err)
{
  struct sock_fprog prog = { .len = (unsigned short) p->n, .filter = p->insns };
  long r = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, p->flags, &prog);
  if (r < 0)
    return sbx_error_set (err, errno, "linux.seccomp: load the filter");
  if (notify_fd)
    *notify_fd = p->notify ? (int) r : -1;
  return 0;
}

int
sbx_seccomp_send_notify (int sock, int notify_fd, pid_t host_pid, const char *metadata, const struct sbx_state *state,
                        struct sbx_error *err)
{
  /* config-linux.md "The Container Process State": JSON, the fd with SCM_RIGHTS in
   * the first (here: only) message, then the connection is closed. */
  yajl_gen g = gen_new (false);
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  static const char *const fds[] = { "seccompFd" };
  char cbuf[CMSG_SPACE (sizeof (int))] = { 0 };
  struct iovec iov;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *c;
  GEN (yajl_gen_map_open (g));
  GEN (gen_key_string (g, "ociVersion", SBX_OCI_VERSION));
  GEN (gen_string (g, "fds"));
  GEN (gen_string_array (g, fds, 1));
  GEN (gen_key_int (g, "pid", host_pid));
  if (metadata)
    GEN (gen_key_string (g, "metadata", metadata));
  GEN (gen_string (g, "state"));
  GEN (yajl_gen_map_open (g));
  if (oci_state_gen_fields (g, state, "creating") < 0)
    goto gen_fail;
  GEN (yajl_gen_map_close (g));
  GEN (yajl_gen_map_close (g));
  json = gen_finish (g, &len);
gen_fail:
  yajl_gen_free (g);
  if (!json)
    return sbx_error_set (err, 0, "linux.seccomp: cannot encode the container process state");
  iov.iov_base = json;
  iov.iov_len = len;
  c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &notify_fd, sizeof (int));
  if (sendmsg (sock, &msg, MSG_NOSIGNAL) < 0)
    return sbx_error_set (err, errno, "linux.seccomp.listenerPath: send the listener fd");
  return 0;
}
