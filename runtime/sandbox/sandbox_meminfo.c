/* What the sandbox reads in /proc/meminfo: its memory limit, not the host's memory.
 *
 * Code sizes itself by the memory it sees: numpy's test suite skips or runs its large
 * tests by MemAvailable, joblib, pandas chunking and ML libraries pick batch sizes by
 * it. Reading the host's 24 GiB inside a 2 GiB sandbox, they allocate for the host and
 * are OOM-killed. LXCFS (for LXC) and gVisor answer with the container's limit; so does
 * this, with a file bound read-only over /proc/meminfo (runc's list of /proc files a
 * bind may cover, runtime/linux/mounts.c).
 *
 * MemTotal is the limit, swap is 0 (the sandbox's memory+swap limit equals its memory
 * limit). For `sbx-oci python` the file is the run's own and follows its use: the
 * runtime rewrites MemFree and MemAvailable (the limit less the cgroup's usage, page
 * cache included, so conservative) every 200 ms while the program runs, in place and
 * at one length (every number is as wide as the limit's), so a reader never sees the
 * file shorter or longer. LXCFS answers each read from a FUSE server instead; a
 * reader here sees the use of up to 200 ms before. The file is made in DIR as
 * meminfo-run-PID, unlinked after the run (its bind keeps it); one a killed runtime
 * left is removed by the next run that sees its PID gone.
 *
 * A bundle (`sbx-oci bundle`) is run by whoever the user picks, with nobody to update
 * it: its file is a snapshot with nothing in use, written once per limit beside the
 * skeleton (write, then rename: concurrent runs never see half a file) and reused.
 *
 * What neither can do: sysinfo(2), which glibc's sysconf(_SC_PHYS_PAGES) and
 * os.sysconf("SC_PHYS_PAGES") use, still answers with the host's RAM: the kernel has no
 * namespace for it. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"

/* The fields psutil, free(1) and numpy read, in the kernel's order and format; every
 * number as wide as the limit's (at least 8, as the kernel pads them), so that the
 * text of one limit has one length whatever is in use. */
static char *
meminfo_text (uint64_t memory, uint64_t used)
{
  unsigned long long kb = (unsigned long long) (memory >> 10);
  unsigned long long free_kb = used >= memory ? 0 : (unsigned long long) ((memory - used) >> 10);
  int w = snprintf (NULL, 0, "%llu", kb);
  w = w < 8 ? 8 : w;
  return xasprintf ("MemTotal:       %*llu kB\n"
                    "MemFree:        %*llu kB\n"
                    "MemAvailable:   %*llu kB\n"
                    "Buffers:        %*d kB\n"
                    "Cached:         %*d kB\n"
                    "SwapCached:     %*d kB\n"
                    "Active:         %*d kB\n"
                    "Inactive:       %*d kB\n"
                    "SwapTotal:      %*d kB\n"
                    "SwapFree:       %*d kB\n"
                    "Dirty:          %*d kB\n"
                    "Writeback:      %*d kB\n"
                    "AnonPages:      %*d kB\n"
                    "Mapped:         %*d kB\n"
                    "Shmem:          %*d kB\n"
                    "Slab:           %*d kB\n"
                    "SReclaimable:   %*d kB\n"
                    "SUnreclaim:     %*d kB\n"
                    "CommitLimit:    %*llu kB\n"
                    "Committed_AS:   %*d kB\n",
                    w, kb, w, free_kb, w, free_kb, w, 0, w, 0, w, 0, w, 0, w, 0, w, 0, w, 0, w, 0, w, 0, w, 0, w,
                    0, w, 0, w, 0, w, 0, w, 0, w, kb, w, 0);
}

char *
sandbox_meminfo_file (const char *dir, uint64_t memory, struct sbx_error *err)
{
  _cleanup_close_ int dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *text = NULL;
  char name[64];
  struct stat st;
  if (dirfd < 0)
    {
      sbx_error_set (err, errno, "meminfo: open %s", dir);
      return NULL;
    }
  snprintf (name, sizeof name, "meminfo-%llu", (unsigned long long) memory);
  /* the common case: an earlier run with this limit wrote it */
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
    {
      text = meminfo_text (memory, 0);
      if (fs_write_atomic (dirfd, name, text, strlen (text), 0444, err) < 0)
        {
          sbx_error_wrap (err, "meminfo: %s", dir);
          return NULL;
        }
    }
  return xasprintf ("%s/%s", dir, name);
}

#define RUN_PREFIX "meminfo-run-"

/* Files of runs whose runtime is gone (killed before it could unlink them). */
static void
sweep_stale (int dirfd)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *e;
  if (!d)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((e = readdir (d)))
    {
      char *end;
      long pid;
      if (strncmp (e->d_name, RUN_PREFIX, sizeof RUN_PREFIX - 1) != 0)
        continue;
      pid = strtol (e->d_name + sizeof RUN_PREFIX - 1, &end, 10);
      if (*end || pid <= 0 || (kill ((pid_t) pid, 0) < 0 && errno == ESRCH))
        unlinkat (dirfd, e->d_name, 0);
    }
  closedir (d);
}

int
sandbox_meminfo_run_open (const char *dir, uint64_t memory, char **path, struct sbx_error *err)
{
  _cleanup_close_ int dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *text = meminfo_text (memory, 0);
  char name[64];
  size_t len = strlen (text);
  int fd;
  if (dirfd < 0)
    return sbx_error_set (err, errno, "meminfo: open %s", dir);
  sweep_stale (dirfd);
  snprintf (name, sizeof name, RUN_PREFIX "%d", (int) getpid ());
  unlinkat (dirfd, name, 0); /* a pid's earlier file: that runtime is gone */
  fd = openat (dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0)
    return sbx_error_set (err, errno, "meminfo: create %s/%s", dir, name);
  if (pwrite (fd, text, len, 0) != (ssize_t) len)
    {
      sbx_error_set (err, errno, "meminfo: write %s/%s", dir, name);
      close (fd);
      unlinkat (dirfd, name, 0);
      return -1;
    }
  *path = xasprintf ("%s/%s", dir, name);
  return fd;
}

void
sandbox_meminfo_update (int fd, uint64_t memory, uint64_t used)
{
  _cleanup_free_ char *text = meminfo_text (memory, used);
  /* one write of the whole text at offset 0: the length never changes */
  (void) pwrite (fd, text, strlen (text), 0);
}
