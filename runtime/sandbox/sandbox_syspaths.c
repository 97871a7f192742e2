/* System paths the sandbox is never given to write (issue 34).
 *
 * A --workdir or --rw path is bound so that the sandbox writes as the path's owner
 * (sandbox_workdir.c): root's, for a system directory. `--workdir /etc` would hand
 * /etc/cron.d, /etc/ld.so.preload and /etc/sudoers.d to untrusted code. So, as root and
 * rootless alike, and with no option to turn it off, a path is refused when it is:
 *   - one of the directories below that users make their own directories in, itself
 *     (the list of containers/storage's DangerousHostPath and go-selinux's Relabel,
 *     which podman refuses to chown or relabel: /, /home, /media, /mnt, /opt, /srv,
 *     /tmp, /var, /var/tmp, /root, and the caller's home);
 *   - in a system tree, at any depth: /etc, /usr, /bin, /sbin, /lib*, /boot, /proc,
 *     /sys, /dev, /run, /var/lib, /var/log, /var/spool, /var/cache, /var/mail;
 *   - the runtime's state root or in it, or a directory that holds it or the runtime's
 *     binary.
 * What is compared is the file system object, never the string: the path is opened
 * once (symlinks resolved) and its device and inode compared with each listed
 * directory's, and "in a tree" is decided on the path inside the file system (the
 * mount's root in /proc/self/mountinfo plus the path below its mount point), so a
 * bind mount of /etc or of /etc/cron.d elsewhere is refused like the original. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/stat.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"

static const char *const exact_dirs[] = { "/",    "/home", "/media", "/mnt", "/opt", "/srv",
                                          "/tmp", "/var",  "/var/tmp", "/root" };
static const char *const system_trees[] = { "/etc",     "/usr",     "/bin",       "/sbin",      "/lib",
                                            "/lib32",   "/lib64",   "/libx32",    "/boot",      "/proc",
                                            "/sys",     "/dev",     "/run",       "/var/lib",   "/var/log",
                                            "/var/spool", "/var/cache", "/var/mail" };

/* Where an object is inside its file system: device, inode, and its path from the
 * file system's root (what mountinfo's root field adds to a bind mount). */
struct fs_place
{
  dev_t dev;
  ino_t ino;
  char fspath[PATH_MAX];
};

