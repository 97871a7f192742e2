#!/bin/bash
# The feature deltas of deltas.sh again on a pure cgroup v2 host: inside the QEMU guest
# of tests/vm (software emulation: absolute times are ~100x the host's and mean nothing;
# the difference between two alternated commands still shows what a feature adds
# relative to a run). Appends "v2 guest: ..." rows to results/deltas.tsv.
#   VM_DELTA_N=16 pairs per delta (each run takes about a second in the guest)
# Run after bundles.sh (run.sh does): it reuses the busybox bundles.
source "$(dirname "$0")/lib.sh"
N=${VM_DELTA_N:-16}
out=$RESULTS/deltas.tsv
[ -f "$out" ] || printf 'delta\tA_ms\tB_ms\tB_minus_A_ms\tA_q1\tA_q3\tB_q1\tB_q3\n' >"$out"
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
mkdir -p "$VM_CACHE/runs"
# the guest hides /var/tmp: a copy of what it needs under the VM cache
snap=$(mktemp -d "$VM_CACHE/runs/b.XXXXXX")
trap 'rm -rf "$snap"' EXIT
cp "$SBX_OCI" "$BIN/abrun" "$snap/"
cp -a "$W/rootfs/busybox" "$snap/rootfs"
for b in bb-base bb-limits bb-seccomp-limits; do
	mkdir -p "$snap/$b"
	jq --arg r "$snap/rootfs" '.root.path = $r' "$BUNDLES/$b/config.json" >"$snap/$b/config.json"
done
run() { echo "$snap/sbx-oci --root /run/sbxbench run --bundle $snap/$1 vm-{id}"; }
cmd="$snap/abrun $N 'v2 guest: memory+pids limits' \$VM_RUN_DIR/d.tsv -- $(run bb-base) -- $(run bb-limits);"
cmd+=" $snap/abrun $N 'v2 guest: seccomp profile + limits' \$VM_RUN_DIR/d.tsv -- $(run bb-base) -- $(run bb-seccomp-limits)"
VM_KEEP=1 VM_CPUS=1 VM_MEM=1024 VM_TIMEOUT=1200 VM_RO_DIRS=$snap "$BENCH_SRC/../vm/run-in-vm.sh" "$cmd" 2>&1 | tee "$snap/log"
run_dir=$(grep -o '/[^ ]*/runs/r[^ ]*' "$snap/log" | tail -1)
[ -n "$run_dir" ] && [ -f "$run_dir/d.tsv" ] || { echo "vm-deltas: no result from the guest" >&2 && exit 1; }
cat "$run_dir/d.tsv" >>"$out"
rm -rf "$run_dir"
