/* floorrun: the bare floor a one-shot OCI runtime is compared with. It does only what
 * isolating a program needs at minimum, and none of the bookkeeping a runtime adds
 * (cgroups, capabilities, seccomp, pivot_root, masked paths, /dev, state files):
 *   clone(mount|pid|net|ipc|uts[|user]) -> [parent writes the id maps] -> make mounts
 *   private -> bind (optionally read-only) / tmpfs / proc mounts into ROOTFS -> chroot
 *   -> chdir -> execv; the parent waits and returns the child's status.
 * Adapted from the team's earlier benchmark (../shared/bench/floorrun.c); -U added so
 * the python scenario can be compared with a floor that pays for a user namespace too.
 *
 * usage: floorrun [-U HOSTID] [-b SRC:DST[:ro]]... [-t DST]... [-P] [-w CWD] ROOTFS PROG [ARGS...]
 *   -U map container ids 0-65535 to HOSTID+ in a new user namespace, run as its root
 *   -b bind mount SRC onto ROOTFS/DST (":ro": remount read-only, nosuid, nodev)
 *   -t tmpfs onto ROOTFS/DST
 *   -P a fresh proc on ROOTFS/proc
 *   -w working directory inside the new root (default /)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXM 32
struct m { const char *src, *dst; int ro, tmpfs; };

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "floorrun: %s %s: %s\n", what, arg ? arg : "", strerror(errno));
	_exit(127);
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die("write", path);
	close(fd);
}

static void child(const char *root, struct m *ms, int n, int proc, const char *cwd, char **prog)
{
	char p[8192];
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die("make-private", "/");
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof p, "%s%s", root, ms[i].dst);
		if (ms[i].tmpfs) {
			if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0) die("tmpfs", p);
			continue;
		}
		if (mount(ms[i].src, p, NULL, MS_BIND | MS_REC, NULL) < 0) die("bind", p);
		if (ms[i].ro && mount(NULL, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
			die("remount-ro", p);
	}
	if (proc) {
		snprintf(p, sizeof p, "%s/proc", root);
		if (mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) die("proc", p);
	}
	if (chroot(root) < 0) die("chroot", root);
	if (chdir(cwd) < 0) die("chdir", cwd);
	execv(prog[0], prog);
	die("execv", prog[0]);
}

int main(int argc, char **argv)
{
	struct m ms[MAXM];
	int n = 0, proc = 0, opt;
	long hostid = -1;
	const char *cwd = "/";
	while ((opt = getopt(argc, argv, "+U:b:t:Pw:")) != -1) {
		if (n >= MAXM && (opt == 'b' || opt == 't')) { fprintf(stderr, "floorrun: too many mounts\n"); return 127; }
		switch (opt) {
		case 'U': hostid = atol(optarg); break;
		case 'b': {
			char *s = strdup(optarg), *d = strchr(s, ':'), *o;
			if (!d) { fprintf(stderr, "floorrun: bad -b %s\n", optarg); return 127; }
			*d++ = 0;
			ms[n] = (struct m){ .src = s, .dst = d };
			if ((o = strchr(d, ':'))) { *o++ = 0; ms[n].ro = strcmp(o, "ro") == 0; }
			n++;
			break;
		}
		case 't': ms[n++] = (struct m){ .dst = optarg, .tmpfs = 1 }; break;
		case 'P': proc = 1; break;
		case 'w': cwd = optarg; break;
		default:
			fprintf(stderr, "usage: floorrun [-U HOSTID] [-b SRC:DST[:ro]]... [-t DST]... [-P] [-w CWD] ROOTFS PROG [ARGS...]\n");
			return 127;
		}
	}
	if (argc - optind < 2) { fprintf(stderr, "floorrun: need ROOTFS and PROG\n"); return 127; }

	/* One clone with every namespace, like a runtime that does it well; with a user
	 * namespace the child waits on a pipe until the parent (root outside) has written
	 * its maps, since only the parent may map ids other than its own. */
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
	int sync[2] = { -1, -1 };
	if (hostid >= 0) {
		flags |= CLONE_NEWUSER;
		if (pipe2(sync, O_CLOEXEC) < 0) die("pipe", NULL);
	}
	pid_t pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0) die("clone", NULL);
	if (pid == 0) {
		if (hostid >= 0) {
			char c;
			close(sync[1]);
			if (read(sync[0], &c, 1) != 1) die("sync", NULL);
			if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) die("setresuid", NULL);
		}
		child(argv[optind], ms, n, proc, cwd, &argv[optind + 1]);
	}
	if (hostid >= 0) {
		char path[64], map[64];
		snprintf(map, sizeof map, "0 %ld 65536\n", hostid);
		snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
		write_file(path, map);
		snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
		write_file(path, map);
		if (write(sync[1], "x", 1) != 1) die("sync", NULL);
		close(sync[1]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) die("waitpid", NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