/* The mount of FD (statx's mnt_id: one call, where /proc's fdinfo costs three). */
static long
mount_id_of (int fd)
{
  struct statx stx;
  if (syscall (SYS_statx, fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
    return -1;
  return (long) stx.stx_mnt_id;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void
unescape (char *s)
{
  char *o = s;
  for (; *s; s++)
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7')
      {
        *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
        s += 3;
      }
    else
      *o++ = *s;
  *o = '\0';
}

/* The root and mount point of mount `id` in MOUNTINFO (the text of
   /proc/self/mountinfo, read once per check): false when it is not listed. */
static bool
mount_lookup (const char *mountinfo, long id, char *root, char *point)
{
  for (const char *line = mountinfo; line && *line;)
    {
      const char *end = strchr (line, '\n');
      long mid;
      if (sscanf (line, "%ld %*d %*s %4095s %4095s", &mid, root, point) == 3 && mid == id)
        {
          unescape (root);
          unescape (point);
          return true;
        }
      line = end ? end + 1 : NULL;
    }
  return false;
}

/* `real` is the resolved path `fd` was opened at. */
static bool
place_of (const char *mountinfo, int fd, const char *real, struct fs_place *p)
{
  char root[PATH_MAX], point[PATH_MAX];
  struct stat st;
  size_t n;
  const char *rel;
  if (fstat (fd, &st) < 0 || !mount_lookup (mountinfo, mount_id_of (fd), root, point))
    return false;
  n = strlen (point);
  if (strcmp (point, "/") == 0)
    rel = real;
  else if (strncmp (real, point, n) == 0 && (real[n] == '/' || real[n] == '\0'))
    rel = real + n;
  else
    return false;
  p->dev = st.st_dev;
  p->ino = st.st_ino;
  snprintf (p->fspath, sizeof p->fspath, "%s%s", strcmp (root, "/") == 0 ? "" : root, rel[0] ? rel : "");
  if (!p->fspath[0])
    strcpy (p->fspath, "/");
  return true;
}

/* The place of a listed path, following its symlinks (/lib -> usr/lib): opened, and
   its resolved name read back from the fd (one call, where realpath makes one per
   component). */
static bool
place_of_path (const char *mountinfo, const char *path, struct fs_place *p)
{
  char real[PATH_MAX], link[64];
  ssize_t n;
  bool ok;
  int fd = open (path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return false;
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/')
    {
      close (fd);
      return false;
    }
  real[n] = '\0';
  ok = place_of (mountinfo, fd, real, p);
  close (fd);
  return ok;
}

static bool
same_object (const struct fs_place *a, const struct fs_place *b)
{
  return a->dev == b->dev && a->ino == b->ino;
}

/* `t` is `tree` or below it, in the same file system. */
static bool
in_tree (const struct fs_place *t, const struct fs_place *tree)
{
  size_t n = strlen (tree->fspath);
  if (t->dev != tree->dev)
    return false;
  if (strcmp (tree->fspath, "/") == 0)
    return true;
  return strncmp (t->fspath, tree->fspath, n) == 0 && (t->fspath[n] == '/' || t->fspath[n] == '\0');
}

/* `t` is `dir` or a directory above it (walked up with "..", as the path goes); a
   `dir` not made yet is walked from its nearest existing parent. */
static bool
holds (const struct fs_place *t, const char *dir)
{
  struct stat st, up;
  char path[PATH_MAX];
  int fd;
  bool yes = false;
  snprintf (path, sizeof path, "%s", dir);
  while ((fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 && errno == ENOENT && strrchr (path, '/') > path)
    *strrchr (path, '/') = '\0';
  for (int depth = 0; fd >= 0 && depth < 256 && fstat (fd, &st) == 0; depth++)
    {
      int parent;
      if (st.st_dev == t->dev && st.st_ino == t->ino)
        {
          yes = true;
          break;
        }
      parent = openat (fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (parent < 0 || (fstat (parent, &up) == 0 && up.st_dev == st.st_dev && up.st_ino == st.st_ino))
        {
          if (parent >= 0)
            close (parent);
          break; /* the root */
        }
      close (fd);
      fd = parent;
    }
  if (fd >= 0)
    close (fd);
  return yes;
}

static int
refuse (const char *opt, const char *given, const char *what, const char *dir, struct sbx_error *err)
{
  sbx_error_set (err, 0, "%s %s: %s %s, which the sandbox may not write (sbx-oci-python(8), SYSTEM PATHS)", opt,
                 given, what, dir);
  err->exit_hint = SBX_EXIT_SETUP;
  return -1;
}

/* The caller's home directories: $HOME, and under sudo the invoking user's. */
static int
check_homes (const char *mountinfo, const struct fs_place *t, const char *opt, const char *given,
             struct sbx_error *err)
{
  const char *homes[2] = { getenv ("HOME"), NULL };
  const char *sudo_user = getenv ("SUDO_USER");
  struct passwd *pw = sudo_user ? getpwnam (sudo_user) : NULL;
  if (pw && pw->pw_dir)
    homes[1] = pw->pw_dir;
  for (size_t i = 0; i < 2; i++)
    {
      struct fs_place p;
      if (homes[i] && homes[i][0] == '/' && place_of_path (mountinfo, homes[i], &p) && same_object (t, &p))
        return refuse (opt, given, "is the home directory", homes[i], err);
    }
  return 0;
}

/* A file (--rw FILE) is also placed by its directory and name: its own device may be
   another layer's (overlayfs reports a file's lower file system), while its
   directory's is the mount's. Both are checked against the trees. */
static bool
place_in_dir (const char *mountinfo, const char *real, struct fs_place *p)
{
  char dir[PATH_MAX];
  const char *base = strrchr (real, '/');
  size_t n;
  if (!base || base == real)
    return false;
  snprintf (dir, sizeof dir, "%.*s", (int) (base - real), real);
  if (!place_of_path (mountinfo, dir, p))
    return false;
  n = strlen (p->fspath);
  snprintf (p->fspath + n, sizeof p->fspath - n, "%s%s", strcmp (p->fspath, "/") == 0 ? "" : "/", base + 1);
  return true;
}

static bool
in_tree_either (const struct fs_place *t, const struct fs_place *t2, bool has_t2, const struct fs_place *tree)
{
  return in_tree (t, tree) || (has_t2 && in_tree (t2, tree));
}

static int
check_all (const char *mi, const struct sbx_ctx *ctx, const char *opt, const char *given, const char *real, int fd,
           struct sbx_error *err)
{
  struct fs_place t, t2, p;
  struct stat st;
  char exe[PATH_MAX];
  ssize_t n;
  bool has_t2;
  if (!place_of (mi, fd, real, &t) || fstat (fd, &st) < 0)
    return sbx_error_set (err, errno, "%s %s: cannot tell where it is (/proc/self/mountinfo)", opt, given);
  has_t2 = !S_ISDIR (st.st_mode) && place_in_dir (mi, real, &t2);
  for (size_t i = 0; i < ARRAY_SIZE (exact_dirs); i++)
    if (place_of_path (mi, exact_dirs[i], &p) && same_object (&t, &p))
      return refuse (opt, given, "is the host's", exact_dirs[i], err);
  for (size_t i = 0; i < ARRAY_SIZE (system_trees); i++)
    if (place_of_path (mi, system_trees[i], &p) && in_tree_either (&t, &t2, has_t2, &p))
      return refuse (opt, given, same_object (&t, &p) ? "is the host's" : "is in the host's", system_trees[i], err);
  if (check_homes (mi, &t, opt, given, err) < 0)
    return -1;
  if (ctx->root && place_of_path (mi, ctx->root, &p) && in_tree_either (&t, &t2, has_t2, &p))
    return refuse (opt, given, "is in the runtime's state root", ctx->root, err);
  if (ctx->root && holds (&t, ctx->root))
    return refuse (opt, given, "holds the runtime's state root", ctx->root, err);
  n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0)
    {
      exe[n] = '\0';
      *strrchr (exe, '/') = '\0';
      if (exe[0] && holds (&t, exe))
        return refuse (opt, given, "holds the runtime's binary in", exe, err);
    }
  return 0;
}

int
syspaths_check (const struct sbx_ctx *ctx, const char *opt, const char *given, const char *real, int fd,
                struct sbx_error *err)
{
  _cleanup_free_ char *mountinfo = NULL;
  size_t len = 0;
  int r;
  if (json_read_file (AT_FDCWD, "/proc/self/mountinfo", 64u << 20, &mountinfo, &len, err) < 0)
    return sbx_error_wrap (err, "%s %s", opt, given);
  r = check_all (mountinfo, ctx, opt, given, real, fd, err);
  return r;
}
