/* probe: a tiny static multi-call helper run inside test containers, so tests can
 * ask precise questions the busybox applets answer vaguely (which errno? which
 * fds are open?). Output is one line per answer, easy to match in bats.
 *
 *   probe fds                  open fds other than 0-2, as "N -> target"
 *   probe write PATH           "ok" or the errno name of open(PATH, O_WRONLY|O_CREAT)
 *   probe read PATH            number of bytes read, or the errno name
 *   probe stat PATH            "<type> <major>:<minor> <mode> <uid>:<gid>" (lstat)
 *   probe cwd                  getcwd() or the errno name
 *   probe umask                the umask in octal
 *   probe rlimit NAME          "<soft> <hard>" (NOFILE, NPROC, CORE, ...)
 *   probe ids                  "uid=.. gid=.. groups=a,b"
 *   probe exec PATH            "ok" never printed: execs PATH, or prints the errno name
 *   probe mknod PATH           "ok" or the errno name of mknod(c 1:3)
 *   probe unshare-user         "ok" or the errno name of unshare(CLONE_NEWUSER)
 *   probe kill-self SIG        raise(SIG) (a test for 128+N exit statuses)
 *   probe exe-write PID        try to open /proc/PID/exe for writing: "ok" or errno name
 *   probe memhog MB            allocate and touch MB megabytes, print "allocated" (or die)
 *   probe forkloop N           fork up to N children that sleep; print "forked K: errno"
 *   probe spin SECONDS         burn CPU for SECONDS of wall time
 *   probe counter FILE         write an increasing counter to FILE every 10 ms, forever
 *   probe syscall NAME [A...]  call NAME with args A (numbers; default: -1 for each, so fds are
 *                              invalid and pointers bad) and print the errno name or "ok": the
 *                              bubblewrap try-syscall idea: EPERM/ENOSYS = a filter answered,
 *                              EBADF/EFAULT/EINVAL = the kernel was reached
 *   probe syscall-nr N [A...]  the same by number
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *
errname (int e)
{
  switch (e)
    {
#define E(x)                                                                                                   \
  case x:                                                                                                      \
    return #x
      E (EPERM); E (ENOENT); E (EACCES); E (EROFS); E (EBADF); E (EEXIST); E (ENOTDIR); E (EISDIR);
      E (EINVAL); E (ENOSPC); E (EFAULT); E (ENOSYS); E (ELOOP); E (ETXTBSY); E (EXDEV); E (ENXIO);
      E (EBUSY); E (EAGAIN); E (ENODEV); E (EOPNOTSUPP); E (EFBIG); E (EMFILE); E (ESRCH);
      E (ENETDOWN); E (ENOTTY); E (E2BIG); E (ENOMSG); E (EAFNOSUPPORT); E (ENETUNREACH); E (ECONNREFUSED);
#undef E
    default:
      return "EOTHER";
    }
}

static const struct
{
  const char *name;
  long nr;
} syscalls[] = {
#define S(n) { #n, SYS_##n }
  S (read), S (write), S (openat), S (close), S (getpid), S (getppid), S (ioctl), S (mount), S (umount2),
  S (unshare), S (setns), S (keyctl), S (add_key), S (request_key), S (bpf), S (perf_event_open), S (ptrace),
  S (process_vm_readv), S (process_vm_writev), S (kexec_load), S (kexec_file_load), S (init_module),
  S (finit_module), S (delete_module), S (reboot), S (swapon), S (swapoff), S (clock_settime),
  S (settimeofday), S (sethostname), S (setdomainname), S (acct), S (quotactl), S (io_uring_setup),
  S (io_uring_enter), S (io_uring_register), S (userfaultfd), S (fsopen), S (fsconfig), S (fsmount),
  S (fspick), S (move_mount), S (open_tree), S (mount_setattr), S (pivot_root), S (chroot),
  S (open_by_handle_at), S (name_to_handle_at), S (clone), S (clone3), S (personality), S (socket),
  S (kill), S (getcwd), S (syslog), S (vhangup), S (kcmp), S (pidfd_getfd), S (lookup_dcookie),
  S (modify_ldt), S (uselib), S (ustat), S (sysfs), S (mbind), S (set_mempolicy), S (migrate_pages),
  S (move_pages), S (quotactl_fd), S (fanotify_init), S (iopl), S (ioperm), S (nfsservctl), S (mknod),
  S (uname), S (getrandom), S (statx), S (landlock_create_ruleset), S (memfd_secret), S (futex_waitv),
  S (setresuid), S (setresgid), S (setgroups), S (capset), S (prctl), S (chdir),
#undef S
};

static int
fail (void)
{
  printf ("%s\n", errname (errno));
  return 1;
}

static int
cmd_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *de;
  int self;
  if (!d)
    return fail ();
  self = dirfd (d);
  while ((de = readdir (d)))
    {
      char path[64], target[PATH_MAX];
      int fd = atoi (de->d_name);
      ssize_t n;
      if (de->d_name[0] == '.' || fd <= 2 || fd == self)
        continue;
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      n = readlink (path, target, sizeof target - 1);
      target[n > 0 ? n : 0] = '\0';
      printf ("%d -> %s\n", fd, target);
    }
  closedir (d);
  return 0;
}

static const struct
{
  const char *name;
  int res;
} rlimits[] = { { "NOFILE", RLIMIT_NOFILE }, { "NPROC", RLIMIT_NPROC }, { "CORE", RLIMIT_CORE },
                { "FSIZE", RLIMIT_FSIZE },   { "CPU", RLIMIT_CPU },     { "AS", RLIMIT_AS },
                { "STACK", RLIMIT_STACK },   { "MEMLOCK", RLIMIT_MEMLOCK } };

int
main (int argc, char **argv)
{
  const char *cmd = argc > 1 ? argv[1] : "";
  const char *arg = argc > 2 ? argv[2] : "";
  struct stat st;
  if (strcmp (cmd, "fds") == 0)
    return cmd_fds ();
  if (strcmp (cmd, "write") == 0)
    {
      int fd = open (arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0)
        return fail ();
      printf ("ok\n");
      return 0;
    }
  if (strcmp (cmd, "read") == 0)
    {
      char buf[65536];
      long total = 0;
      ssize_t n;
      int fd = open (arg, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return fail ();
      while ((n = read (fd, buf, sizeof buf)) > 0)
        total += n;
      if (n < 0)
        return fail ();
      printf ("%ld\n", total);
      return 0;
    }
  if (strcmp (cmd, "stat") == 0)
    {
      const char *type;
      if (lstat (arg, &st) < 0)
        return fail ();
      type = S_ISCHR (st.st_mode) ? "char" : S_ISBLK (st.st_mode) ? "block" : S_ISDIR (st.st_mode) ? "dir"
             : S_ISLNK (st.st_mode) ? "link" : S_ISFIFO (st.st_mode) ? "fifo" : S_ISREG (st.st_mode) ? "file" : "other";
      printf ("%s %u:%u %04o %u:%u\n", type, major (st.st_rdev), minor (st.st_rdev), st.st_mode & 07777, st.st_uid,
              st.st_gid);
      return 0;
    }
  if (strcmp (cmd, "cwd") == 0)
    {
      char buf[PATH_MAX];
      if (!getcwd (buf, sizeof buf))
        return fail ();
      printf ("%s\n", buf);
      return 0;
    }
  if (strcmp (cmd, "umask") == 0)
    {
      mode_t m = umask (0);
      printf ("%04o\n", m);
      return 0;
    }
  if (strcmp (cmd, "rlimit") == 0)
    {
      for (size_t i = 0; i < sizeof rlimits / sizeof rlimits[0]; i++)
        if (strcmp (rlimits[i].name, arg) == 0)
          {
            struct rlimit rl;
            getrlimit (rlimits[i].res, &rl);
            printf ("%llu %llu\n", (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max);
            return 0;
          }
      return 2;
    }
  if (strcmp (cmd, "ids") == 0)
    {
      gid_t groups[64];
      int n = getgroups (64, groups);
      printf ("uid=%u gid=%u groups=", getuid (), getgid ());
      for (int i = 0; i < n; i++)
        printf ("%s%u", i ? "," : "", groups[i]);
      printf ("\n");
      return 0;
    }
  if (strcmp (cmd, "exec") == 0)
    {
      execv (arg, argv + 2);
      return fail ();
    }
  if (strcmp (cmd, "mknod") == 0)
    {
      if (mknod (arg, S_IFCHR | 0666, makedev (1, 3)) < 0)
        return fail ();
      printf ("ok\n");
      return 0;
    }
  if (strcmp (cmd, "unshare-user") == 0)
    {
      if (unshare (CLONE_NEWUSER) < 0)
        return fail ();
      printf ("ok\n");
      return 0;
    }
  if (strcmp (cmd, "kill-self") == 0)
    {
      signal (atoi (arg), SIG_DFL);
      raise (atoi (arg));
      return 99;
    }
  if (strcmp (cmd, "exe-write") == 0)
    {
      char path[64];
      int fd;
      snprintf (path, sizeof path, "/proc/%s/exe", arg);
      fd = open (path, O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        return fail ();
      printf ("ok\n");
      return 0;
    }
  if (strcmp (cmd, "syscall") == 0 || strcmp (cmd, "syscall-nr") == 0)
    {
      long nr = -1, a[6] = { -1, -1, -1, -1, -1, -1 };
      if (strcmp (cmd, "syscall-nr") == 0)
        nr = strtol (arg, NULL, 0);
      else
        for (size_t i = 0; i < sizeof syscalls / sizeof syscalls[0]; i++)
          if (strcmp (syscalls[i].name, arg) == 0)
            nr = syscalls[i].nr;
      if (nr < 0)
        {
          fprintf (stderr, "probe: unknown syscall %s\n", arg);
          return 2;
        }
      for (int i = 0; i < 6 && i + 3 < argc; i++)
        a[i] = strtol (argv[i + 3], NULL, 0);
      errno = 0;
      if (syscall (nr, a[0], a[1], a[2], a[3], a[4], a[5]) < 0)
        return fail ();
      printf ("ok\n");
      return 0;
    }
  if (strcmp (cmd, "memhog") == 0)
    {
      long mb = atol (arg);
      for (long i = 0; i < mb; i++)
        {
          char *p = malloc (1 << 20);
          if (!p)
            return fail ();
          memset (p, 1, 1 << 20);
        }
      printf ("allocated\n");
      return 0;
    }
  if (strcmp (cmd, "forkloop") == 0)
    {
      long n = atol (arg), k = 0;
      for (; k < n; k++)
        {
          pid_t pid = fork ();
          if (pid < 0)
            break;
          if (pid == 0)
            {
              sleep (30);
              _exit (0);
            }
        }
      printf ("forked %ld: %s\n", k, k < n ? errname (errno) : "none");
      fflush (stdout);
      kill (0, SIGKILL);
      return 0;
    }
  if (strcmp (cmd, "spin") == 0)
    {
      time_t end = time (NULL) + atol (arg);
      volatile unsigned long x = 0;
      while (time (NULL) < end)
        x++;
      return 0;
    }
  if (strcmp (cmd, "counter") == 0)
    {
      for (unsigned long i = 0;; i++)
        {
          FILE *f = fopen (arg, "w");
          if (f)
            {
              fprintf (f, "%lu\n", i);
              fclose (f);
            }
          usleep (10000);
        }
    }
  fprintf (stderr, "probe: unknown command '%s'\n", cmd);
  return 2;
}
