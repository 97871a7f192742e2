#!/bin/bash
# Runs tests/cgroups.bats on a pure cgroup v2 host: inside a QEMU guest (run-in-vm.sh),
# against the already built binary. What CI calls, as root, after the build:
#
#   tests/vm/run-cgroup-suite.sh [BATS ARGS...]     e.g. --filter 'pause'
#
# Prints bats' TAP output as it comes; exits with bats' status. Exits non-zero with a
# message if the guest is not a pure cgroup v2 host (memory and pids available), 124 if
# VM_TIMEOUT expires and 125 if the guest cannot boot.
#
#   SBX_OCI=path        binary under test (default: the checkout's ./sbx-oci)
#   SBX_FIXTURES=dir    where the host builds the fixtures (default: tests/.tmp/fixtures)
#   SBX_MUST_WORK=1     passed to the guest: a missing feature fails instead of skipping
#   VM_MEM (2048), VM_CPUS (1), VM_TIMEOUT (2400 s) and the other run-in-vm.sh knobs
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

# --- inside the guest --------------------------------------------------------------
if [ "${1:-}" = --in-guest ]; then
	snap=$2
	cg=/sys/fs/cgroup
	# Refuse anything but the host this suite is here for: a run that quietly fell
	# back to another hierarchy would prove nothing.
	fstype=$(stat -fc %T "$cg" 2>/dev/null)
	v1=$(awk '$3 == "cgroup" { print $2 }' /proc/mounts)
	ctrl=$(cat "$cg/cgroup.controllers" 2>/dev/null)
	if [ "$fstype" != cgroup2fs ] || [ -n "$v1" ] || [[ " $ctrl " != *" memory "* ]] || [[ " $ctrl " != *" pids "* ]]; then
		echo "run-cgroup-suite: FAIL: the guest is not a pure cgroup v2 host" >&2
		echo "  $cg is '$fstype' (want cgroup2fs); v1 hierarchies: ${v1:-none}; cgroup.controllers: '$ctrl' (want memory and pids)" >&2
		exit 2
	fi
	echo "# guest: Linux $(uname -r), $(nproc) CPUs, $(awk '/^MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
	echo "# guest: pure cgroup v2; controllers: $ctrl; root subtree_control: $(cat "$cg/cgroup.subtree_control")"
	export SBX_OCI=$snap/sbx-oci SBX_FIXTURES=$snap/fixtures
	mapfile -d '' args <"$snap/bats-args"
	exec bats --tap --timing "${args[@]}" "$root/tests/cgroups.bats"
fi

# --- on the host ---------------------------------------------------------------------
die() {
	echo "run-cgroup-suite: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "must run as root (virtiofsd; the suite creates cgroups and namespaces)"

# What the host needs: QEMU and virtiofsd, a static busybox (the guest's init and the
# fixtures' rootfs), zstd (faster boots), and bats and jq, which the guest runs from
# the host's root. Installed only when missing.
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
[ -x /usr/lib/qemu/virtiofsd ] || missing+=(qemu-system-common)
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing+=(busybox-static)
command -v zstd >/dev/null || missing+=(zstd)
command -v bats >/dev/null || missing+=(bats)
command -v jq >/dev/null || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
	echo "run-cgroup-suite: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >/dev/null ||
		{ apt-get update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >/dev/null; } ||
		die "apt-get install ${missing[*]} failed"
fi

sbx_oci=${SBX_OCI:-$root/sbx-oci}
[ -x "$sbx_oci" ] || die "$sbx_oci is missing: build it first (./configure && make)"
fixtures=${SBX_FIXTURES:-$root/tests/.tmp/fixtures}
# The guest sees the host root read-only: it cannot build them itself.
"$root/tests/helpers/build-fixtures.sh" "$fixtures" || die "building the fixtures in $fixtures failed"

# A private copy of the binary and the fixtures for this run: a rebuild in the checkout
# while the (long) suite runs must not swap them under it. Under the VM cache, not
# /tmp, which the guest does not see; pruned with the run directories.
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
export VM_CACHE
mkdir -p "$VM_CACHE/runs" || die "cannot create $VM_CACHE/runs"
snap=$(mktemp -d "$VM_CACHE/runs/s.XXXXXX") || die "cannot create a directory in $VM_CACHE/runs"
trap 'rm -rf "$snap"' EXIT
cp "$sbx_oci" "$snap/sbx-oci" && cp -a "$fixtures" "$snap/fixtures" || die "cannot copy the binary and the fixtures to $snap"
printf '%s\0' "$@" >"$snap/bats-args"
[ $# -gt 0 ] || : >"$snap/bats-args"

# One vCPU: under multi-threaded TCG the guest kernel crashed (an invalid opcode in
# kernel text being patched, right after the first cgroup BPF program flipped a static
# key) when a second vCPU ran code that was being rewritten.
# 2 GiB: the tests OOM-kill containers on purpose and the guest has no swap; the
# bundles live on the guest's tmpfs /tmp. Under TCG the suite takes minutes (fork and
# exec are ~100x slower), hence the long timeout; the output is followed live.
export VM_MEM=${VM_MEM:-2048} VM_CPUS=${VM_CPUS:-1} VM_TIMEOUT=${VM_TIMEOUT:-2400} VM_STREAM=${VM_STREAM:-1}
export VM_TIMING=${VM_TIMING:-1}
export VM_ENV="${VM_ENV:-} SBX_MUST_WORK"
# Hidden only if the checkout or the cache is under /tmp, /run, /var/tmp or /root.
export VM_RO_DIRS="$root/tests:$snap${VM_RO_DIRS:+:$VM_RO_DIRS}"

cd "$root" || die "cd $root"
start=$SECONDS
"$here/run-in-vm.sh" "exec /bin/bash $(printf %q "$here/run-cgroup-suite.sh") --in-guest $(printf %q "$snap")"
rc=$?
case $rc in
0) echo "run-cgroup-suite: passed in the cgroup v2 guest ($((SECONDS - start)) s in all)" >&2 ;;
124) echo "run-cgroup-suite: FAILED: the guest ran out of time (VM_TIMEOUT=$VM_TIMEOUT s)" >&2 ;;
125) echo "run-cgroup-suite: FAILED: the guest could not boot or the harness failed (see above)" >&2 ;;
*) echo "run-cgroup-suite: FAILED with status $rc in the cgroup v2 guest ($((SECONDS - start)) s in all)" >&2 ;;
esac
exit "$rc"
