#include "build-config.h"
#include "runtime/cgroup/cgroup_devices.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/cgroup.h"

/* config-linux.md "Default Devices", plus the console and the pty devices. */
static const struct oci_device_rule default_rules[] = {
  { true, 'c', 1, 3, "rwm" },  { true, 'c', 1, 5, "rwm" },  { true, 'c', 1, 7, "rwm" }, { true, 'c', 1, 8, "rwm" },
  { true, 'c', 1, 9, "rwm" },  { true, 'c', 5, 0, "rwm" },  { true, 'c', 5, 1, "rwm" }, { true, 'c', 5, 2, "rwm" },
  { true, 'c', 136, -1, "rwm" },
};

/* The full ordered list; the caller frees it. */
static struct oci_device_rule *
build_rules (const struct oci_resources *r, const struct cgroup_device_defaults *d, size_t *n)
{
  size_t cap = (r && r->has_devices ? r->n_devices : 1) + ARRAY_SIZE (default_rules) + (d ? d->n : 0);
  struct oci_device_rule *rules = xmalloc0 (cap * sizeof *rules);
  size_t k = 0;
  if (r && r->has_devices)
    for (size_t i = 0; i < r->n_devices; i++)
      rules[k++] = r->devices[i];
  else
    rules[k++] = (struct oci_device_rule) { false, 'a', -1, -1, "rwm" };
  if (d)
    {
      for (size_t i = 0; i < ARRAY_SIZE (default_rules); i++)
        rules[k++] = default_rules[i];
      for (size_t i = 0; i < d->n; i++)
        if (d->devices[i].type != 'p')
          rules[k++] = (struct oci_device_rule) { true, d->devices[i].type == 'b' ? 'b' : 'c', d->devices[i].major,
                                                  d->devices[i].minor, "rwm" };
    }
  *n = k;
  return rules;
}

/* "c 1:3 rwm": the kernel's syntax. buf: at least 64 bytes. */
static void
rule_string (const struct oci_device_rule *rule, char *buf)
{
  size_t n = 0;
  if (rule->type == 'a')
    {
      strcpy (buf, "a");
      return;
    }
  buf[n++] = rule->type;
  buf[n++] = ' ';
  if (rule->major < 0)
    buf[n++] = '*';
  else
    n += fmt_u64 (buf + n, (uint64_t) rule->major);
  buf[n++] = ':';
  if (rule->minor < 0)
    buf[n++] = '*';
  else
    n += fmt_u64 (buf + n, (uint64_t) rule->minor);
  buf[n++] = ' ';
  for (size_t i = 0; rule->access[i] && i < 8; i++) /* "rwm" or less (validated) */
    buf[n++] = rule->access[i];
  buf[n] = '\0';
}

