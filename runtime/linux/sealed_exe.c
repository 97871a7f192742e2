#include "build-config.h"
#include "runtime/linux/sealed_exe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/mountapi.h"

char **sbx_main_argv;
extern char **environ;

/* Re-exec through a private, read-only bind mount of our own binary: the new
 * /proc/self/exe is a path on that mount, so reopening it for writing fails with
 * EROFS whatever the opener's privileges (short of CAP_SYS_ADMIN, which a container
 * holding it has other ways to abuse). The mount is detached: it is in no mount
 * namespace, and goes away with the last process using it. Cheaper than a memfd
 * copy of the binary (no 2 MB copy per run); the cost is one exec. */
int
sealed_exe_ensure (struct sbx_error *err)
{
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  struct statvfs sv;
  _cleanup_close_ int tree = -1;
  /* Already on a read-only mount (our own re-exec, or a read-only /usr). */
  if (statvfs ("/proc/self/exe", &sv) == 0 && (sv.f_flag & ST_RDONLY))
    return 0;
  tree = sys_open_tree (AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return sbx_error_set (err, errno, "open_tree of the runtime binary (for its read-only re-exec)");
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH, &ro) < 0)
    return sbx_error_set (err, errno, "make the runtime binary's private mount read-only");
  syscall (SYS_execveat, tree, "", sbx_main_argv, environ, AT_EMPTY_PATH);
  return sbx_error_set (err, errno, "re-exec from the read-only runtime binary");
}

bool
sealed_exe_needed (const struct oci_linux *l)
{
  const struct oci_namespace *user = &l->ns[SBX_NS_USER];
  struct stat st;
  if (!user->present || user->path || !l->n_uid_mappings)
    return true;
  /* Who owns the binary: normally root. Unknown: seal. */
  if (stat ("/proc/self/exe", &st) < 0)
    return true;
  for (size_t i = 0; i < l->n_uid_mappings; i++)
    {
      const struct oci_id_mapping *m = &l->uid_mappings[i];
      if (st.st_uid >= m->host_id && (uint64_t) st.st_uid < (uint64_t) m->host_id + m->size)
        return true;
    }
  return false;
}
