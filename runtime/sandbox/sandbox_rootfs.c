/* The sandbox's rootfs: a skeleton of mount points and a generated minimal /etc. The
 * host's system paths are bound over it read-only (sandbox_config.c); /etc is NOT the
 * host's: passwd and group know only the sandbox user, and of the host's files only
 * those Python needs are bound (ld.so.cache, the CA certificates, openssl.cnf, Debian's
 * alternatives and pythonX.Y config); localtime is copied as the symlink it is.
 *
 * The skeleton depends only on the interpreter, so `sbx-oci python` builds it once per
 * interpreter in the state root (@python/<key>) and reuses it: a run then costs no
 * mkdir and no interpreter query. */
#include "build-config.h"
#include "runtime/sandbox/sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/base/sha256.h"
#include "runtime/base/util.h"
#include "runtime/linux/fs.h"

/* Bumped whenever the skeleton's shape changes, so old caches are not reused. */
#define SKELETON_FORMAT "sbx-python-skeleton-7" /* 4: etc/services, etc/protocols; 5: no run's mount points;
                                                    6: etc/matplotlibrc, etc/mime.types; 7: etc/fonts */
#define INTERP_FILE "interp"

/* Top-level entries that are symlinks into /usr on a merged-/usr host (copied as
 * such) or directories (bound read-only). */
static const char *const usr_links[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };

static const char *const skeleton_dirs[] = { "usr", "proc", "dev", "tmp", "work", "etc", "etc/ssl",
                                             "sbx", "run" };

static int
write_file (int dirfd, const char *name, const char *text, struct sbx_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  size_t len = strlen (text);
  if (fd < 0 || write (fd, text, len) != (ssize_t) len)
    return sbx_error_set (err, errno, "skeleton: write %s", name);
  return 0;
}

