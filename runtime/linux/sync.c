#include "build-config.h"
#include "runtime/linux/sync.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "runtime/base/util.h"

const char *
sync_type_name (enum sync_type type)
{
  static const char *const names[] = {
    [SYNC_GO] = "go",           [SYNC_MOUNTS_DONE] = "mounts-done", [SYNC_HOOKS_DONE] = "hooks-done",
    [SYNC_READY] = "ready",     [SYNC_COMMITTED] = "committed",     [SYNC_START] = "start",
    [SYNC_ERROR] = "error",     [SYNC_USERNS_CREATED] = "userns-created", [SYNC_MAPS_DONE] = "maps-done",
    [SYNC_INIT_PID] = "init-pid", [SYNC_COMMIT_ACK] = "commit-ack", [SYNC_IDMAP_FDS] = "idmap-fds",
    [SYNC_BIND_SOURCE] = "bind-source", [SYNC_BIND_SOURCE_FD] = "bind-source-fd",
    [SYNC_DEVICE_NODE] = "device-node", [SYNC_DEVICE_NODE_FD] = "device-node-fd",
    [SYNC_JOIN_FDS] = "join-fds",
  };
  if ((size_t) type < ARRAY_SIZE (names) && names[type])
    return names[type];
  return "unknown";
}

int
sync_socketpair (int fds[2], struct sbx_error *err)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
    return sbx_error_set (err, errno, "socketpair");
  return 0;
}

static int
send_msg (int fd, const struct sync_header *h, const void *payload)
{
  struct iovec iov[2] = { { (void *) h, sizeof *h }, { (void *) payload, h->len } };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = h->len ? 2 : 1 };
  ssize_t r;
  do
    r = sendmsg (fd, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -1 : 0;
}

int
sync_send (int fd, enum sync_type type, const void *payload, size_t len, struct sbx_error *err)
{
  struct sync_header h = { .type = type, .len = (uint32_t) len };
  if (len > SYNC_MAX_PAYLOAD)
    return sbx_error_set (err, EMSGSIZE, "sync %s", sync_type_name (type));
  if (send_msg (fd, &h, payload) < 0)
    return sbx_error_set (err, errno, "sync: send %s", sync_type_name (type));
  return 0;
}

void
sync_send_error (int fd, const struct sbx_error *e)
{
  struct sync_header h = { .type = SYNC_ERROR, .errnum = e->errnum, .exit_hint = e->exit_hint };
  const char *msg = e->msg ? e->msg : "unknown error";
  h.len = strnlen (msg, SYNC_MAX_PAYLOAD);
  (void) send_msg (fd, &h, msg);
}

static struct
{
  int fd;
  sync_server_fn fn;
  void *data;
} server = { -1, NULL, NULL };

void
sync_set_server (int fd, sync_server_fn fn, void *data)
{
  server.fd = fn ? fd : -1;
  server.fn = fn;
  server.data = data;
}

int
sync_expect (int fd, enum sync_type type, void *payload, size_t *len, struct sbx_error *err)
{
  struct sync_header h;
  char buf[SYNC_MAX_PAYLOAD + 1];
  struct iovec iov[2] = { { &h, sizeof h }, { buf, SYNC_MAX_PAYLOAD } };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
  ssize_t r;
again:
  do
    r = recvmsg (fd, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sbx_error_set (err, errno, "sync: waiting for %s", sync_type_name (type));
  if (r == 0)
    return sbx_error_set (err, 0, "the container process exited during setup (waiting for %s)",
                          sync_type_name (type));
  if ((size_t) r < sizeof h || h.len != (size_t) r - sizeof h || h.len > SYNC_MAX_PAYLOAD)
    return sbx_error_set (err, EPROTO, "sync: malformed message");
  buf[h.len] = '\0';
  if (h.type == SYNC_ERROR)
    {
      sbx_error_set (err, h.errnum, "%s", buf);
      err->exit_hint = h.exit_hint;
      return -1;
    }
  if (SYNC_IS_REQUEST (h.type) && type != h.type && server.fn && server.fd == fd)
    {
      if (server.fn (server.data, fd, &h, buf, err) < 0)
        return -1;
      goto again;
    }
  if (h.type != type)
    return sbx_error_set (err, EPROTO, "sync: expected %s, got %s", sync_type_name (type),
                          sync_type_name (h.type));
  if (payload && len)
    {
      size_t n = h.len < *len ? h.len : *len;
      memcpy (payload, buf, n);
      *len = n;
    }
  return 0;
}

int
sync_wait_exec (int fd, struct sbx_error *err)
{
  struct sync_header h;
  char buf[SYNC_MAX_PAYLOAD + 1];
  struct iovec iov[2] = { { &h, sizeof h }, { buf, SYNC_MAX_PAYLOAD } };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
  ssize_t r;
  do
    r = recvmsg (fd, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    return 0;
  if (r < 0)
    return sbx_error_set (err, errno, "sync: waiting for exec");
  if ((size_t) r < sizeof h || h.len != (size_t) r - sizeof h || h.type != SYNC_ERROR)
    return sbx_error_set (err, EPROTO, "sync: unexpected message while waiting for exec");
  buf[h.len] = '\0';
  sbx_error_set (err, h.errnum, "%s", buf);
  err->exit_hint = h.exit_hint;
  return -1;
}

int
sync_send_fds (int fd, enum sync_type type, const int *fds, size_t n, struct sbx_error *err)
{
  struct sync_header h = { .type = type, .len = 0 };
  char cbuf[CMSG_SPACE (sizeof (int) * SYNC_MAX_FDS)] = { 0 };
  struct iovec iov = { &h, sizeof h };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  ssize_t r;
  if (n > SYNC_MAX_FDS)
    return sbx_error_set (err, EMSGSIZE, "sync: too many fds");
  if (n > 0)
    {
      struct cmsghdr *c;
      msg.msg_control = cbuf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n);
      c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * n);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * n);
    }
  do
    r = sendmsg (fd, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sbx_error_set (err, errno, "sync: send %s", sync_type_name (type));
  return 0;
}

int
sync_expect_fds (int fd, enum sync_type type, int *fds, size_t *n, struct sbx_error *err)
{
  struct sync_header h;
  char buf[SYNC_MAX_PAYLOAD + 1];
  char cbuf[CMSG_SPACE (sizeof (int) * SYNC_MAX_FDS)];
  struct iovec iov[2] = { { &h, sizeof h }, { buf, SYNC_MAX_PAYLOAD } };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  size_t got = 0;
  ssize_t r;
  do
    r = recvmsg (fd, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sbx_error_set (err, errno, "sync: waiting for %s", sync_type_name (type));
  if (r == 0)
    return sbx_error_set (err, 0, "the runtime went away during setup (waiting for %s)", sync_type_name (type));
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < k; i++)
          {
            int one;
            memcpy (&one, CMSG_DATA (c) + i * sizeof (int), sizeof (int));
            if (got < *n)
              fds[got++] = one;
            else
              close (one);
          }
      }
  if ((size_t) r < sizeof h || h.type != type)
    {
      for (size_t i = 0; i < got; i++)
        close (fds[i]);
      if ((size_t) r >= sizeof h && h.type == SYNC_ERROR)
        {
          buf[h.len < SYNC_MAX_PAYLOAD ? h.len : SYNC_MAX_PAYLOAD] = '\0';
          return sbx_error_set (err, h.errnum, "%s", buf);
        }
      return sbx_error_set (err, EPROTO, "sync: expected %s", sync_type_name (type));
    }
  *n = got;
  return 0;
}
