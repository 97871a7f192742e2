/* seccomp-agent SOCKET ERRNO: the test side of linux.seccomp.listenerPath. Accepts one
 * connection, prints the container process state JSON it receives with the listener
 * fd, then answers every notified syscall with -ERRNO and prints "notified <nr>". */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  char buf[65536] = { 0 }, cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { buf, sizeof buf - 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  int ls, conn, fd = -1, answer;
  ssize_t n;
  if (argc < 3)
    return 2;
  answer = atoi (argv[2]);
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", argv[1]);
  unlink (argv[1]);
  ls = socket (AF_UNIX, SOCK_STREAM, 0);
  if (ls < 0 || bind (ls, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (ls, 1) < 0)
    return perror ("agent: listen"), 1;
  conn = accept (ls, NULL, NULL);
  n = recvmsg (conn, &msg, 0);
  if (n <= 0)
    return perror ("agent: recvmsg"), 1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (&fd, CMSG_DATA (c), sizeof (int));
  /* the runtime closes the connection after one state */
  printf ("state: %s\n", buf);
  printf ("eof-after-state: %s\n", read (conn, buf, 1) == 0 ? "yes" : "no");
  fflush (stdout);
  if (fd < 0)
    return fprintf (stderr, "agent: no fd\n"), 1;
  for (;;)
    {
      struct seccomp_notif req = { 0 };
      struct seccomp_notif_resp resp = { 0 };
      if (ioctl (fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        break; /* the container is gone */
      resp.id = req.id;
      resp.error = -answer;
      printf ("notified %d\n", req.data.nr);
      fflush (stdout);
      ioctl (fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
  return 0;
}
