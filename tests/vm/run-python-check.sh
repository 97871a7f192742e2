#!/bin/bash
# `sbx-oci check` on a pure cgroup v2 host: inside the QEMU guest of run-in-vm.sh, the
# Python sandbox's layers and canaries (network, filesystem, environment, fork bomb,
# memory bomb OOM-killed by the cgroup v2 memory controller, wall clock) must all
# PASS, as they do on the hybrid host (tests/sandbox.bats); then warm runs and a session
# through `sbx-oci serve` must join their cgroups (serve-check.sh). What
# tests/check.sh's vm stage runs after the cgroup suite.
#   SBX_OCI=path   binary under test (default: the checkout's ./sbx-oci)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
sbx_oci=${SBX_OCI:-$root/sbx-oci}
[ "$(id -u)" = 0 ] || { echo "run-python-check: must run as root" >&2; exit 1; }
[ -x "$sbx_oci" ] || { echo "run-python-check: $sbx_oci is missing: build it first" >&2; exit 1; }
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
export VM_CACHE
mkdir -p "$VM_CACHE/runs" || exit 1
# the guest hides /tmp and friends: a private copy of the binary under the VM cache
snap=$(mktemp -d "$VM_CACHE/runs/p.XXXXXX") || exit 1
trap 'rm -rf "$snap"' EXIT
cp "$sbx_oci" "$snap/sbx-oci" || exit 1
# serve's warm runs there too (serve-check.sh): the library beside the binary
cp "$(dirname "$sbx_oci")/libsbx-warm.so" "$here/serve-check.sh" "$snap/" || exit 1
cmd="[ \"\$(stat -fc %T /sys/fs/cgroup)\" = cgroup2fs ] || { echo 'not a cgroup v2 guest' >&2; exit 2; };"
cmd+=" $snap/sbx-oci check && echo 'run-python-check: every layer and canary passed'"
cmd+=" && $snap/serve-check.sh $snap/sbx-oci"
VM_CPUS=${VM_CPUS:-1} VM_MEM=${VM_MEM:-2048} VM_TIMEOUT=${VM_TIMEOUT:-600} VM_RO_DIRS=$snap \
	"$here/run-in-vm.sh" "$cmd"
