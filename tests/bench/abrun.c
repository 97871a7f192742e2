/* abrun N NAME OUT -- CMD_A... -- CMD_B...: runs A and B alternately, N times each,
 * and appends "NAME  median_A  median_B  B-A  q1_A q3_A q1_B q3_B  paired lo hi" (ms)
 * to OUT.
 *
 * Why next to hyperfine: hyperfine runs all of A, then all of B, so whatever else the
 * machine does shifts one block against the other. On our shared 2-core machines that
 * moved "what memory+pids limits cost" from 0.5 ms to 1.6 ms between runs. Alternating
 * puts A and B under the same load; the difference of medians is then the cost of
 * the feature, which is what a delta row means.
 *
 * "paired" is the median of the N differences B_k - A_k of runs made next to each
 * other, with its 95% confidence interval [lo, hi] (the order statistics of the
 * differences at N/2 -+ 0.98 sqrt(N), distribution-free): slow drift of the load, which
 * still widens the two medians' quartiles, cancels within a pair. Pairs run AB, BA,
 * AB, ...: a run's asynchronous teardown (a network namespace is freed by a kernel
 * worker after the process is gone) lands on the run after it, which would otherwise
 * always be the other command.
 *
 * "{id}" in an argument becomes a fresh container id per run; the commands' stdout
 * goes to /dev/null; a command that fails stops the measurement (exit 1). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double
now_ms (void)
{
	struct timespec t;
	clock_gettime (CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
cmp (const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

/* One run of cmd, "{id}" replaced by a fresh id; the wall time in ms, or -1. */
static double
run_once (char **cmd, int k)
{
	char *argv[128], id[48], *owned[128];
	int n = 0, n_owned = 0, status;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	double t;
	snprintf (id, sizeof id, "ab%d-%d", (int) getpid (), k);
	for (; cmd[n] && n < 127; n++) {
		char *p = strstr (cmd[n], "{id}");
		argv[n] = cmd[n];
		if (p) {
			size_t len = strlen (cmd[n]) + strlen (id) + 1;
			char *s = malloc (len);
			if (!s)
				return -1;
			snprintf (s, len, "%.*s%s%s", (int) (p - cmd[n]), cmd[n], id, p + 4);
			argv[n] = owned[n_owned++] = s;
		}
	}
	argv[n] = NULL;
	posix_spawn_file_actions_init (&fa);
	posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
	t = now_ms ();
	if (posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ) != 0 || waitpid (pid, &status, 0) < 0)
		status = -1;
	t = now_ms () - t;
	posix_spawn_file_actions_destroy (&fa);
	while (n_owned)
		free (owned[--n_owned]);
	if (status != 0) {
		fprintf (stderr, "abrun: %s failed (status %d)\n", argv[0], status);
		return -1;
	}
	return t;
}

int
main (int argc, char **argv)
{
	int n, i = 4, half, lo, hi;
	char **a, **b;
	double *va, *vb, *vd;
	FILE *out;
	if (argc < 8 || strcmp (argv[4], "--") != 0) {
		fprintf (stderr, "usage: abrun N NAME OUT -- CMD_A... -- CMD_B...\n");
		return 2;
	}
	n = atoi (argv[1]);
	a = argv + 5;
	for (i = 5; i < argc && strcmp (argv[i], "--") != 0; i++)
		;
	if (i >= argc - 1 || n < 4) {
		fprintf (stderr, "abrun: need N >= 4 and two commands\n");
		return 2;
	}
	argv[i] = NULL;
	b = argv + i + 1;
	va = calloc (n, sizeof *va);
	vb = calloc (n, sizeof *vb);
	vd = calloc (n, sizeof *vd);
	if (!va || !vb || !vd)
		return 1;
	for (int k = 0; k < n; k++) {
		if (k % 2 == 0) {
			va[k] = run_once (a, 2 * k);
			vb[k] = va[k] < 0 ? -1 : run_once (b, 2 * k + 1);
		} else {
			vb[k] = run_once (b, 2 * k);
			va[k] = vb[k] < 0 ? -1 : run_once (a, 2 * k + 1);
		}
		if (va[k] < 0 || vb[k] < 0)
			return 1;
		vd[k] = vb[k] - va[k];
	}
	qsort (va, n, sizeof *va, cmp);
	qsort (vb, n, sizeof *vb, cmp);
	qsort (vd, n, sizeof *vd, cmp);
	/* ranks of the median's 95% interval: n/2 -+ 1.96 sqrt(n)/2, kept inside [0, n-1] */
	half = (int) ceil (0.98 * sqrt ((double) n));
	lo = n / 2 - half < 0 ? 0 : n / 2 - half;
	hi = n / 2 + half > n - 1 ? n - 1 : n / 2 + half;
	out = fopen (argv[3], "a");
	if (!out)
		return 1;
	fprintf (out, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", argv[2], va[n / 2],
	         vb[n / 2], vb[n / 2] - va[n / 2], va[n / 4], va[3 * n / 4], vb[n / 4], vb[3 * n / 4], vd[n / 2], vd[lo],
	         vd[hi]);
	fclose (out);
	printf ("%-40s A %.2f ms  B %.2f ms  B-A %+.2f ms  paired %+.2f [%+.2f, %+.2f]\n", argv[2], va[n / 2], vb[n / 2],
	        vb[n / 2] - va[n / 2], vd[n / 2], vd[lo], vd[hi]);
	return 0;
}