static int
mkdirs (int rootfd, const char *path, struct sbx_error *err)
{
  int fd = fs_mkdir_in_root (rootfd, path, 0755, err);
  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

static int
mkfile (int rootfd, const char *path, struct sbx_error *err)
{
  int fd = fs_mkfile_in_root_nofollow (rootfd, path, err);
  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

/* Public host files Python code reads, copied into the skeleton's /etc: netbase's
 * services and protocols (socket.getservbyname("http"), getaddrinfo(host, "http")),
 * Debian's matplotlibrc (matplotlib will not import without it: Debian moved it to
 * /etc) and mime.types (mimetypes.guess_type). A copy costs a run nothing where a bind
 * would cost a mount; their change times are part of the skeleton's key, so a package
 * that adds or changes one gets a new skeleton. */
static const char *const copied_etc_files[] = { "services", "protocols", "matplotlibrc", "mime.types" };

/* A copy of one of them, made once per skeleton. Only a regular file, at most 1 MiB;
 * a host without it gets none, as the host itself has none. */
static int
copy_host_file (int etc, const char *host_path, const char *name, struct sbx_error *err)
{
  _cleanup_close_ int in = open (host_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  _cleanup_free_ char *buf = NULL;
  struct stat st;
  size_t len = 0, cap = 1u << 20;
  if (in < 0 || fstat (in, &st) < 0 || !S_ISREG (st.st_mode))
    return 0;
  buf = xmalloc0 (cap + 1);
  while (len < cap)
    {
      ssize_t n = read (in, buf + len, cap - len);
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  return write_file (etc, name, buf, err);
}

static int
write_etc (int rootfd, struct sbx_error *err)
{
  _cleanup_close_ int etc = openat (rootfd, "etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char passwd[256], group[256], hosts[256];
  char target[PATH_MAX];
  ssize_t n;
  if (etc < 0)
    return sbx_error_set (err, errno, "skeleton: etc");
  snprintf (passwd, sizeof passwd,
            "root:x:0:0:root:/root:/usr/sbin/nologin\n" SANDBOX_USER ":x:%d:%d:" SANDBOX_USER ":" SANDBOX_WORKDIR
            ":/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            SANDBOX_UID, SANDBOX_GID);
  snprintf (group, sizeof group, "root:x:0:\n" SANDBOX_USER ":x:%d:\nnogroup:x:65534:\n", SANDBOX_GID);
  snprintf (hosts, sizeof hosts, "127.0.0.1\tlocalhost " SANDBOX_HOSTNAME "\n::1\tlocalhost " SANDBOX_HOSTNAME
                                 " ip6-localhost ip6-loopback\n");
  if (write_file (etc, "passwd", passwd, err) < 0 || write_file (etc, "group", group, err) < 0
      || write_file (etc, "hosts", hosts, err) < 0 || write_file (etc, "hostname", SANDBOX_HOSTNAME "\n", err) < 0
      || write_file (etc, "nsswitch.conf",
                     "passwd: files\ngroup: files\nhosts: files dns\nservices: files\nprotocols: files\n", err) < 0
      /* empty: no name server, unless --network full binds the host's over it */
      || write_file (etc, "resolv.conf", "", err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (copied_etc_files); i++)
    {
      _cleanup_free_ char *host = xasprintf ("/etc/%s", copied_etc_files[i]);
      if (copy_host_file (etc, host, copied_etc_files[i], err) < 0)
        return -1;
    }
  /* mount points for the host files that are bound in */
  if (mkfile (rootfd, "etc/ld.so.cache", err) < 0 || mkdirs (rootfd, "etc/ssl/certs", err) < 0
      || mkfile (rootfd, "etc/ssl/openssl.cnf", err) < 0 || mkdirs (rootfd, "etc/alternatives", err) < 0
      || mkdirs (rootfd, "etc/fonts", err) < 0)
    return -1;
  n = readlink ("/etc/localtime", target, sizeof target - 1);
  if (n > 0)
    {
      target[n] = '\0';
      if (symlinkat (target, etc, "localtime") < 0 && errno != EEXIST)
        return sbx_error_set (err, errno, "skeleton: etc/localtime");
    }
  return 0;
}

int
sandbox_skeleton_build (const char *dir, const struct sandbox_interp *in, struct sbx_error *err)
{
  _cleanup_close_ int dfd = -1, rootfd = -1;
  if (mkdir (dir, 0755) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", dir);
  dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return sbx_error_set (err, errno, "open %s", dir);
  if (mkdirat (dfd, "rootfs", 0755) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s/rootfs", dir);
  rootfd = openat (dfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    return sbx_error_set (err, errno, "open %s/rootfs", dir);
  for (size_t i = 0; i < ARRAY_SIZE (skeleton_dirs); i++)
    if (mkdirs (rootfd, skeleton_dirs[i], err) < 0)
      return -1;
  for (size_t i = 0; i < ARRAY_SIZE (usr_links); i++)
    {
      _cleanup_free_ char *host = xasprintf ("/%s", usr_links[i]);
      char target[PATH_MAX];
      ssize_t n = readlink (host, target, sizeof target - 1);
      struct stat st;
      if (n > 0)
        {
          target[n] = '\0';
          if (symlinkat (target, rootfd, usr_links[i]) < 0 && errno != EEXIST)
            return sbx_error_set (err, errno, "skeleton: %s", usr_links[i]);
        }
      else if (stat (host, &st) == 0 && S_ISDIR (st.st_mode) && mkdirs (rootfd, usr_links[i], err) < 0)
        return -1;
    }
  if (write_etc (rootfd, err) < 0)
    return -1;
  if (in)
    {
      if (in->etc_python && mkdirs (rootfd, in->etc_python, err) < 0)
        return -1;
      for (size_t i = 0; i < in->n_binds; i++)
        if (mkdirs (rootfd, in->binds[i], err) < 0)
          return -1;
    }
  return 0;
}

/* The cache key: the interpreter as given and the file it resolves to, by identity
 * and change time (an upgrade of the interpreter builds a new skeleton). */
static char *
skeleton_key (const char *python, struct sbx_error *err)
{
  char real[PATH_MAX], hex[65];
  struct stat st;
  _cleanup_free_ char *id = NULL;
  if (!realpath (python, real) || stat (real, &st) < 0)
    return sbx_error_set (err, errno, "--python %s", python), NULL;
  if (!S_ISREG (st.st_mode))
    return sbx_error_set (err, EINVAL, "--python %s: not a regular file", python), NULL;
  id = xasprintf ("%s\n%s\n%s\n%llu:%llu:%lld.%09ld:%lld.%09ld:%lld", SKELETON_FORMAT, python, real,
                  (unsigned long long) st.st_dev, (unsigned long long) st.st_ino, (long long) st.st_mtim.tv_sec,
                  st.st_mtim.tv_nsec, (long long) st.st_ctim.tv_sec, st.st_ctim.tv_nsec, (long long) st.st_size);
  for (size_t i = 0; i < ARRAY_SIZE (copied_etc_files); i++)
    {
      _cleanup_free_ char *host = xasprintf ("/etc/%s", copied_etc_files[i]), *more = NULL;
      struct stat fst;
      if (stat (host, &fst) < 0)
        memset (&fst, 0, sizeof fst);
      more = xasprintf ("%s\n%s:%lld.%09ld:%lld", id, copied_etc_files[i], (long long) fst.st_ctim.tv_sec,
                        fst.st_ctim.tv_nsec, (long long) fst.st_size);
      free (id);
      id = more;
      more = NULL;
    }
  sha256_hex (id, strlen (id), hex);
  hex[24] = '\0';
  return xstrdup (hex);
}

static int
read_interp (const char *dir, struct sandbox_interp *in, struct sbx_error *err)
{
  _cleanup_free_ char *path = xasprintf ("%s/" INTERP_FILE, dir);
  char buf[16384];
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;
  if (fd < 0)
    return -1; /* not built (yet) */
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  return sandbox_interp_parse (buf, in, err);
}

static bool made_at_run_time (const char *dest);

/* The mount points a policy needs in the skeleton ("d/x" for a directory, "f/x" for a
   file, one per line, NULL if none): their names make the skeleton's variant. */
static char *
policy_mount_points (const struct sandbox_policy *p, struct sbx_error *err)
{
  char *list = NULL;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      struct stat st;
      char *more;
      if (made_at_run_time (p->mounts[i].dest))
        continue;
      if (stat (p->mounts[i].source, &st) < 0)
        {
          free (list);
          return sbx_error_set (err, errno, "%s %s", p->mounts[i].writable ? "--rw" : "--ro", p->mounts[i].source),
                 NULL;
        }
      more = xasprintf ("%s%c%s\n", list ? list : "", S_ISDIR (st.st_mode) ? 'd' : 'f', p->mounts[i].dest);
      free (list);
      list = more;
    }
  return list;
}

static int
add_policy_mount_points (const char *rootfs, const char *list, struct sbx_error *err)
{
  _cleanup_close_ int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *copy = xstrdup (list);
  if (rootfd < 0)
    return sbx_error_set (err, errno, "open %s", rootfs);
  for (char *line = strtok (copy, "\n"); line; line = strtok (NULL, "\n"))
    if ((line[0] == 'd' ? mkdirs (rootfd, line + 1, err) : mkfile (rootfd, line + 1, err)) < 0)
      return sbx_error_wrap (err, "mount point %s", line + 1);
  return 0;
}

int
sandbox_skeleton_ensure (const char *cache, const char *python, const struct sandbox_policy *p, char **bundle,
                         struct sandbox_interp *in, struct sbx_error *err)
{
  _cleanup_free_ char *key = skeleton_key (python, err), *dir = NULL, *tmp = NULL, *text = NULL;
  _cleanup_free_ char *points = NULL;
  unsigned char r[6] = { 0 };
  _cleanup_close_ int cfd = -1;
  struct sbx_error ignored = { 0 };
  if (!key)
    return -1;
  /* --ro/--rw destinations need mount points in the skeleton, which is shared: a run
     with some gets its own variant, named by them, so that no run sees the names of
     another's (a skeleton only ever holds what every run using it asked for). */
  if (!(points = policy_mount_points (p, err)) && err->msg)
    return -1;
  if (points)
    {
      char hex[65];
      sha256_hex (points, strlen (points), hex);
      hex[16] = '\0';
      dir = xasprintf ("%s/%s-%s", cache, key, hex);
    }
  else
    dir = xasprintf ("%s/%s", cache, key);
  if (read_interp (dir, in, &ignored) == 0)
    {
      *bundle = xstrdup (dir);
      return 0;
    }
  sbx_error_clear (&ignored);
  sandbox_interp_free (in);
  /* First use of this interpreter: ask it, build beside, rename into place. */
  if (sandbox_interp_query (python, in, err) < 0)
    return -1;
  if (mkdir (cache, 0700) < 0 && errno != EEXIST)
    return sbx_error_set (err, errno, "mkdir %s", cache);
  cfd = open (cache, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cfd < 0)
    return sbx_error_set (err, errno, "open %s", cache);
  if (getrandom (r, sizeof r, GRND_NONBLOCK) < 0)
    memset (r, 0, sizeof r);
  tmp = xasprintf ("%s/.tmp-%d-%02x%02x%02x%02x%02x%02x", cache, (int) getpid (), r[0], r[1], r[2], r[3], r[4], r[5]);
  text = sandbox_interp_serialize (in);
  if (sandbox_skeleton_build (tmp, in, err) < 0)
    goto fail;
  if (points)
    {
      _cleanup_free_ char *rootfs = xasprintf ("%s/rootfs", tmp);
      if (add_policy_mount_points (rootfs, points, err) < 0)
        goto fail;
    }
  {
    _cleanup_close_ int tfd = open (tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (tfd < 0 || fs_write_atomic (tfd, INTERP_FILE, text, strlen (text), 0644, err) < 0)
      {
        if (tfd < 0)
          sbx_error_set (err, errno, "open %s", tmp);
        goto fail;
      }
  }
  if (rename (tmp, dir) < 0)
    {
      if (errno != EEXIST && errno != ENOTEMPTY)
        {
          sbx_error_set (err, errno, "rename %s", dir);
          goto fail;
        }
      fs_remove_tree (AT_FDCWD, tmp); /* a parallel first run won the race: use its skeleton */
    }
  *bundle = xstrdup (dir);
  return 0;
fail:
  fs_remove_tree (AT_FDCWD, tmp);
  return -1;
}

int
sandbox_image_add_mount_points (const char *rootfs, struct sbx_error *err)
{
  static const char *const dirs[] = { "proc", "dev", "tmp", "work", "sbx" };
  _cleanup_close_ int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return sbx_error_set (err, errno, "--rootfs %s", rootfs);
  for (size_t i = 0; i < ARRAY_SIZE (dirs); i++)
    if (mkdirs (rootfd, dirs[i], err) < 0)
      return sbx_error_wrap (err, "--rootfs %s", rootfs);
  return 0;
}

/* Mount points of the run's own binds (--ro, --rw) in the skeleton, made by us: the
 * sandbox's setup runs as its unprivileged user, who may not create anything in the
 * root-owned skeleton. Those under /tmp, /work and /sbx (a SCRIPT's, in a tmpfs of
 * the run's own) land on a file system the sandbox user owns, and the runtime makes
 * them there. */
static bool
made_at_run_time (const char *dest)
{
  static const char *const owned[] = { "/tmp", SANDBOX_WORKDIR, "/dev", "/proc", "/sys", "/sbx" };
  for (size_t i = 0; i < ARRAY_SIZE (owned); i++)
    if (path_is_under (dest, owned[i]))
      return true;
  return false;
}

int
sandbox_skeleton_add_mount_points (const char *rootfs, const struct sandbox_policy *p, struct sbx_error *err)
{
  _cleanup_free_ char *points = policy_mount_points (p, err);
  if (!points)
    return err->msg ? -1 : 0;
  return add_policy_mount_points (rootfs, points, err);
}
