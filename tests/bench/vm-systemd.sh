#!/bin/bash
# What the systemd cgroup driver adds to a run, for sbx-oci beside runc and crun: in
# the QEMU guest that boots systemd 252 as PID 1 on cgroup v2 (tests/vm, VM_SYSTEMD=1),
# each runtime's `run` of the memory+pids bundle with its cgroupfs driver (A) and
# with --systemd-cgroup (B), alternated (abrun). Software emulation: absolute times
# are ~100x the host's; B minus A, beside the peers', is the number. Appends
# "v2+systemd guest: ..." rows to results/deltas.tsv.
#   VM_DELTA_N=12 pairs per runtime
# Run after bundles.sh (run.sh does): it reuses the busybox bundles.
source "$(dirname "$0")/lib.sh"
N=${VM_DELTA_N:-12}
out=$RESULTS/deltas.tsv
[ -f "$out" ] || printf 'delta\tA_ms\tB_ms\tB_minus_A_ms\tA_q1\tA_q3\tB_q1\tB_q3\n' >"$out"
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
mkdir -p "$VM_CACHE/runs"
snap=$(mktemp -d "$VM_CACHE/runs/b.XXXXXX")
trap 'rm -rf "$snap"' EXIT
cp "$SBX_OCI" "$BIN/abrun" "$snap/"
cp -a "$W/rootfs/busybox" "$snap/rootfs"
mkdir -p "$snap/bb-limits"
# no cgroupsPath: each driver's default (cgroupfs: /ID or /sbx-oci/ID; systemd:
# system.slice and the runtime's own prefix)
jq --arg r "$snap/rootfs" '.root.path = $r | del(.linux.cgroupsPath)' "$BUNDLES/bb-limits/config.json" \
	>"$snap/bb-limits/config.json"
cmd=
for rt in sbx-oci runc crun; do
	case $rt in
	sbx-oci) bin=$snap/sbx-oci ;;
	*) bin=$(command -v "$rt") ;;
	esac
	r="$bin --root /run/sbxbench-$rt"
	cmd+="$snap/abrun $N 'v2+systemd guest: $rt --systemd-cgroup' \$VM_RUN_DIR/d.tsv --"
	cmd+=" $r run --bundle $snap/bb-limits vm-{id} -- $r --systemd-cgroup run --bundle $snap/bb-limits vm-{id};"
done
VM_KEEP=1 VM_SYSTEMD=1 VM_TIMEOUT=1800 VM_RO_DIRS=$snap "$BENCH_SRC/../vm/run-in-vm.sh" "$cmd" 2>&1 | tee "$snap/log"
run_dir=$(grep -o '/[^ ]*/runs/r[^ ]*' "$snap/log" | tail -1)
[ -n "$run_dir" ] && [ -f "$run_dir/d.tsv" ] || { echo "vm-systemd: no result from the guest" >&2 && exit 1; }
cat "$run_dir/d.tsv" >>"$out"
rm -rf "$run_dir"
