#include "build-config.h"
#include "runtime/container/statedir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/json.h"
#include "runtime/base/util.h"
#include "runtime/linux/namespaces.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/linux/fs.h"

const char *
container_status_name (enum container_status s)
{
  switch (s)
    {
    case STATUS_CREATED:
      return "created";
    case STATUS_RUNNING:
      return "running";
    case STATUS_PAUSED:
      return "paused";
    default:
      return "stopped";
    }
}

int
statedir_validate_id (const char *id, struct sbx_error *err)
{
  size_t n = id ? strlen (id) : 0;
  if (n == 0)
    return sbx_error_set (err, 0, "invalid container id: the id must not be empty");
  if (n > 255)
    return sbx_error_set (err, 0, "invalid container id: longer than 255 characters");
  if (strcmp (id, ".") == 0 || strcmp (id, "..") == 0 || id[0] == '-')
    goto bad;
  for (const char *p = id; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr ("_+.-", *p)))
      goto bad;
  return 0;
bad:
  {
    /* Print the id safely: it may hold control characters. */
    char shown[64];
    size_t j = 0;
    for (size_t i = 0; id[i] && j < sizeof shown - 4; i++)
      shown[j++] = (id[i] >= 0x20 && id[i] < 0x7f) ? id[i] : '?';
    shown[j] = '\0';
    return sbx_error_set (err, 0, "invalid container id '%s': use only A-Z a-z 0-9 _ + . - (not '.', '..' or a leading '-')",
                          shown);
  }
}

bool
statedir_rootless_root (void)
{
  /* Asked only when XDG_RUNTIME_DIR says where such a caller keeps its state (runc
     asks the same). */
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  return geteuid () == 0 && xdg && *xdg && !userns_self_is_initial ();
}

char *
statedir_default_root (bool host_root)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (host_root)
    return xstrdup ("/run/sbx-oci");
  if (xdg && *xdg)
    return xasprintf ("%s/sbx-oci", xdg);
  return xasprintf ("/tmp/sbx-oci-%d", (int) geteuid ());
}

static int
mkdir_p (const char *path, mode_t mode)
{
  _cleanup_free_ char *copy = xstrdup (path);
  for (char *p = copy + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        if (mkdir (copy, 0755) < 0 && errno != EEXIST)
          return -1;
        *p = '/';
      }
  if (mkdir (copy, mode) < 0 && errno != EEXIST)
    return -1;
  return 0;
}

int
statedir_open_root (const char *root, bool create, struct sbx_error *err)
{
  int fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 || !create || errno != ENOENT)
    {
      if (fd < 0)
        return sbx_error_set (err, errno, "open state root %s", root);
      return fd;
    }
  if (mkdir_p (root, 0700) < 0)
    return sbx_error_set (err, errno, "create state root %s", root);
  fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sbx_error_set (err, errno, "open state root %s", root);
  return fd;
}


#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* ID's dir made under a name no id has ("@claim.RANDOM.ID"), locked, then given its id
 * (never replacing one): a dir under an id has its create's lock from its first
 * moment, so one that has neither state.json nor a lock holder is a create's that was
 * killed (statedir_sweep_abandoned). 0: claimed; 1: this file system cannot rename so
 * (the caller makes ID itself); -1: the error. */
static int
claim_locked (int rootfd, const char *id, int *fdp, struct sbx_error *err)
{
  char tmp[NAME_MAX + 1];
  _cleanup_free_ char *nonce = statedir_generate_id ("");
  int fd, e;
  if (snprintf (tmp, sizeof tmp, "@claim.%s.%s", nonce, id) >= (int) sizeof tmp)
    return 1;
  if (mkdirat (rootfd, tmp, 0700) < 0)
    return sbx_error_set (err, errno, "create state dir for %s", id);
  fd = openat (rootfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 || flock (fd, LOCK_EX) < 0
      || syscall (SYS_renameat2, rootfd, tmp, rootfd, id, RENAME_NOREPLACE) < 0)
    {
      e = errno;
      if (fd >= 0)
        close (fd);
      unlinkat (rootfd, tmp, AT_REMOVEDIR);
      if (e == EEXIST)
        return sbx_error_set (err, 0, "container %s already exists", id);
      /* no renameat2 flags here (EINVAL/ENOSYS; a seccomp filter of a container
         manager may answer EPERM): make the dir by name instead */
      if (e == EINVAL || e == ENOSYS || e == EPERM)
        return 1;
      return sbx_error_set (err, e, "create state dir for %s", id);
    }
  *fdp = fd;
  return 0;
}

int
statedir_claim (int rootfd, const char *id, struct sbx_error *err)
{
  int fd = -1, r = claim_locked (rootfd, id, &fd, err);
  if (r <= 0)
    return r < 0 ? -1 : fd;
  if (mkdirat (rootfd, id, 0700) < 0)
    {
      if (errno == EEXIST)
        return sbx_error_set (err, 0, "container %s already exists", id);
      return sbx_error_set (err, errno, "create state dir for %s", id);
    }
  fd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sbx_error_set (err, errno, "open state dir for %s", id);
  return fd;
}

