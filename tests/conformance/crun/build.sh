#!/bin/bash
# build.sh OUTDIR: prepares crun's Python test suite, from Debian's crun source package
# (the crun release Debian ships: 1.8.1 on bookworm), to run against any OCI runtime:
#   OUTDIR/crun/          the unpacked source (the suite's cwd); never copied
#                         into this repository
#   OUTDIR/config.h       what crun's configure would say, for tests/init.c
#   OUTDIR/init           tests/init.c built statically: it is copied into each rootfs,
#                         which has no libc
#   OUTDIR/crun-hybrid    tests/bench/crun-hybrid.c, and OUTDIR/crun-reference, a wrapper
#                         running the host's crun through it: crun 1.8 refuses hybrid
#                         cgroup hosts, and a reference run needs it (see run.sh)
#   OUTDIR/runc-reference the host's runc behind runc-reference.sh, which spells crun's
#                         options (--cgroup-manager, --config) as runc does
# The source comes through contrib/debian-source.sh (a private apt state; /etc/apt is
# not changed) into $SBX_CACHE/debian-src (default /var/cache/sbx-oci), which keeps
# the download for later runs and clones; the version the archive serves decides
# whether OUTDIR is unpacked again. Offline, the newest download in the cache is used.
# The libmount stand-in and sitecustomize.py stay in this directory; run.sh puts it on
# PYTHONPATH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=${SBX_CACHE:-/var/cache/sbx-oci}/debian-src

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
mkdir -p "$out" "$cache"
out=$(cd "$out" && pwd)

# The version the archive serves now, else the newest already downloaded.
version=$("$top/contrib/debian-source.sh" versions "$cache/apt" crun || true)
dsc=
if [ -n "$version" ]; then
	dsc=$cache/crun/crun_${version#*:}.dsc
	[ -f "$dsc" ] || "$top/contrib/debian-source.sh" download "$cache/apt" "$cache/crun" "crun=$version"
elif compgen -G "$cache/crun/crun_*.dsc" >/dev/null; then
	dsc=$(printf '%s\n' "$cache"/crun/crun_*.dsc | sort -V | tail -1)
	echo "build.sh: Debian's archive did not answer; using $dsc" >&2
fi
if [ -z "$dsc" ] || [ ! -f "$dsc" ]; then
	echo "build.sh: no crun source package (Debian's archive: see $cache/apt/update.log)" >&2
	exit 1
fi

# Unpacked again only when the source package changed: the stamp names the .dsc, and
# a half-done unpack (no stamp) is thrown away rather than trusted. dpkg-source applies
# Debian's patches (none of bookworm's touches tests/).
stamp=$out/crun/.unpacked-from
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(basename "$dsc")" ]; then
	rm -rf --one-file-system "$out/crun" "$out/crun.partial"
	dpkg-source --no-check -x "$dsc" "$out/crun.partial" >/dev/null
	mv "$out/crun.partial" "$out/crun"
	basename "$dsc" >"$stamp"
	rm -f "$out/init"
fi

# crun's configure defines these for init.c: HAVE_SECCOMP enables its seccomp-listener
# feature probe (the suite skips the listener tests when the probe fails), the other
# two pick the real ioprio and error() over its fallbacks.
# gcc prints the bare name back when it has no such library.
seccomp_a=$(gcc -print-file-name=libseccomp.a)
seccomp_lib=
{
	echo "/* written by tests/conformance/crun/build.sh in place of crun's configure */"
	if [ -f /usr/include/seccomp.h ] && [ "${seccomp_a#/}" != "$seccomp_a" ] && [ -f "$seccomp_a" ]; then
		echo "#define HAVE_SECCOMP 1"
		seccomp_lib=-lseccomp
	fi
	if [ -f /usr/include/linux/ioprio.h ]; then echo "#define HAVE_LINUX_IOPRIO_H 1"; fi
	if [ -f /usr/include/error.h ]; then echo "#define HAVE_ERROR_H 1"; fi
} >"$out/config.h.new"
if cmp -s "$out/config.h.new" "$out/config.h"; then
	rm "$out/config.h.new"
else
	mv "$out/config.h.new" "$out/config.h"
	rm -f "$out/init"
fi

if [ ! -x "$out/init" ]; then
	# -static: the suite's rootfs is empty but for this binary.
	# shellcheck disable=SC2086 # $seccomp_lib is empty or one word
	gcc -static -O2 -I"$out" -o "$out/init.new" "$out/crun/tests/init.c" $seccomp_lib
	mv "$out/init.new" "$out/init"
fi
# The suite runs from the source's top directory, as crun's Makefile runs it: some
# cases call ./tests/init themselves (feature probes), the rest take $INIT.
cmp -s "$out/init" "$out/crun/tests/init" || install -m 755 "$out/init" "$out/crun/tests/init"

if [ ! -x "$out/crun-hybrid" ] || [ "$top/tests/bench/crun-hybrid.c" -nt "$out/crun-hybrid" ]; then
	gcc -O2 -o "$out/crun-hybrid" "$top/tests/bench/crun-hybrid.c"
fi
runc=$(command -v runc || true)
if [ -n "$runc" ]; then
	# runc through the translation of crun's option spellings (runc-reference.sh)
	printf '#!/bin/bash\nexec %q %q "$@"\n' "$here/runc-reference.sh" "$runc" >"$out/runc-reference"
	chmod 755 "$out/runc-reference"
fi
crun=$(command -v crun || true)
if [ -n "$crun" ]; then
	# A script, not a symlink: OCI_RUNTIME is one path, and crun-hybrid needs crun's
	# path as its first argument.
	printf '#!/bin/bash\nexec %q %q "$@"\n' "$out/crun-hybrid" "$crun" >"$out/crun-reference"
	chmod 755 "$out/crun-reference"
fi

echo "build.sh: crun's suite from $(basename "$dsc") in $out/crun/tests, init $out/init"
