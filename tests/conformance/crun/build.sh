#!/bin/bash
# build.sh OUTDIR: prepares crun's Python test suite (a pinned snapshot in the shared
# dir, never copied into this repository) to run against any OCI runtime:
#   OUTDIR/crun/          the extracted snapshot (tests/ is the suite's cwd)
#   OUTDIR/config.h       what crun's configure would say, for tests/init.c
#   OUTDIR/init           tests/init.c built statically: it is copied into each rootfs,
#                         which has no libc
#   OUTDIR/crun-hybrid    tests/bench/crun-hybrid.c, and OUTDIR/crun-reference, a wrapper
#                         running the host's crun through it: crun 1.8 refuses hybrid
#                         cgroup hosts, and a reference run needs it (see run.sh)
# The libmount stand-in and sitecustomize.py stay in this directory; run.sh puts it on
# PYTHONPATH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
shared=${SBX_SHARED:-$top/../shared}
tarball=$shared/conformance/crun-tests-ba38286f.tar.gz

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ ! -r "$tarball" ]; then
	echo "build.sh: $tarball not found (set SBX_SHARED)" >&2
	exit 1
fi

# Re-extract only when the snapshot changed: the stamp names the tarball's hash, and a
# half-done extraction (no stamp) is thrown away rather than trusted.
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
stamp=$out/crun/.extracted-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
	rm -rf --one-file-system "$out/crun" "$out/crun.partial"
	mkdir "$out/crun.partial"
	tar -xzf "$tarball" -C "$out/crun.partial"
	# The tarball holds one top-level directory, crun/.
	mv "$out/crun.partial/crun" "$out/crun"
	rmdir "$out/crun.partial"
	echo "$sum" >"$stamp"
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

if [ ! -x "$out/crun-hybrid" ] || [ "$top/tests/bench/crun-hybrid.c" -nt "$out/crun-hybrid" ]; then
	gcc -O2 -o "$out/crun-hybrid" "$top/tests/bench/crun-hybrid.c"
fi
crun=$(command -v crun || true)
if [ -n "$crun" ]; then
	# A script, not a symlink: OCI_RUNTIME is one path, and crun-hybrid needs crun's
	# path as its first argument.
	printf '#!/bin/bash\nexec %q %q "$@"\n' "$out/crun-hybrid" "$crun" >"$out/crun-reference"
	chmod 755 "$out/crun-reference"
fi

echo "build.sh: suite in $out/crun/tests, init $out/init"
