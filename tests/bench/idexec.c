/* idexec PROG ARGS...: replaces "{id}" in the arguments with "b<pid>" and execs PROG
 * (an absolute path). hyperfine then runs without a shell (-N) and every run still gets
 * a fresh container id. Every row of a hyperfine scenario goes through it, and its own
 * cost is measured in the same run ("idexec alone": idexec noop) for report.py to take
 * out of both sides of a ratio.
 *
 * Its stdin is an empty pipe, whatever it was given: hyperfine's default stdin is
 * /dev/null, and Debian's crun 1.8.1 fchowns stdio that is not a tty to the
 * container's root before it enters a user namespace, devices included (crun issue
 * 1845, fixed in 1.24), so a user-namespace bundle run by crun with /dev/null as
 * stdin made the host's /dev/null belong to 100000. Every row gets the same pipe.
 *
 * Freestanding (no libc, x86_64): a static glibc program spends ~0.6 ms of a VM's time
 * starting up (cpuid exits), which made idexec the largest constant in the short rows.
 * Adapted from the team's earlier benchmark (../shared/bench). */
#define MAX_ARGS 128
#define ARG_SPACE 65536

static long
sys3 (long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile ("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static unsigned long
len (const char *s)
{
	unsigned long n = 0;
	while (s[n])
		n++;
	return n;
}

static void
fail (const char *msg)
{
	sys3 (1 /* write */, 2, (long) msg, (long) len (msg));
	sys3 (60 /* exit */, 127, 0, 0);
	__builtin_unreachable ();
}

static char space[ARG_SPACE];

/* stdin becomes the read end of a pipe whose write end is closed: reads see EOF */
static void
empty_stdin (void)
{
	int fds[2];
	if (sys3 (293 /* pipe2 */, (long) fds, 0, 0) != 0)
		fail ("idexec: pipe2 failed\n");
	sys3 (3 /* close */, fds[1], 0, 0);
	if (fds[0] != 0) {
		if (sys3 (33 /* dup2 */, fds[0], 0, 0) != 0)
			fail ("idexec: dup2 failed\n");
		sys3 (3 /* close */, fds[0], 0, 0);
	}
}

/* called from _start with the initial stack: argc, argv..., NULL, envp..., NULL */
__attribute__ ((used)) static void
idexec_main (long *sp)
{
	long argc = sp[0];
	char **argv = (char **) (sp + 1), **envp = argv + argc + 1;
	char *args[MAX_ARGS + 1], id[24], digits[20];
	unsigned long used = 0;
	long pid = sys3 (39 /* getpid */, 0, 0, 0);
	int nd = 0, n = 0;
	if (argc < 2 || argc - 1 > MAX_ARGS)
		fail ("usage: idexec /ABSOLUTE/PROG [ARGS with {id}]\n");
	if (argv[1][0] != '/')
		fail ("idexec: PROG must be an absolute path\n");
	do
		digits[nd++] = (char) ('0' + pid % 10);
	while ((pid /= 10) > 0);
	id[0] = 'b';
	for (int i = 0; i < nd; i++)
		id[1 + i] = digits[nd - 1 - i];
	id[1 + nd] = '\0';
	for (long i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *out = space + used;
		unsigned long k = 0;
		for (unsigned long j = 0; a[j]; j++) {
			if (used + k + sizeof id + 1 >= ARG_SPACE)
				fail ("idexec: arguments too long\n");
			if (a[j] == '{' && a[j + 1] == 'i' && a[j + 2] == 'd' && a[j + 3] == '}') {
				for (int m = 0; id[m]; m++)
					out[k++] = id[m];
				j += 3;
			} else
				out[k++] = a[j];
		}
		out[k++] = '\0';
		used += k;
		args[n++] = out;
	}
	args[n] = 0;
	empty_stdin ();
	sys3 (59 /* execve */, (long) args[0], (long) args, (long) envp);
	fail ("idexec: execve failed\n");
}

__asm__ (".globl _start\n"
         "_start:\n"
         "\tmov %rsp, %rdi\n"
         "\tand $-16, %rsp\n"
         "\tcall idexec_main\n"
         "\thlt\n");
