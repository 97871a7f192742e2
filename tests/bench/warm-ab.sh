#!/bin/bash
# Issue 41's throughput, old build beside new in one run: WARM_CLIENTS (8) clients at
# once, WARM_AB_PER (50) runs each, through a server of each build with warm.sh's
# options (numpy, pandas and matplotlib preloaded), the builds alternated over
# WARM_AB_ROUNDS (3) rounds, old first in odd rounds. Runs per second and the
# machine's CPU per run (/proc/stat: everything the runs cost, the kernel's work
# included): warm-ab.tsv.   WARM_AB_OLD=path/to/old/sbx-oci (required)
source "$(dirname "$0")/lib.sh"
OLD=$(readlink -f "${WARM_AB_OLD:?WARM_AB_OLD names the older sbx-oci to run beside this one}")
CLIENTS=${WARM_CLIENTS:-8}
PER=${WARM_AB_PER:-50}
ROUNDS=${WARM_AB_ROUNDS:-3}
out=$RESULTS/warm-ab.tsv

machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# one BUILD NAME: a server of BUILD, the clients, a row of warm-ab.tsv
one() {
	local sbx=$1 name=$2 sock=$W/ab-$2.sock log=$RESULTS/warm-ab-$2.log server c0 t0 t1 c1 fail=0
	rm -f "$sock"
	"$sbx" --root "$STATE/sbx-oci" serve --socket "$sock" --preload numpy,pandas,matplotlib.pyplot \
		--max-runs "$CLIENTS" >"$log" 2>&1 &
	server=$!
	for _ in $(seq 600); do
		grep -q "listening on" "$log" && break
		kill -0 "$server" 2>/dev/null || { cat "$log" >&2 && exit 1; }
		sleep 0.1
	done
	for _ in 1 2 3; do "$sbx" python --connect "$sock" -c 'print(1)' >/dev/null; done
	sleep 1
	c0=$(machine_ticks) t0=$(date +%s%N)
	local pids=()
	for _ in $(seq "$CLIENTS"); do
		(for _ in $(seq "$PER"); do "$sbx" python --connect "$sock" -c 'print(1)' >/dev/null || exit 1; done) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail=1; done
	t1=$(date +%s%N) c1=$(machine_ticks)
	kill -TERM "$server" && wait "$server" || true
	awk -v name="$name" -v n=$((CLIENTS * PER)) -v ms=$(((t1 - t0) / 1000000)) -v ticks=$((c1 - c0)) \
		-v hz="$(getconf CLK_TCK)" -v r="$round" -v fail="$fail" \
		'BEGIN { printf "%s\t%s\t%d\t%.1f\t%.2f\t%s\n", name, r, n, n * 1000 / ms, ticks * 1000 / hz / n, fail }' >>"$out"
}

printf 'build\tround\truns\truns_per_s\tmachine_cpu_ms_a_run\tfailed\n' >"$out"
for round in $(seq "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then one "$OLD" old && one "$SBX_OCI" new; else one "$SBX_OCI" new && one "$OLD" old; fi
done
cat "$out"
awk -F'\t' 'NR > 1 { s[$1] += $4; c[$1] += $5; n[$1]++ } END {
	printf "# mean: old %.1f runs/s, %.2f ms a run; new %.1f runs/s, %.2f ms a run; new/old %.2fx\n",
		s["old"] / n["old"], c["old"] / n["old"], s["new"] / n["new"], c["new"] / n["new"], (s["new"] / n["new"]) / (s["old"] / n["old"]) }' "$out" | tee -a "$out"
! grep -qP '\t1$' "$out" || { echo "warm-ab.sh: a run failed" >&2 && exit 1; }
