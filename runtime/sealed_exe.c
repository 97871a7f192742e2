#include "build-config.h"
#include "sealed_exe.h"

#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

char **sbx_main_argv;
extern char **environ;

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

int
sealed_exe_ensure (struct sbx_error *err)
{
  _cleanup_close_ int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  _cleanup_close_ int mfd = -1;
  struct stat st;
  off_t off = 0;
  int seals;
  if (self < 0)
    return sbx_error_set (err, errno, "open /proc/self/exe");
  /* A memfd we sealed (the seals cannot be removed, so they cannot be faked). */
  seals = fcntl (self, F_GET_SEALS);
  if (seals >= 0 && (seals & SEALS) == SEALS)
    return 0;
  if (fstat (self, &st) < 0)
    return sbx_error_set (err, errno, "stat /proc/self/exe");
  mfd = memfd_create ("sbx-oci", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return sbx_error_set (err, errno, "memfd_create for the sealed runtime copy");
  while (off < st.st_size)
    {
      ssize_t n = sendfile (mfd, self, &off, (size_t) (st.st_size - off));
      if (n <= 0)
        return sbx_error_set (err, n < 0 ? errno : EIO, "copy the runtime into a memfd");
    }
  if (fcntl (mfd, F_ADD_SEALS, SEALS) < 0)
    return sbx_error_set (err, errno, "seal the runtime copy");
  syscall (SYS_execveat, mfd, "", sbx_main_argv, environ, AT_EMPTY_PATH);
  return sbx_error_set (err, errno, "re-exec from the sealed runtime copy");
}
