/* Options shared by `create` and `run` (runc's spellings, plus crun's --config). */
#ifndef SBX_CREATE_OPTS_H
#define SBX_CREATE_OPTS_H

#include <getopt.h>

#include "runtime/base/cli.h"
#include "runtime/container/container.h"

enum create_key
{
  CK_BUNDLE = 'b',
  CK_CONFIG = 'f',
  CK_DETACH = 'd',
  CK_PID_FILE = 256,
  CK_CONSOLE_SOCKET,
  CK_PRESERVE_FDS,
  CK_NO_PIVOT,
  CK_NO_NEW_KEYRING,
  CK_KEEP,
  CK_NO_SUBREAPER,
  CK_NOTIFY_SOCKET,
};

#define CREATE_CLI_OPTS                                                                                       \
  { "bundle", CK_BUNDLE, required_argument, "DIR", "bundle directory (default: the current directory)" },      \
      { "config", CK_CONFIG, required_argument, "FILE", "config file (default: BUNDLE/config.json)" },         \
      { "pid-file", CK_PID_FILE, required_argument, "FILE", "write the container process's pid to FILE" },     \
      { "console-socket", CK_CONSOLE_SOCKET, required_argument, "SOCK",                                        \
        "unix socket that receives the terminal's master fd" },                                               \
      { "preserve-fds", CK_PRESERVE_FDS, required_argument, "N", "pass fds 3..3+N-1 to the container" },     \
      { "no-pivot", CK_NO_PIVOT, no_argument, NULL, "use MS_MOVE + chroot instead of pivot_root (weaker)" }, \
      { "no-new-keyring", CK_NO_NEW_KEYRING, no_argument, NULL, "keep the caller's session keyring" },         \
      { "notify-socket", CK_NOTIFY_SOCKET, required_argument, "SOCK", NULL }

struct create_cli
{
  struct create_opts o;
  bool detach, keep;
};

int create_cli_opt (void *data, int key, const char *arg, struct sbx_error *err);

#endif
