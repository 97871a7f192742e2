#!/bin/bash
# The kubelet 1.20 of the kubernetes stage with --cgroup-driver=systemd, in the QEMU
# guest that boots systemd 252 as PID 1 on cgroup v2 (run-in-vm.sh, VM_SYSTEMD=1):
# tests/vm/kubelet-systemd-check.sh inside, one pod on sbx-oci and one on runc, each
# with a 64 MiB limit (the unit in kubepods-burstable-podUID.slice, Delegate,
# MemoryMax; the container's cgroup and limit; the unit gone after the pod). Prints
# each step's time. Fails on a case sbx-oci fails, or when the cluster did not come up.
#
# Not a stage of `make check`: alone it takes about 6 minutes of both cores (the guest
# is emulated: the apiserver needs 90 s to be ready), which CI's budget has no room
# for yet; the systemd guest stage covers the same calls through containerd's CRI
# (containerd-systemd-check.sh). Run it after a change to the systemd driver:
#   tests/vm/run-kubelet-systemd-check.sh       (root; SBX_OCI=path, default ./sbx-oci)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
sbx_oci=${SBX_OCI:-$root/sbx-oci}
[ "$(id -u)" = 0 ] || { echo "run-kubelet-systemd-check: must run as root" >&2; exit 1; }
[ -x "$sbx_oci" ] || { echo "run-kubelet-systemd-check: $sbx_oci is missing: build it first" >&2; exit 1; }
need=()
for p in etcd-server containerd containernetworking-plugins runc busybox-static; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		{ echo "run-kubelet-systemd-check: could not install ${need[*]}" >&2; exit 1; }
fi
kbin=$("$root/tests/kubernetes/build.sh") || { echo "run-kubelet-systemd-check: no Kubernetes binaries" >&2; exit 1; }
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
export VM_CACHE
mkdir -p "$VM_CACHE/runs" || exit 1
snap=$(mktemp -d "$VM_CACHE/runs/k.XXXXXX") || exit 1
trap 'rm -rf "$snap"' EXIT
cp "$sbx_oci" "$snap/sbx-oci" || exit 1
VM_TIMEOUT=${VM_TIMEOUT:-1500} VM_MEM=${VM_MEM:-4096} VM_SYSTEMD=1 VM_STREAM=1 VM_RO_DIRS=$snap \
	"$here/run-in-vm.sh" "$here/kubelet-systemd-check.sh $root $kbin $snap/sbx-oci" | tee "$snap/out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "run-kubelet-systemd-check: the guest's check failed (status $rc)" >&2; exit 1; }
status=0
grep -q '^k8s-pod sbx-oci ' "$snap/out" || { echo "run-kubelet-systemd-check: no pod result for sbx-oci" >&2; status=1; }
if grep -E '^k8s-[a-z-]+ sbx-oci ' "$snap/out" | grep -v ' pass$' >&2; then
	echo "run-kubelet-systemd-check: sbx-oci failed the cases above" >&2
	status=1
fi
exit $status
