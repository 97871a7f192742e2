/* The D-Bus connection to systemd's manager (systemd_bus.h): libdbus-1, a private
 * connection (never the process-wide shared one), blocking calls with a deadline. */
#include "build-config.h"
#include "runtime/cgroup/systemd_bus.h"

#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/util.h"
#include "runtime/cgroup/bus_identity.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
/* How long a call or a job may take: runc waits 30 s for a unit's start job too. */
#define SD_TIMEOUT_MS 30000

struct sd_bus_conn
{
  DBusConnection *conn;
  bool user;
};

static char *
user_bus_address (void)
{
  const char *env = getenv ("DBUS_SESSION_BUS_ADDRESS");
  const char *dir = getenv ("XDG_RUNTIME_DIR");
  if (env && *env)
    return xstrdup (env);
  if (dir && *dir == '/')
    return xasprintf ("unix:path=%s/bus", dir);
  /* the user's, as the host knows them (bus_identity.c): not /run/user/0 for uid 0 of
     rootless podman's user namespace */
  return xasprintf ("unix:path=/run/user/%u/bus", (unsigned) bus_identity_uid ());
}

bool
sd_manager_running (bool user)
{
  if (!user)
    return access ("/run/systemd/system", F_OK) == 0;
  _cleanup_free_ char *addr = user_bus_address ();
  /* only a plain socket path can be checked without connecting */
  if (strncmp (addr, "unix:path=", 10) != 0)
    return true;
  return access (addr + 10, F_OK) == 0;
}

static int
bus_error (struct sbx_error *err, DBusError *e, const char *what)
{
  sbx_error_set (err, 0, "%s: %s", what, e->message ? e->message : e->name ? e->name : "failed");
  dbus_error_free (e);
  return -1;
}

struct sd_bus_conn *
sd_bus_connect (bool user, struct sbx_error *err)
{
  DBusError e;
  _cleanup_free_ char *addr = NULL;
  const char *sys = getenv ("DBUS_SYSTEM_BUS_ADDRESS");
  struct sd_bus_conn *c;
  dbus_error_init (&e);
  addr = user ? user_bus_address () : xstrdup (sys && *sys ? sys : "unix:path=/run/dbus/system_bus_socket");
  /* libdbus would otherwise set SIGPIPE to SIG_IGN, which exec keeps: the container's
     processes would inherit it. */
  dbus_connection_set_change_sigpipe (FALSE);
  c = xmalloc0 (sizeof *c);
  c->user = user;
  c->conn = dbus_connection_open_private (addr, &e);
  if (!c->conn)
    {
      free (c);
      bus_error (err, &e, user ? "connect to the user's D-Bus" : "connect to the system D-Bus");
      return NULL;
    }
  dbus_connection_set_exit_on_disconnect (c->conn, FALSE);
  if (!dbus_bus_register (c->conn, &e))
    {
      bus_error (err, &e, "D-Bus Hello");
      sd_bus_close (c);
      return NULL;
    }
  /* Before any job is started, so that no JobRemoved can be missed. */
  dbus_bus_add_match (c->conn,
                      "type='signal',sender='" SD_DEST "',path='" SD_PATH "',interface='" SD_MANAGER
                      "',member='JobRemoved'",
                      &e);
  if (dbus_error_is_set (&e))
    {
      bus_error (err, &e, "D-Bus AddMatch for systemd's JobRemoved");
      sd_bus_close (c);
      return NULL;
    }
  return c;
}

void
sd_bus_close (struct sd_bus_conn *c)
{
  if (!c)
    return;
  dbus_connection_close (c->conn);
  dbus_connection_unref (c->conn);
  free (c);
}

static long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The JobRemoved signal of JOB (it may already be queued: it can come before the
   reply that named the job). */
static int
wait_job (struct sd_bus_conn *c, const char *method, const char *job, struct sbx_error *err)
{
  long deadline = now_ms () + SD_TIMEOUT_MS;
  for (;;)
    {
      DBusMessage *m;
      while ((m = dbus_connection_pop_message (c->conn)))
        {
          dbus_uint32_t id;
          const char *path = NULL, *unit = NULL, *result = NULL;
          bool ours = dbus_message_is_signal (m, SD_MANAGER, "JobRemoved")
                      && dbus_message_get_args (m, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_OBJECT_PATH, &path,
                                                DBUS_TYPE_STRING, &unit, DBUS_TYPE_STRING, &result, DBUS_TYPE_INVALID)
                      && strcmp (path, job) == 0;
          int ret = 0;
          if (ours && strcmp (result, "done") != 0)
            ret = sbx_error_set (err, 0, "systemd %s of %s: the job ended '%s' (journalctl -u %s)", method, unit,
                                 result, unit);
          dbus_message_unref (m);
          if (ours)
            return ret;
        }
      long left = deadline - now_ms ();
      if (left <= 0)
        return sbx_error_set (err, ETIMEDOUT, "systemd %s: its job %s did not end within %d s", method, job,
                              SD_TIMEOUT_MS / 1000);
      if (!dbus_connection_read_write (c->conn, (int) left))
        return sbx_error_set (err, ECONNRESET, "systemd %s: the D-Bus connection closed while waiting for its job",
                              method);
    }
}

int
sd_manager_call (struct sd_bus_conn *c, const char *method, sd_fill_fn fill, const void *data, bool wait_job_,
                 bool *no_such_unit, struct sbx_error *err)
{
  DBusError e;
  DBusMessageIter args;
  DBusMessage *reply;
  _cleanup_free_ char *job = NULL;
  DBusMessage *m = dbus_message_new_method_call (SD_DEST, SD_PATH, SD_MANAGER, method);
  if (!m)
    abort (); /* out of memory, as xmalloc */
  dbus_error_init (&e);
  dbus_message_iter_init_append (m, &args);
  if (fill && fill (&args, data, err) < 0)
    {
      dbus_message_unref (m);
      return -1;
    }
  reply = dbus_connection_send_with_reply_and_block (c->conn, m, SD_TIMEOUT_MS, &e);
  dbus_message_unref (m);
  if (!reply)
    {
      if (no_such_unit && (dbus_error_has_name (&e, "org.freedesktop.systemd1.NoSuchUnit")
                           || dbus_error_has_name (&e, "org.freedesktop.systemd1.NoSuchJob")))
        {
          *no_such_unit = true;
          dbus_error_free (&e);
          return 0;
        }
      char what[96];
      snprintf (what, sizeof what, "systemd %s", method);
      return bus_error (err, &e, what);
    }
  if (wait_job_)
    {
      const char *path = NULL;
      if (!dbus_message_get_args (reply, &e, DBUS_TYPE_OBJECT_PATH, &path, DBUS_TYPE_INVALID))
        {
          dbus_message_unref (reply);
          return bus_error (err, &e, "systemd's reply names no job");
        }
      job = xstrdup (path);
    }
  dbus_message_unref (reply);
  return job ? wait_job (c, method, job, err) : 0;
}
