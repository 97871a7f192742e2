/* nodewatch LOG NODE...: says who changed a host device node's owner or mode.
 *
 * tests/check.sh runs it in the background for the whole of `make check`. It marks
 * each NODE for FAN_ATTRIB with fanotify (whose events carry the pid of the process
 * that made them) and, when a node's owner, group or mode differs from what it was at
 * the start, appends one line to LOG:
 *   /dev/null 0:0 666 -> 100000:100000 666 by pid 1234 (crun ... run ...) at 12:34:56
 * then takes the new state as the baseline. The command line is read from /proc at
 * once; a process already gone shows as "(exited)". FAN_ATTRIB also fires for times
 * only (touch), which changes nothing here and is not logged.
 *
 * Why: Debian's crun 1.8.1 fchowns stdio that is not a tty to the container's root,
 * devices included (crun issue 1845), and the host's /dev/null once ended up owned by
 * 100000 with no trace of who did it. check.sh compares the nodes after each stage;
 * this names the command.
 *
 * Exits 0 on SIGTERM; 2 when fanotify cannot watch (the caller then only compares). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES 16

struct node {
	const char *path;
	struct stat st;
};

static struct node nodes[MAX_NODES];
static int n_nodes;

static void
describe_pid (int pid, char *out, size_t len)
{
	char path[64];
	snprintf (path, sizeof path, "/proc/%d/cmdline", pid);
	int fd = open (path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read (fd, out, len - 1);
	if (fd >= 0)
		close (fd);
	if (n <= 0) {
		snprintf (out, len, "exited");
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

/* Logs every node whose owner, group or mode changed since its baseline. */
static void
check_nodes (FILE *log, int pid)
{
	for (int i = 0; i < n_nodes; i++) {
		struct stat now;
		if (stat (nodes[i].path, &now) != 0)
			continue;
		struct stat *was = &nodes[i].st;
		if (now.st_uid == was->st_uid && now.st_gid == was->st_gid && now.st_mode == was->st_mode)
			continue;
		char cmd[512], when[32];
		time_t t = time (NULL);
		describe_pid (pid, cmd, sizeof cmd);
		strftime (when, sizeof when, "%H:%M:%S", localtime (&t));
		fprintf (log, "%s %u:%u %o -> %u:%u %o by pid %d (%s) at %s\n", nodes[i].path, was->st_uid,
		         was->st_gid, was->st_mode & 07777, now.st_uid, now.st_gid, now.st_mode & 07777, pid, cmd,
		         when);
		fflush (log);
		*was = now;
	}
}

static volatile sig_atomic_t stop;

static void
on_term (int sig)
{
	(void) sig;
	stop = 1;
}

int
main (int argc, char **argv)
{
	if (argc < 3 || argc - 2 > MAX_NODES) {
		fprintf (stderr, "usage: nodewatch LOG NODE... (at most %d)\n", MAX_NODES);
		return 2;
	}
	FILE *log = fopen (argv[1], "a");
	if (log == NULL) {
		fprintf (stderr, "nodewatch: %s: %s\n", argv[1], strerror (errno));
		return 2;
	}
	int fan = fanotify_init (FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY);
	if (fan < 0) {
		fprintf (stderr, "nodewatch: fanotify_init: %s\n", strerror (errno));
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		struct node *n = &nodes[n_nodes];
		n->path = argv[i];
		if (stat (n->path, &n->st) != 0)
			continue;
		if (fanotify_mark (fan, FAN_MARK_ADD, FAN_ATTRIB, AT_FDCWD, n->path) != 0) {
			fprintf (stderr, "nodewatch: fanotify_mark %s: %s\n", n->path, strerror (errno));
			return 2;
		}
		n_nodes++;
	}
	struct sigaction sa = { .sa_handler = on_term };
	sigaction (SIGTERM, &sa, NULL);
	sigaction (SIGINT, &sa, NULL);
	/* events carry a variable-length fid record: aligned room for many */
	char buf[8192] __attribute__ ((aligned (__alignof__ (struct fanotify_event_metadata))));
	while (!stop) {
		ssize_t len = read (fan, buf, sizeof buf);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			fprintf (stderr, "nodewatch: read: %s\n", strerror (errno));
			return 2;
		}
		struct fanotify_event_metadata *m = (struct fanotify_event_metadata *) buf;
		for (; FAN_EVENT_OK (m, len); m = FAN_EVENT_NEXT (m, len))
			check_nodes (log, m->pid);
	}
	return 0;
}
