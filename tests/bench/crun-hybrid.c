/* crun-hybrid CRUN ARGS...: runs crun on a hybrid cgroup host, which crun 1.8 refuses
 * ("cgroups in hybrid mode not supported") when /sys/fs/cgroup/unified lists any
 * controller. As ../shared/clients/CONTRACT.md §5.1 describes, it makes a private mount
 * namespace, binds /dev/null over unified/cgroup.controllers there (the host's mount
 * table is untouched) and execs crun, which then uses the v1 controllers. In C rather
 * than the shell + unshare + mount of the contract, so that crun's rows carry ~0.1 ms
 * of wrapper instead of several ms of process starts. On other hosts it only execs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

#define CONTROLLERS "/sys/fs/cgroup/unified/cgroup.controllers"

static int hybrid(void)
{
	char c;
	int fd = open(CONTROLLERS, O_RDONLY | O_CLOEXEC);
	int n = fd < 0 ? 0 : (int)read(fd, &c, 1);
	if (fd >= 0) close(fd);
	return n == 1 && c != '\n';
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: crun-hybrid CRUN [ARGS...]\n"); return 127; }
	if (hybrid()) {
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("/dev/null", CONTROLLERS, NULL, MS_BIND, NULL) < 0) {
			perror("crun-hybrid: hiding the cgroup2 controllers");
			return 127;
		}
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
