#include "build-config.h"
#include "runtime/linux/landlock.h"

#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/util.h"

/* Our own copies: Debian 12's linux/landlock.h stops at ABI 2. */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__ ((packed));

/* Rights that make sense on a file (the kernel refuses directory rights there). */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

static uint64_t
handled_fs (int abi)
{
  uint64_t all = (1ULL << 13) - 1; /* ABI 1: execute .. make_sym */
  if (abi >= 2)
    all |= LL_FS_REFER;
  if (abi >= 3)
    all |= LL_FS_TRUNCATE;
  if (abi >= 5)
    all |= LL_FS_IOCTL_DEV;
  return all;
}

int
landlock_abi (void)
{
  long v = syscall (SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : (int) v;
}

static const struct
{
  const char *key;
  uint64_t access; /* masked by what the ABI handles */
} classes[] = {
  { "read", LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE },
  { "write-files", LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV },
  { "write", ~0ULL },
};

static int
add_paths (struct landlock_plan *p, const char *key, const char *value, uint64_t access, struct sbx_error *err)
{
  _cleanup_free_ char *copy = xstrdup (value);
  char *save = NULL;
  for (char *path = strtok_r (copy, ":", &save); path; path = strtok_r (NULL, ":", &save))
    {
      if (path[0] != '/')
        return sbx_error_set (err, 0, "annotations.%s: '%s' is not an absolute path", key, path);
      p->rules = xrealloc (p->rules, (p->n_rules + 1) * sizeof *p->rules);
      p->rules[p->n_rules++] = (struct landlock_rule) { xstrdup (path), access };
    }
  return 0;
}

int
landlock_plan_build (const struct oci_config *c, struct sbx_log *log, struct landlock_plan *p,
                     struct sbx_error *err)
{
  const char *best = oci_config_annotation (c, LANDLOCK_ANNOTATION_PREFIX "best-effort");
  bool asked = false;
  int abi;
  memset (p, 0, sizeof *p);
  for (size_t i = 0; i < ARRAY_SIZE (classes); i++)
    {
      _cleanup_free_ char *key = xasprintf (LANDLOCK_ANNOTATION_PREFIX "%s", classes[i].key);
      const char *v = oci_config_annotation (c, key);
      if (!v)
        continue;
      asked = true;
      if (add_paths (p, key, v, classes[i].access, err) < 0)
        return -1;
    }
  if (best && strcmp (best, "true") != 0 && strcmp (best, "false") != 0)
    return sbx_error_set (err, 0, "annotations." LANDLOCK_ANNOTATION_PREFIX "best-effort: '%s' is not true or false",
                          best);
  if (!asked)
    return 0;
  abi = landlock_abi ();
  if (abi == 0)
    {
      if (best && strcmp (best, "true") == 0)
        {
          sbx_log_write (log, SBX_LOG_WARNING, "Landlock was asked for (best effort) but this kernel has none: "
                                               "running without it");
          landlock_plan_free (p);
          return 0;
        }
      return sbx_error_set (err, ENOSYS, "annotations." LANDLOCK_ANNOTATION_PREFIX "*: this kernel has no Landlock "
                                         "(set " LANDLOCK_ANNOTATION_PREFIX "best-effort to \"true\" to run without it)");
    }
  p->abi = abi;
  for (size_t i = 0; i < p->n_rules; i++)
    p->rules[i].access &= handled_fs (abi);
  return 0;
}

int
landlock_apply (const struct landlock_plan *p, struct sbx_error *err)
{
  struct ll_ruleset_attr attr = { .handled_access_fs = handled_fs (p->abi) };
  size_t attr_size = sizeof attr.handled_access_fs;
  _cleanup_close_ int ruleset = -1;
  if (p->abi == 0)
    return 0;
  if (p->abi >= 6)
    {
      /* No abstract unix socket and no signal across the sandbox's edge: with the
         host's network namespace, abstract sockets are otherwise the host's. */
      attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
      attr_size = sizeof attr;
    }
  ruleset = (int) syscall (SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (ruleset < 0)
    return sbx_error_set (err, errno, "Landlock: create the ruleset (ABI %d)", p->abi);
  for (size_t i = 0; i < p->n_rules; i++)
    {
      struct ll_path_beneath_attr rule = { .allowed_access = p->rules[i].access };
      _cleanup_close_ int fd = open (p->rules[i].path, O_PATH | O_CLOEXEC);
      struct stat st;
      if (fd < 0 || fstat (fd, &st) < 0)
        return sbx_error_set (err, errno, "Landlock: %s", p->rules[i].path);
      if (!S_ISDIR (st.st_mode))
        rule.allowed_access &= LL_FILE_RIGHTS;
      rule.parent_fd = fd;
      if (syscall (SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) < 0)
        return sbx_error_set (err, errno, "Landlock: rule for %s", p->rules[i].path);
    }
  if (syscall (SYS_landlock_restrict_self, ruleset, 0) < 0)
    return sbx_error_set (err, errno, "Landlock: restrict");
  return 0;
}

void
landlock_plan_free (struct landlock_plan *p)
{
  for (size_t i = 0; i < p->n_rules; i++)
    free (p->rules[i].path);
  free (p->rules);
  memset (p, 0, sizeof *p);
}
