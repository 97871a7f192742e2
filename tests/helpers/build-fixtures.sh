#!/bin/bash
# Builds the test fixtures once: a rootfs of Debian's busybox-static with its applet
# links, plus the static probe helper. Rebuilt when the sources are newer.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
busybox=/bin/busybox # Debian's busybox-static: no shared libraries needed in the rootfs
if [ ! -x "$busybox" ] || ! "$busybox" --list >/dev/null 2>&1 || ldd "$busybox" >/dev/null 2>&1; then
	echo "build-fixtures: busybox-static is needed (apt-get install busybox-static)" >&2
	exit 1
fi
stamp=$out/.stamp
if [ -f "$stamp" ] && [ "$stamp" -nt "$here/probe.c" ] && [ "$stamp" -nt "$here/recvtty.c" ] && [ "$stamp" -nt "$here/seccomp-agent.c" ] && [ "$stamp" -nt "$0" ]; then
	exit 0
fi
rm -rf "$out"
mkdir -p "$out/rootfs"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,root,work}
cp "$busybox" "$out/rootfs/bin/busybox"
for applet in $("$busybox" --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$out/rootfs/bin/$applet"
done
gcc -O2 -static -Wall -o "$out/rootfs/bin/probe" "$here/probe.c"
gcc -O2 -Wall -o "$out/recvtty" "$here/recvtty.c"
gcc -O2 -Wall -o "$out/seccomp-agent" "$here/seccomp-agent.c"
echo "root:x:0:0:root:/root:/bin/sh" >"$out/rootfs/etc/passwd"
echo "root:x:0:" >"$out/rootfs/etc/group"
chmod 1777 "$out/rootfs/tmp"
touch "$stamp"
