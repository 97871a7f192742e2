/* idexec PROG ARGS...: replaces "{id}" in the arguments with "b<pid>" and execs PROG.
 * hyperfine then runs without a shell (-N) and every run still gets a fresh container
 * id. Every benchmarked command (floors too) goes through it, so its small exec cost
 * is the same in every row. From the team's earlier benchmark (../shared/bench). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char id[32];
	snprintf(id, sizeof id, "b%d", (int)getpid());
	if (argc < 2) { fprintf(stderr, "usage: idexec PROG [ARGS with {id}]\n"); return 127; }
	for (int i = 1; i < argc; i++) {
		char *p = strstr(argv[i], "{id}");
		if (!p) continue;
		size_t n = strlen(argv[i]) + strlen(id) + 1;
		char *s = malloc(n);
		if (!s) return 127;
		snprintf(s, n, "%.*s%s%s", (int)(p - argv[i]), argv[i], id, p + 4);
		argv[i] = s;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
