/* What the sandbox reads in /proc/meminfo: its memory limit, not the host's memory.
 *
 * Code sizes itself by the memory it sees: numpy's test suite skips or runs its large
 * tests by MemAvailable, joblib, pandas chunking and ML libraries pick batch sizes by
 * it. Reading the host's 24 GiB inside a 2 GiB sandbox, they allocate for the host and
 * are OOM-killed. LXCFS (for LXC) and gVisor answer with the container's limit; so does
 * this, with a file bound read-only over /proc/meminfo (runc's list of /proc files a
 * bind may cover, runtime/mounts.c).
 *
 * The file is a snapshot for a run that starts with nothing in use: MemTotal, MemFree
 * and MemAvailable are the limit, swap is 0 (the sandbox's memory+swap limit equals its
 * memory limit) and the caches are empty. It depends only on the limit, so it is
 * written once per limit beside the skeleton (write, then rename: concurrent runs never
 * see half a file) and reused. What it cannot do: follow the run's own use as it grows
 * (that needs a file system served per read, as LXCFS's FUSE does), and sysinfo(2),
 * which glibc's sysconf(_SC_PHYS_PAGES) and os.sysconf("SC_PHYS_PAGES") use, still
 * answers with the host's RAM: the kernel has no namespace for it. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/fs.h"

/* The fields psutil, free(1) and numpy read, in the kernel's order and format. */
static char *
meminfo_text (uint64_t memory)
{
  unsigned long long kb = (unsigned long long) (memory >> 10);
  return xasprintf ("MemTotal:       %8llu kB\n"
                    "MemFree:        %8llu kB\n"
                    "MemAvailable:   %8llu kB\n"
                    "Buffers:               0 kB\n"
                    "Cached:                0 kB\n"
                    "SwapCached:            0 kB\n"
                    "Active:                0 kB\n"
                    "Inactive:              0 kB\n"
                    "SwapTotal:             0 kB\n"
                    "SwapFree:              0 kB\n"
                    "Dirty:                 0 kB\n"
                    "Writeback:             0 kB\n"
                    "AnonPages:             0 kB\n"
                    "Mapped:                0 kB\n"
                    "Shmem:                 0 kB\n"
                    "Slab:                  0 kB\n"
                    "SReclaimable:          0 kB\n"
                    "SUnreclaim:            0 kB\n"
                    "CommitLimit:    %8llu kB\n"
                    "Committed_AS:          0 kB\n",
                    kb, kb, kb, kb);
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
      text = meminfo_text (memory);
      if (fs_write_atomic (dirfd, name, text, strlen (text), 0444, err) < 0)
        {
          sbx_error_wrap (err, "meminfo: %s", dir);
          return NULL;
        }
    }
  return xasprintf ("%s/%s", dir, name);
}
