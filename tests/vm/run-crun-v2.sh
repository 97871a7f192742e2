#!/bin/bash
# Runs crun's cgroup test files (tests/conformance/crun, from Debian's crun source) on
# a pure cgroup v2 host: in the QEMU guest of run-in-vm.sh, against the already built
# binary and, in the same guest, runc and crun. Their v2 cases are skipped on our
# hybrid machines; this is where they run. The TAP goes to RESULTS/RUNTIME/crun-v2/
# (default tests/.tmp/conformance/results-v2), and tests/conformance/summarize.py
# judges sbx-oci's against expected-failures.txt (the entries named crun-v2/...): the
# exit status is 1 on a failing case not listed there.
#
#   tests/vm/run-crun-v2.sh [RESULTS]
#   SBX_CRUN_V2_FILES   the files to run (default: the cgroup ones below)
#   SBX_CONFORMANCE_PEERS  the peers (default "runc crun")
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
files=${SBX_CRUN_V2_FILES:-test_resources.py test_update.py test_delete.py}
peers=${SBX_CONFORMANCE_PEERS-runc crun}

# --- inside the guest: the suite needs a writable copy (it makes its state under its
# cwd), so it runs from the guest's tmpfs; the results go back through a directory
# shared read-write with the host.
if [ "${1:-}" = --in-guest ]; then
	snap=$2 out=$3
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || { echo "run-crun-v2: the guest is not cgroup v2" >&2; exit 2; }
	mkdir -p /tmp/crun-v2 && cp -a "$snap/crun" "$snap/init" /tmp/crun-v2/ || exit 2
	rc=0
	for name in sbx-oci $peers; do
		case $name in
		sbx-oci) rt=$snap/sbx-oci ;;
		*) rt=$snap/$name-reference ;;
		esac
		[ -x "$rt" ] || { echo "run-crun-v2: $name is not installed" >&2; rc=1; continue; }
		SBX_CONFORMANCE_TESTS=$files "$root/tests/conformance/crun/run.sh" /tmp/crun-v2 "$rt" "$out/results/$name" || rc=1
	done
	exit $rc
fi

die() {
	echo "run-crun-v2: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "must run as root"
results=${1:-$root/tests/.tmp/conformance/results-v2}
build=${SBX_CONFORMANCE_BUILD:-$root/tests/.tmp/conformance}
sbx_oci=${SBX_OCI:-$root/sbx-oci}
[ -x "$sbx_oci" ] || die "$sbx_oci is missing: build it first"
"$root/tests/conformance/crun/build.sh" "$build" || die "building crun's suite failed"

# A private copy of what the guest runs, where the guest can see it (not under /tmp)
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
export VM_CACHE
mkdir -p "$VM_CACHE/runs" || die "cannot create $VM_CACHE/runs"
snap=$(mktemp -d "$VM_CACHE/runs/c.XXXXXX") || die "cannot create a directory in $VM_CACHE/runs"
run_dir=$(mktemp -d "$VM_CACHE/runs/r.XXXXXX") || die "cannot create a directory in $VM_CACHE/runs"
trap 'rm -rf "$snap" "$run_dir"' EXIT
cp "$sbx_oci" "$snap/sbx-oci" && cp -a "$build/crun" "$build/init" "$snap/" || die "cannot copy to $snap"
for name in $peers; do
	[ -x "$build/$name-reference" ] && cp -a "$build/$name-reference" "$snap/"
done
# only the files this crun release has
present=
for f in $files; do
	[ -f "$build/crun/tests/$f" ] && present+=" $f"
done
export SBX_CRUN_V2_FILES=${present# } SBX_CONFORMANCE_PEERS=$peers

# One vCPU and 2 GiB, as run-cgroup-suite.sh says why.
export VM_MEM=${VM_MEM:-2048} VM_CPUS=${VM_CPUS:-1} VM_TIMEOUT=${VM_TIMEOUT:-1500} VM_STREAM=${VM_STREAM:-1}
export VM_ENV="${VM_ENV:-} SBX_MUST_WORK SBX_CRUN_V2_FILES SBX_CONFORMANCE_PEERS" VM_RO_DIRS="$root/tests:$snap${VM_RO_DIRS:+:$VM_RO_DIRS}"
export VM_RW_DIRS="$run_dir${VM_RW_DIRS:+:$VM_RW_DIRS}"
cd "$root" || die "cd $root"
"$here/run-in-vm.sh" "exec /bin/bash $(printf %q "$here/run-crun-v2.sh") --in-guest $(printf %q "$snap") $(printf %q "$run_dir")"
rc=$?
rm -rf "$results"
for name in sbx-oci $peers; do
	mkdir -p "$results/$name/crun-v2"
	cp "$run_dir/results/$name"/crun/*.tap "$run_dir/results/$name"/crun/*.log "$results/$name/crun-v2/" 2>/dev/null
done
[ $rc = 0 ] || echo "run-crun-v2: the guest's run ended with status $rc" >&2
ls "$results/sbx-oci/crun-v2"/*.tap >/dev/null 2>&1 || die "no results came back from the guest"
"$root/tests/conformance/summarize.py" "$results" "$root/tests/conformance/expected-failures.txt" || rc=1
exit "$rc"
