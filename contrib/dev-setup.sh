#!/bin/bash
# One command from a fresh Debian 12 machine to a working sbx-oci: installs the build
# and test dependencies (apt-get), builds, and runs a program in a sandbox.
#   sudo contrib/dev-setup.sh            # install, build, demo
#   SBX_SKIP_DEMO=1 contrib/dev-setup.sh # install and build only (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

deps=(build-essential autoconf automake pkg-config
	libseccomp-dev libcap-dev libyajl-dev libmount-dev
	bats jq busybox-static procps util-linux iproute2
	python3-numpy python3-pandas # tests/python.bats: a real CPython workload under python.json
	clang                        # tests/fuzz: libFuzzer
	qemu-system-x86 zstd git)    # tests/vm: the cgroup v2 guest; tests/asan.sh copies the tracked files
missing=()
for p in "${deps[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "dev-setup: missing packages: ${missing[*]}; run as root (sudo) to install them" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure --enable-werror
make -j"$(nproc)"

if [ -z "${SBX_SKIP_DEMO:-}" ]; then
	demo=$(mktemp -d /tmp/sbx-demo.XXXXXX)
	trap 'rm -rf "$demo"' EXIT
	mkdir -p "$demo/rootfs/bin"
	cp /bin/busybox "$demo/rootfs/bin/"
	ln -s busybox "$demo/rootfs/bin/sh"
	./sbx-oci spec --bundle "$demo"
	jq '.process.args = ["sh", "-c", "echo hello from $(hostname): pid $$, uid $(id -u), net: $(ls /sys/class/net)"]' \
		"$demo/config.json" >"$demo/c" && mv "$demo/c" "$demo/config.json"
	chmod 755 "$demo"
	./sbx-oci run --bundle "$demo"
fi
