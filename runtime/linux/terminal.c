#include "build-config.h"
#include "runtime/linux/terminal.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/linux/fs.h"
#include "runtime/linux/mountapi.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

int
terminal_connect_socket (const char *path, struct sbx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;
  if (strlen (path) >= sizeof addr.sun_path)
    return sbx_error_set (err, ENAMETOOLONG, "--console-socket %s", path);
  strcpy (addr.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sbx_error_set (err, errno, "--console-socket: socket");
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      int e = errno;
      close (fd);
      return sbx_error_set (err, e, "--console-socket: connect %s", path);
    }
  return fd;
}

static int
send_fd (int sock, int fd, const char *name, struct sbx_error *err)
{
  char cbuf[CMSG_SPACE (sizeof (int))] = { 0 };
  struct iovec iov = { .iov_base = (void *) name, .iov_len = strlen (name) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &fd, sizeof (int));
  if (sendmsg (sock, &msg, MSG_NOSIGNAL) < 0)
    return sbx_error_set (err, errno, "--console-socket: send the terminal");
  return 0;
}

int
terminal_receive_master (int sock, struct sbx_error *err)
{
  char name[64], cbuf[CMSG_SPACE (sizeof (int))] = { 0 };
  struct iovec iov = { .iov_base = name, .iov_len = sizeof name };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *c;
  int fd = -1;
  ssize_t n;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return sbx_error_set (err, errno, "process.terminal: receive the pty");
  c = CMSG_FIRSTHDR (&msg);
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN (sizeof (int)))
    memcpy (&fd, CMSG_DATA (c), sizeof fd);
  if (fd < 0)
    return sbx_error_set (err, 0, "process.terminal: the container did not send its pty");
  return fd;
}

int
terminal_setup (int rootfd, const struct oci_process *p, int socket_fd, bool bind_console, struct sbx_error *err)
{
  _cleanup_close_ int master = -1, slave = -1, console = -1, tree = -1;
  struct statfs sfs;
  struct stat st;
  int unlock = 0;
  char name[64];

  master = fs_open_in_root (rootfd, "/dev/pts/ptmx", O_RDWR | O_NOCTTY, err);
  if (master < 0)
    return sbx_error_wrap (err, "process.terminal: the container needs a devpts mount at /dev/pts");
  /* It must be the ptmx of a devpts instance, not something the rootfs put there. */
  if (fstatfs (master, &sfs) < 0 || sfs.f_type != DEVPTS_SUPER_MAGIC || fstat (master, &st) < 0
      || !S_ISCHR (st.st_mode) || major (st.st_rdev) != 5 || minor (st.st_rdev) != 2)
    return sbx_error_set (err, 0, "process.terminal: /dev/pts/ptmx is not the ptmx of a devpts mount");
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0)
    return sbx_error_set (err, errno, "process.terminal: unlock the pty");
  slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return sbx_error_set (err, errno, "process.terminal: open the pty slave");
  if (p->has_console_size)
    {
      struct winsize ws = { .ws_row = (unsigned short) p->console_height, .ws_col = (unsigned short) p->console_width };
      if (ioctl (slave, TIOCSWINSZ, &ws) < 0)
        return sbx_error_set (err, errno, "process.consoleSize");
    }
  if (bind_console)
    {
      /* /dev/console: the slave itself, bound onto a plain file we created (O_NOFOLLOW). */
      console = fs_mkfile_in_root_nofollow (rootfd, "/dev/console", err);
      if (console < 0)
        return sbx_error_wrap (err, "process.terminal");
      if (fstat (console, &st) < 0 || !S_ISREG (st.st_mode))
        return sbx_error_set (err, 0, "process.terminal: /dev/console in the container is not a regular file");
      tree = sys_open_tree (slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (tree < 0 || attach_mount (tree, console) < 0)
        return sbx_error_set (err, errno, "process.terminal: bind the pty onto /dev/console");
    }
  {
    int n = 0;
    if (ioctl (master, TIOCGPTN, &n) < 0)
      n = -1;
    snprintf (name, sizeof name, "/dev/pts/%d", n);
  }
  if (send_fd (socket_fd, master, name, err) < 0)
    return -1;
  return steal_fd (&slave);
}

int
terminal_attach (int slave, struct sbx_error *err)
{
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return sbx_error_set (err, errno, "process.terminal: make the pty the controlling terminal");
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (slave, fd) < 0)
      return sbx_error_set (err, errno, "process.terminal: dup2");
  if (slave > 2)
    close (slave);
  return 0;
}
