#!/bin/bash
# Prepares, idempotently, what the test VM boots: a Debian cloud kernel (vmlinuz, and
# the decompressed vmlinux when zstd is there), a few of its modules, and a busybox
# initramfs carrying tests/vm/init. Everything lives in $VM_CACHE (default
# /var/cache/sbx-vm). Silent on a warm cache (~10 ms), non-zero with a message on
# failure, safe to run concurrently (flock). run-in-vm.sh calls it on every run.
#
#   VM_KERNEL_PKG  kernel package to boot (default below; if the default is no longer
#                  in the archive, the newest linux-image-6.12.*-cloud-amd64-unsigned)
#   VM_MODULES     modules copied into the initramfs and loaded at boot
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
# The cloud flavour has virtio-pci, virtiofs, fuse, every cgroup v2 controller, user and
# time namespaces, seccomp and Landlock built in, and is a third of the generic image.
# 6.12 (bookworm-security) rather than bookworm's 6.1: closer to current hosts (Landlock
# ABI 6, memory.peak, pids.peak). Pinned so that runs are reproducible.
default_kpkg=linux-image-6.12.107+deb12-cloud-amd64-unsigned
# Block devices for io.max tests (null_blk needs configfs, resolved below) and overlay.
mods=${VM_MODULES:-loop null_blk brd overlay}
mkdir -p "$VM_CACHE"
exec 9>"$VM_CACHE/.lock"
flock 9