int
statedir_open (int rootfd, const char *id, struct sbx_error *err)
{
  int fd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return sbx_error_set (err, 0, "container %s does not exist", id);
      return sbx_error_set (err, errno, "open state dir of %s", id);
    }
  return fd;
}

/* Remove the state dir NAME (files only, no subdirectories) and then NAME itself. */
static int
remove_dir_named (int rootfd, const char *name, const char *id, struct sbx_error *err)
{
  _cleanup_close_ int dfd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  DIR *d;
  struct dirent *de;
  if (dfd < 0)
    {
      if (errno == ENOENT)
        return 0;
      return sbx_error_set (err, errno, "open state dir of %s", id);
    }
  d = fdopendir (dup (dfd));
  if (!d)
    return sbx_error_set (err, errno, "read state dir of %s", id);
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (unlinkat (dfd, de->d_name, 0) < 0 && errno != ENOENT)
        {
          int e = errno;
          closedir (d);
          return sbx_error_set (err, e, "remove %s/%s", id, de->d_name);
        }
    }
  closedir (d);
  if (unlinkat (rootfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return sbx_error_set (err, errno, "remove state dir of %s", id);
  return 0;
}

/* The dir leaves its name first (renamed to "@deleting.ID": "@" starts no id, and
 * list and the janitor skip it), then its files go. A command that opened the dir
 * before and finds no state.json can then tell a container being deleted from one
 * being created (container_load), and the id is free again at once. A rename that
 * cannot be done (a name too long, a left-over of a killed delete in the way that
 * cannot be cleared) falls back to removing the dir in place. */
int
statedir_remove (int rootfd, const char *id, struct sbx_error *err)
{
  char hidden[NAME_MAX + 1];
  const char *name = id;
  if (snprintf (hidden, sizeof hidden, "@deleting.%s", id) < (int) sizeof hidden)
    {
      if (renameat (rootfd, id, rootfd, hidden) == 0)
        name = hidden;
      else if (errno == ENOENT)
        return 0;
      else if ((errno == ENOTEMPTY || errno == EEXIST) && remove_dir_named (rootfd, hidden, id, err) == 0
               && renameat (rootfd, id, rootfd, hidden) == 0)
        name = hidden;
      sbx_error_clear (err);
    }
  return remove_dir_named (rootfd, name, id, err);
}

/* The record of the cgroup a create has made (a path below each hierarchy's root),
 * in the state dir as soon as it exists: a create killed before it wrote state.json
 * leaves a half-created dir whose delete (or sweep) removes that cgroup too, which
 * nothing else names. Three syscalls: not fs_write_atomic's fsync on every run. */
#define CGROUP_RECORD "cgroup-path"

int
statedir_record_cgroup (int dirfd, const char *path, struct sbx_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, CGROUP_RECORD, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  size_t len = strlen (path);
  ssize_t n;
  if (fd < 0)
    return sbx_error_set (err, errno, "record the cgroup path");
  n = write (fd, path, len);
  if (n != (ssize_t) len)
    return sbx_error_set (err, n < 0 ? errno : EIO, "record the cgroup path");
  return 0;
}

/* A recorded path as the state's cgroup path would be: absolute, with no "." or ".."
   component (the record is ours, but it lies in a dir a delete trusts). */
static bool
recorded_path_plausible (const char *path)
{
  if (path[0] != '/')
    return false;
  for (const char *p = path; (p = strchr (p, '/')); p++)
    if ((p[1] == '.' && (p[2] == '/' || p[2] == '\0')) || (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0')))
      return false;
  return true;
}

void
statedir_remove_recorded_cgroup (int dirfd)
{
  char path[PATH_MAX];
  _cleanup_close_ int fd = openat (dirfd, CGROUP_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, path, sizeof path - 1) : -1;
  if (n <= 1)
    return;
  path[n] = '\0';
  /* never a kept cgroup (serve's slot: it outlives its containers) */
  if (memchr (path, '\0', (size_t) n) || !recorded_path_plausible (path) || cgroup_path_is_kept (path))
    return;
  cgroup_empty_and_remove (path);
}

/* A state dir a create or a delete that was killed left behind, which nothing else
 * will remove, whose lock no one holds: NAME a half-created dir (no state.json: its
 * create holds the lock from the first moment, claim_locked), "@deleting.ID" (a delete
 * that is still going on removes the same files: either one's ENOENT is no error), or
 * "@claim.RANDOM.ID" at least AGE seconds old (one that is new may not be locked yet).
 * A half-created dir's recorded cgroup goes with it; an "@" dir's record is never
 * acted on (a delete that got as far as the rename has dealt with its cgroup). What
 * is checked before the lock is checked again under it: a create may have finished,
 * or a delete renamed the dir, in between. */
bool
statedir_sweep_abandoned (int rootfd, const char *name, int age)
{
  struct stat st;
  struct sbx_error e = { 0 };
  bool hidden = name[0] == '@';
  _cleanup_close_ int dfd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dfd < 0 || fstat (dfd, &st) < 0)
    return false;
  if (strncmp (name, "@claim.", 7) == 0 && st.st_ctime > time (NULL) - age)
    return false;
  if (flock (dfd, LOCK_EX | LOCK_NB) < 0)
    return false;
  if (!statedir_still_named (rootfd, dfd, name))
    return false;
  if (!hidden)
    {
      if (!statedir_half_created (dfd))
        return false;
      statedir_remove_recorded_cgroup (dfd);
    }
  if (hidden ? remove_dir_named (rootfd, name, name, &e) < 0 : statedir_remove (rootfd, name, &e) < 0)
    {
      sbx_error_clear (&e);
      return false;
    }
  return true;
}

/* Does ID in rootfd still name the directory dirfd is open on? */
bool
statedir_still_named (int rootfd, int dirfd, const char *id)
{
  struct stat a, b;
  return fstatat (rootfd, id, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat (dirfd, &b) == 0 && a.st_dev == b.st_dev
         && a.st_ino == b.st_ino;
}

int
statedir_read_state (int dirfd, const char *id, struct sbx_state *s, struct sbx_error *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  /* state.json copies the config's annotations, which may be as large as a config. */
  if (json_read_file (dirfd, STATE_FILE, 2 * SBX_JSON_MAX_SIZE, &buf, &len, err) < 0)
    {
      if (err->errnum == ENOENT)
        {
          sbx_error_clear (err);
          return sbx_error_set (err, 0, "container %s is being created or was not set up completely "
                                        "(no state.json); `sbx-oci delete --force %s` removes it", id, id);
        }
      return -1;
    }
  return oci_state_parse (buf, len, s, err);
}

bool
statedir_half_created (int dirfd)
{
  return faccessat (dirfd, STATE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int
statedir_write_state (int dirfd, const struct sbx_state *s, struct sbx_error *err)
{
  size_t len = 0;
  _cleanup_free_ char *json = oci_state_file_json (s, &len);
  if (!json)
    return sbx_error_set (err, 0, "cannot serialise state.json");
  return fs_write_atomic (dirfd, STATE_FILE, json, len, 0600, err);
}

int
statedir_lock (int dirfd, struct sbx_error *err)
{
  if (flock (dirfd, LOCK_EX) < 0)
    return sbx_error_set (err, errno, "lock state dir");
  return 0;
}

uint64_t
proc_start_time_of (pid_t pid, bool zombie_ok)
{
  char path[64], buf[1024];
  _cleanup_close_ int fd = -1;
  ssize_t n;
  char *p;
  unsigned long long start = 0;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: parse from the last ')'. */
  p = strrchr (buf, ')');
  if (!p)
    return 0;
  /* After ") ": state(3) ppid(4) ... starttime(22): skip 19 fields after state. */
  {
    char state;
    int field = 0;
    p += 2;
    state = *p;
    if (state == 'X' || (state == 'Z' && !zombie_ok))
      return 0;
    while (*p && field < 19)
      {
        if (*p == ' ')
          field++;
        p++;
      }
    if (sscanf (p, "%llu", &start) != 1)
      return 0;
  }
  return start;
}

bool
state_init_alive (const struct sbx_state *s)
{
  uint64_t st;
  if (s->pid <= 0)
    return false;
  st = proc_start_time (s->pid);
  return st != 0 && st == s->init_start_time;
}

enum container_status
statedir_status (int dirfd, const struct sbx_state *s)
{
  struct stat st;
  if (!state_init_alive (s))
    return STATUS_STOPPED;
  if (cgroup_is_frozen (s))
    return STATUS_PAUSED;
  if (fstatat (dirfd, EXEC_FIFO, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return STATUS_CREATED;
  return STATUS_RUNNING;
}

/* A fresh id: PREFIX and 16 random hex digits. */
char *
statedir_generate_id (const char *prefix)
{
  unsigned char r[8] = { 0 };
  size_t plen = strlen (prefix);
  char *id = xmalloc0 (plen + 16 + 1);
  if (getrandom (r, sizeof r, 0) != sizeof r)
    {
      struct timespec ts;
      clock_gettime (CLOCK_MONOTONIC, &ts);
      memcpy (r, &ts.tv_nsec, sizeof ts.tv_nsec < sizeof r ? sizeof ts.tv_nsec : sizeof r);
      r[0] ^= (unsigned char) getpid ();
    }
  memcpy (id, prefix, plen);
  for (size_t i = 0; i < sizeof r; i++)
    sprintf (id + plen + i * 2, "%02x", r[i]);
  return id;
}
