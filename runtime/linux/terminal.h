/* process.terminal: a pty from the container's own devpts instance. The parent
 * connects to --console-socket; the init opens ptmx inside the root (checked to be the
 * devpts ptmx), gets the slave with TIOCGPTPEER (no path lookup a rootfs could
 * redirect, CVE-2025-52565), binds it onto /dev/console, applies consoleSize, and sends
 * the master over the socket (SCM_RIGHTS), as runc and crun do. */
#ifndef SBX_TERMINAL_H
#define SBX_TERMINAL_H

#include "oci/config.h"
#include "runtime/base/error.h"

/* Parent: connect to the console socket; returns the connected fd. */
int terminal_connect_socket (const char *path, struct sbx_error *err);
/* Parent, without a console socket: the master the init sent on our end of the
 * socketpair it was given as its console socket. */
int terminal_receive_master (int sock, struct sbx_error *err);
/* Make the pty, hand the master over; returns the slave fd. The init binds the
 * slave onto /dev/console (bind_console); an exec'd process only gets its own pty. */
int terminal_setup (int rootfd, const struct oci_process *p, int socket_fd, bool bind_console, struct sbx_error *err);
/* Init, right before exec: make the slave the controlling terminal and stdio. */
int terminal_attach (int slave, struct sbx_error *err);

#endif