command -v qemu-system-x86_64 >/dev/null || { echo "build-initramfs: qemu-system-x86_64 is missing (apt-get install qemu-system-x86)" >&2; exit 1; }
[ -x /usr/lib/qemu/virtiofsd ] || { echo "build-initramfs: /usr/lib/qemu/virtiofsd is missing (Debian 12's qemu-system-common has it)" >&2; exit 1; }
# The initramfs and the guest's stage 2 run busybox alone, with no libraries.
if [ ! -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
	echo "build-initramfs: a static /bin/busybox is needed (apt-get install busybox-static)" >&2
	exit 1
fi

# The package name asked for: what the cache is keyed on, so that asking again costs no
# apt lookup. Only a cold cache resolves it against the archive.
want=${VM_KERNEL_PKG:-$default_kpkg}

# 1. Kernel and modules, unpacked from the .deb: nothing is installed on the host.
if [ ! -s "$VM_CACHE/vmlinuz" ] || [ "$(cat "$VM_CACHE/vmlinuz.pkg" 2>/dev/null)" != "$want $mods" ]; then
	kpkg=$want
	if [ -z "${VM_KERNEL_PKG:-}" ] && [ -z "$(apt-cache policy "$kpkg" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)')" ]; then
		# The security archive drops old kernel ABIs: take the newest 6.12 cloud image.
		kpkg=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' 2>/dev/null |
			cut -d' ' -f1 | sort -V | tail -n1)
		[ -n "$kpkg" ] || { echo "build-initramfs: $default_kpkg is not available and no other 6.12 cloud kernel is (apt-get update? or set VM_KERNEL_PKG)" >&2; exit 1; }
		echo "build-initramfs: $default_kpkg is not available, using $kpkg" >&2
	fi
	tmp=$(mktemp -d "$VM_CACHE/k.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# apt-get download as root warns that _apt cannot write here; harmless.
	if ! (cd "$tmp" && apt-get download "$kpkg" >"$tmp/apt.log" 2>&1); then
		echo "build-initramfs: apt-get download $kpkg failed:" >&2
		cat "$tmp/apt.log" >&2
		exit 1
	fi
	dpkg-deb -x "$tmp"/*.deb "$tmp/x"
	rm -rf "$VM_CACHE/modules"
	mkdir -p "$VM_CACHE/modules"
	kdir=$(echo "$tmp"/x/lib/modules/*)
	# A module's dependencies come from the depends= field of its .modinfo; "order"
	# lists them dependencies first, which is the order init loads them in.
	declare -A seen=()
	add_module() {
		local m=$1 f dep
		[ -z "${seen[$m]:-}" ] || return 0
		seen[$m]=1
		f=$(find "$kdir" -name "$m.ko.xz" -o -name "$m.ko" | head -n1)
		[ -n "$f" ] || { echo "build-initramfs: module $m not found (built in?)" >&2; return 0; }
		# decompressed: busybox insmod cannot read .ko.xz
		xz -dc "$f" >"$VM_CACHE/modules/$m.ko" 2>/dev/null || cp "$f" "$VM_CACHE/modules/$m.ko"
		for dep in $(tr '\0' '\n' <"$VM_CACHE/modules/$m.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
			add_module "${dep//-/_}"
		done
		echo "$m" >>"$VM_CACHE/modules/order"
	}
	for m in $mods; do add_module "$m"; done
	cp "$tmp"/x/boot/config-* "$VM_CACHE/kernel.config"
	cp "$tmp"/x/boot/vmlinuz-* "$VM_CACHE/vmlinuz.new"
	mv "$VM_CACHE/vmlinuz.new" "$VM_CACHE/vmlinuz"
	echo "$kpkg" >"$VM_CACHE/vmlinuz.resolved"
	echo "$want $mods" >"$VM_CACHE/vmlinuz.pkg"
	rm -f "$VM_CACHE/initramfs.stamp" "$VM_CACHE/vmlinux"
fi

# 1b. The bzImage's payload, decompressed: an ELF vmlinux with a PVH entry note that
# QEMU boots directly, skipping SeaBIOS' linuxboot and the in-guest decompression
# (about 0.5 s of each boot under TCG). Without zstd the bzImage is booted instead.
if [ ! -s "$VM_CACHE/vmlinux" ] && command -v zstd >/dev/null; then
	for off in $(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$VM_CACHE/vmlinuz" | cut -d: -f1); do
		tail -c +$((off + 1)) "$VM_CACHE/vmlinuz" | zstd -dcq 2>/dev/null >"$VM_CACHE/vmlinux.new" || true
		if [ "$(head -c4 "$VM_CACHE/vmlinux.new" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv "$VM_CACHE/vmlinux.new" "$VM_CACHE/vmlinux"
			break
		fi
	done
	rm -f "$VM_CACHE/vmlinux.new"
fi

# 2. The initramfs: busybox, /init and the modules, as an uncompressed cpio (unpacking
# beats decompressing under TCG). Rebuilt when init, this script, busybox or the kernel
# change.
stamp=$(cat "$here/init" "$here/systemd-init" "$0" /bin/busybox "$VM_CACHE/vmlinuz.pkg" | sha256sum | cut -c1-16)
if [ ! -s "$VM_CACHE/initramfs.cpio" ] || [ "$(cat "$VM_CACHE/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
	tmp2=$(mktemp -d "$VM_CACHE/i.XXXXXX")
	trap 'rm -rf "${tmp:-}" "$tmp2"' EXIT
	mkdir -p "$tmp2"/{bin,dev,proc,sys,host,newroot,tmp,modules}
	mknod -m 600 "$tmp2/dev/console" c 5 1
	mknod -m 666 "$tmp2/dev/null" c 1 3
	cp /bin/busybox "$tmp2/bin/busybox"
	ln -s busybox "$tmp2/bin/sh"
	cp "$here/init" "$tmp2/init"
	cp "$here/systemd-init" "$tmp2/systemd-init"
	chmod 755 "$tmp2/init"
	cp -a "$VM_CACHE/modules/." "$tmp2/modules/" 2>/dev/null || true
	(cd "$tmp2" && find . | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$VM_CACHE/initramfs.cpio.new"
	mv "$VM_CACHE/initramfs.cpio.new" "$VM_CACHE/initramfs.cpio"
	echo "$stamp" >"$VM_CACHE/initramfs.stamp"
fi
