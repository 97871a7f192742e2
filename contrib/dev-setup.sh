#!/bin/bash
# One command from a fresh Debian 12 machine to a working sbx-oci: installs the build
# and test dependencies (apt-get), builds, and runs a Python snippet in the sandbox.
#   contrib/dev-setup.sh                 # install, build, demo (as root, or through sudo)
#   SBX_SKIP_DEMO=1 contrib/dev-setup.sh # install and build only (CI)
#   SBX_LIBC=glibc contrib/dev-setup.sh  # build against glibc instead of musl (no source
#                                        # packages needed; ~0.45 ms slower a run on a VM)
set -euo pipefail
cd "$(dirname "$0")/.."
# Root's work (apt-get, the demo as root): a user with sudo gets it through sudo, and
# root runs it as is (a root shell on a machine without sudo is common: containers, CI).
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "dev-setup: run it as root (sudo is not installed)" >&2; exit 1; }
	exec sudo --preserve-env=SBX_LIBC,SBX_SKIP_DEMO,SBX_MUST_WORK "$0" "$@"
fi

deps=(build-essential autoconf automake pkg-config
	libseccomp-dev libyajl-dev libmount-dev libcap-dev libdbus-1-dev
	musl-tools gperf              # the runtime is built with musl (contrib/musl-deps.sh)
	bats jq busybox-static procps util-linux iproute2 libcap2-bin
	strace                       # tests/lifecycle.bats: delays the runtime, not its container
	python3-numpy python3-pandas # tests/python.bats: a real CPython workload under python.json
	python3-matplotlib openssl    # tests/sandbox-workloads.bats: a PNG plot, a TLS handshake
	python3-pytest python3-hypothesis python3-typing-extensions # tests/compat/numpy.sh: numpy's own tests
	python3-pip                  # tests/contrib-python.bats: pip install contrib/python (+ setuptools, wheel)
	go-md2man man-db groff-base zsh # man pages rendered at build time; tests/packaging.bats
	clang                        # tests/fuzz: libFuzzer
	qemu-system-x86 zstd git     # tests/vm: the cgroup v2 guest; tests/asan.sh copies the tracked files
	python3 dpkg-dev crun runc   # tests/conformance: crun's suite (Debian's source), crun and runc beside sbx-oci
	libpython3.11-testsuite)     # tests/compat: CPython's regression tests, bare and sandboxed
missing=()
for p in "${deps[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The runtime links musl, not glibc: glibc's start-up costs ~0.5 ms of cpuid traps on
# a VM at every exec (DEVELOPERS.md, "Startup cost"). libseccomp and yajl are built
# for it from Debian's source packages; the sanitizer and fuzz builds use glibc's.
libc=${SBX_LIBC:-musl}
case $libc in
musl)
	contrib/musl-deps.sh .musl # on its own line: set -e does not stop an && list
	with_libc=--with-musl=.musl
	;;
glibc) with_libc= ;;
*) echo "dev-setup: SBX_LIBC=$libc: musl or glibc" >&2 && exit 2 ;;
esac
[ -x configure ] || ./autogen.sh
# configured before, for the other C library: configured again
configured=none
if [ -f config.status ]; then
	configured=glibc
	grep -q -e '--with-musl' config.status && configured=musl
fi
# shellcheck disable=SC2086 # empty for glibc
[ -f Makefile ] && [ "$configured" = "$libc" ] || ./configure --enable-werror $with_libc
make -j"$(nproc)"

if [ -z "${SBX_SKIP_DEMO:-}" ]; then
	# The point of it all: untrusted Python, run once in a sandbox over the host's
	# own interpreter (no image to download). Prints 42.
	./sbx-oci python -c 'print(6*7)'
fi
