/* The exec trampoline: a freestanding program of a few hundred bytes (no libc) that
 * a container init without a user namespace execs, from a sealed memfd, as its last
 * step; it execs the container's program. Why it exists: exec_trampoline.h.
 *
 *   argv: "sbx-oci-exec" SYNC_FD PATH ARG0 ARG1 ...   envp: the program's environment
 *
 * SYNC_FD (decimal, or -1) is the init's end of the sync socket, open across this
 * exec on purpose: it is marked close-on-exec here, so the runtime sees EOF exactly
 * when the program's exec succeeds, and a failed exec still reaches it as a
 * SYNC_ERROR with the errno, as from the init itself (sync.h). Built with
 * -nostdlib -static by the Makefile and embedded by runtime/container/embed_elf.sh; nothing here
 * may call into a C library. */
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/error.h"
#include "runtime/linux/sync.h"

#if defined(__x86_64__)
#define NR_WRITE 1
#define NR_CLOSE 3
#define NR_EXECVE 59
#define NR_FCNTL 72
#define NR_EXIT_GROUP 231
static long
sys3 (long n, long a, long b, long c)
{
  long r;
  __asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
__asm__ (".text\n.globl _start\n_start:\n\txor %rbp, %rbp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n"
         "\tcall trampoline_main\n\thlt\n");
#elif defined(__aarch64__)
#define NR_WRITE 64
#define NR_CLOSE 57
#define NR_EXECVE 221
#define NR_FCNTL 25
#define NR_EXIT_GROUP 94
static long
sys3 (long n, long a, long b, long c)
{
  register long x8 __asm__ ("x8") = n;
  register long x0 __asm__ ("x0") = a;
  register long x1 __asm__ ("x1") = b;
  register long x2 __asm__ ("x2") = c;
  __asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
  return x0;
}
__asm__ (".text\n.globl _start\n_start:\n\tmov x0, sp\n\tbl trampoline_main\n\tbrk #0\n");
#else
#error "exec trampoline: no syscall glue for this architecture (configure leaves it out)"
#endif

#define F_SETFD_ 2
#define FD_CLOEXEC_ 1
#define ENOENT_ 2

static struct
{
  struct sync_header h;
  char msg[SYNC_MAX_PAYLOAD];
} report;

static size_t
append (size_t at, const char *s)
{
  while (*s && at < sizeof report.msg)
    report.msg[at++] = *s++;
  return at;
}

static size_t
append_num (size_t at, long v)
{
  char d[24];
  int n = 0;
  if (v < 0)
    {
      at = append (at, "-");
      v = -v;
    }
  do
    d[n++] = (char) ('0' + v % 10);
  while ((v /= 10) && n < (int) sizeof d);
  while (n > 0 && at < sizeof report.msg)
    report.msg[at++] = d[--n];
  return at;
}

static long
parse_fd (const char *s)
{
  long v = 0;
  if (s[0] == '-' && s[1] == '1' && !s[2])
    return -1;
  if (!*s)
    return -1;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9' || v > 65535)
        return -1;
      v = v * 10 + (*s - '0');
    }
  return v;
}

__attribute__ ((noreturn, used)) void
trampoline_main (long *sp)
{
  long argc = sp[0];
  char **argv = (char **) (sp + 1);
  char **envp = argv + argc + 1;
  long fd, r;
  int hint;
  size_t n;
  if (argc < 4)
    {
      sys3 (NR_WRITE, 2, (long) "sbx-oci-exec: not a container program\n", 38);
      sys3 (NR_EXIT_GROUP, SBX_EXIT_NOT_EXECUTABLE, 0, 0);
    }
  fd = parse_fd (argv[1]);
  /* Close-on-exec now: the program must not inherit the runtime's socket. If a
     seccomp profile refuses fcntl, close it instead (a failed exec then reports on
     stderr only). */
  if (fd >= 0 && sys3 (NR_FCNTL, fd, F_SETFD_, FD_CLOEXEC_) < 0)
    {
      sys3 (NR_CLOSE, fd, 0, 0);
      fd = -1;
    }
  r = sys3 (NR_EXECVE, (long) argv[2], (long) (argv + 3), (long) envp);
  hint = r == -ENOENT_ ? SBX_EXIT_NOT_FOUND : SBX_EXIT_NOT_EXECUTABLE;
  if (fd >= 0)
    {
      n = append (append (0, "exec "), argv[2]);
      report.h = (struct sync_header) { .type = SYNC_ERROR, .errnum = (int32_t) -r, .exit_hint = hint,
                                        .len = (uint32_t) n };
      sys3 (NR_WRITE, fd, (long) &report, (long) (sizeof report.h + n));
    }
  else
    {
      n = append (append (append (0, "sbx-oci: exec "), argv[2]), ": errno ");
      n = append (append_num (n, -r), "\n");
      sys3 (NR_WRITE, 2, (long) report.msg, (long) n);
    }
  sys3 (NR_EXIT_GROUP, hint, 0, 0);
  for (;;)
    ;
}