int
cgroup_v1_devices_apply (int dirfd, const struct oci_resources *r, const struct cgroup_device_defaults *d,
                         struct sbx_error *err)
{
  size_t n;
  _cleanup_free_ struct oci_device_rule *rules = build_rules (r, d, &n);
  /* One open of each file for all the rules: each write(2) is one rule to the
     kernel, so the fd can be reused (ten rules by default: twenty syscalls saved). */
  _cleanup_close_ int deny_fd = -1;
  _cleanup_close_ int allow_fd = -1;
  for (size_t i = 0; i < n; i++)
    {
      char buf[64];
      const char *file = rules[i].allow ? "devices.allow" : "devices.deny";
      int *fd = rules[i].allow ? &allow_fd : &deny_fd;
      rule_string (&rules[i], buf);
      if (*fd < 0 && (*fd = openat (dirfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return sbx_error_set (err, errno, "linux.resources.devices: open %s", file);
      if (write (*fd, buf, strlen (buf)) < 0)
        return sbx_error_set (err, errno, "linux.resources.devices: '%s': write to %s", buf, file);
    }
  return 0;
}

/* ---------------------------------------------------------------- eBPF */

#define INSN(c, d, s, o, i) ((struct bpf_insn) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LDX_W(dst, src, off) INSN (BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0)
#define MOV_X(dst, src) INSN (BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0)
#define MOV_K(dst, imm) INSN (BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define AND_K(dst, imm) INSN (BPF_ALU64 | BPF_AND | BPF_K, dst, 0, 0, imm)
#define RSH_K(dst, imm) INSN (BPF_ALU64 | BPF_RSH | BPF_K, dst, 0, 0, imm)
#define JNE_K(dst, imm, off) INSN (BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm)
#define JEQ_K(dst, imm, off) INSN (BPF_JMP | BPF_JEQ | BPF_K, dst, 0, off, imm)
#define EXIT() INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int
access_bits (const char *a)
{
  int bits = 0;
  for (; *a; a++)
    bits |= *a == 'r' ? BPF_DEVCG_ACC_READ : *a == 'w' ? BPF_DEVCG_ACC_WRITE : BPF_DEVCG_ACC_MKNOD;
  return bits;
}

/* Registers: r2 = device type, r3 = requested access, r4 = major, r5 = minor.
 * Rules are checked last to first (the last matching rule wins): an allow rule
 * matches when it covers every requested access, a deny rule when it covers any. */
static struct bpf_insn *
compile (const struct oci_device_rule *rules, size_t n, size_t *count)
{
  struct bpf_insn *p = xmalloc0 ((7 + n * 9 + 2) * sizeof *p);
  size_t k = 0;
  p[k++] = LDX_W (2, 1, offsetof (struct bpf_cgroup_dev_ctx, access_type));
  p[k++] = MOV_X (3, 2);
  p[k++] = RSH_K (3, 16);
  p[k++] = AND_K (2, 0xffff);
  p[k++] = LDX_W (4, 1, offsetof (struct bpf_cgroup_dev_ctx, major));
  p[k++] = LDX_W (5, 1, offsetof (struct bpf_cgroup_dev_ctx, minor));
  for (size_t idx = n; idx-- > 0;)
    {
      const struct oci_device_rule *r = &rules[idx];
      struct bpf_insn block[9];
      size_t b = 0, jumps[5], nj = 0;
      int acc = access_bits (r->access);
      if (r->type != 'a')
        {
          jumps[nj++] = b;
          block[b++] = JNE_K (2, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, 0);
        }
      if (r->major >= 0)
        {
          jumps[nj++] = b;
          block[b++] = JNE_K (4, (int32_t) r->major, 0);
        }
      if (r->minor >= 0)
        {
          jumps[nj++] = b;
          block[b++] = JNE_K (5, (int32_t) r->minor, 0);
        }
      block[b++] = MOV_X (1, 3);
      if (r->allow)
        {
          block[b++] = AND_K (1, ~acc & 0x7);
          jumps[nj++] = b;
          block[b++] = JNE_K (1, 0, 0);
        }
      else
        {
          block[b++] = AND_K (1, acc);
          jumps[nj++] = b;
          block[b++] = JEQ_K (1, 0, 0);
        }
      block[b++] = MOV_K (0, r->allow ? 1 : 0);
      block[b++] = EXIT ();
      /* every failed test skips to the next rule: the end of this block */
      for (size_t j = 0; j < nj; j++)
        block[jumps[j]].off = (int16_t) (b - jumps[j] - 1);
      memcpy (p + k, block, b * sizeof *block);
      k += b;
    }
  p[k++] = MOV_K (0, 0); /* nothing matched: deny */
  p[k++] = EXIT ();
  *count = k;
  return p;
}

static long
sys_bpf (int cmd, union bpf_attr *attr)
{
  return syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

/* Programs attached to the cgroup before ours (from an earlier create or update). */
static size_t
attached_programs (int dirfd, uint32_t *ids, size_t max)
{
  union bpf_attr q = { 0 };
  q.query.target_fd = dirfd;
  q.query.attach_type = BPF_CGROUP_DEVICE;
  q.query.prog_ids = (uint64_t) (uintptr_t) ids;
  q.query.prog_cnt = (uint32_t) max;
  if (sys_bpf (BPF_PROG_QUERY, &q) < 0)
    return 0;
  return q.query.prog_cnt;
}

int
cgroup_v2_device_filters (int dirfd)
{
  union bpf_attr q = { 0 };
  q.query.target_fd = dirfd;
  q.query.attach_type = BPF_CGROUP_DEVICE;
  if (sys_bpf (BPF_PROG_QUERY, &q) < 0)
    return -1;
  return (int) q.query.prog_cnt;
}

int
cgroup_v2_devices_apply (int dirfd, const struct oci_resources *r, const struct cgroup_device_defaults *d,
                         struct sbx_error *err)
{
  size_t n, count, n_old;
  _cleanup_free_ struct oci_device_rule *rules = build_rules (r, d, &n);
  _cleanup_free_ struct bpf_insn *prog = compile (rules, n, &count);
  char log[4096] = { 0 };
  uint32_t old[64];
  union bpf_attr load = { 0 }, attach = { 0 };
  _cleanup_close_ int fd = -1;

  n_old = attached_programs (dirfd, old, ARRAY_SIZE (old));
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = (uint64_t) (uintptr_t) prog;
  load.insn_cnt = (uint32_t) count;
  load.license = (uint64_t) (uintptr_t) "Apache";
  /* No verifier log on the first try: it costs time, and a log that does not fit
   * its buffer fails the load with ENOSPC on newer kernels even when the program is
   * fine. Only a rejected program is loaded again, for the verifier's reason. */
  fd = (int) sys_bpf (BPF_PROG_LOAD, &load);
  if (fd < 0)
    {
      int first = errno;
      load.log_buf = (uint64_t) (uintptr_t) log;
      load.log_size = sizeof log;
      load.log_level = 1;
      fd = (int) sys_bpf (BPF_PROG_LOAD, &load);
      log[sizeof log - 1] = '\0';
      return sbx_error_set (err, first, "linux.resources.devices: load the device filter (%.200s)", log);
    }
  attach.target_fd = dirfd;
  attach.attach_bpf_fd = fd;
  attach.attach_type = BPF_CGROUP_DEVICE;
  attach.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &attach) < 0)
    return sbx_error_set (err, errno, "linux.resources.devices: attach the device filter");
  /* The new filter is in force; now drop the old ones (every attached filter must allow). */
  for (size_t i = 0; i < n_old; i++)
    {
      union bpf_attr get = { 0 }, detach = { 0 };
      int oldfd;
      get.prog_id = old[i];
      oldfd = (int) sys_bpf (BPF_PROG_GET_FD_BY_ID, &get);
      if (oldfd < 0)
        continue;
      detach.target_fd = dirfd;
      detach.attach_bpf_fd = oldfd;
      detach.attach_type = BPF_CGROUP_DEVICE;
      sys_bpf (BPF_PROG_DETACH, &detach);
      close (oldfd);
    }
  return 0;
}
