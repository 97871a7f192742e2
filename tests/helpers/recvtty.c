/* recvtty SOCKET [INPUT]: the test side of --console-socket. Listens on SOCKET,
 * receives the pty master sent by the runtime, writes INPUT to it, then copies
 * everything the container writes to the terminal to stdout until it closes.
 * Prints "name: <what the runtime sent>" first. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int ls, conn, master = -1;
  char name[256] = { 0 }, cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { name, sizeof name - 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *c;
  if (argc < 2)
    return 2;
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", argv[1]);
  unlink (argv[1]);
  ls = socket (AF_UNIX, SOCK_STREAM, 0);
  if (ls < 0 || bind (ls, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (ls, 1) < 0)
    {
      perror ("recvtty: listen");
      return 1;
    }
  printf ("listening\n");
  fflush (stdout);
  conn = accept (ls, NULL, NULL);
  if (conn < 0 || recvmsg (conn, &msg, 0) < 0)
    {
      perror ("recvtty: receive");
      return 1;
    }
  for (c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (&master, CMSG_DATA (c), sizeof (int));
  if (master < 0)
    {
      fprintf (stderr, "recvtty: no fd received\n");
      return 1;
    }
  printf ("name: %s\n", name);
  fflush (stdout);
  if (argc > 2 && write (master, argv[2], strlen (argv[2])) < 0)
    perror ("recvtty: write");
  for (;;)
    {
      char buf[4096];
      ssize_t n = read (master, buf, sizeof buf);
      if (n <= 0)
        break; /* EIO once the last slave fd is closed */
      fwrite (buf, 1, n, stdout);
      fflush (stdout);
    }
  return 0;
}
