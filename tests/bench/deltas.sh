#!/bin/bash
# What each feature costs, measured by alternating the two commands (abrun.c says why
# hyperfine's blocks are not enough for differences of a millisecond), DELTA_N pairs
# each, into results/deltas.tsv. The issue's feature targets are judged on these rows.
source "$(dirname "$0")/lib.sh"
N=${DELTA_N:-60}
out=$RESULTS/deltas.tsv
printf 'delta\tA_ms\tB_ms\tB_minus_A_ms\tA_q1\tA_q3\tB_q1\tB_q3\tpaired_ms\tpaired_lo\tpaired_hi\n' >"$out"
sbx() { echo "${SBX[*]} run --bundle $BUNDLES/$1 bench-{id}"; }
# The floor without idexec: abrun gives the ids itself, and idexec's own exec (a
# dynamic binary: ~0.8 ms here) in the floor alone would flatter every runtime row.
floor_direct() { local f; f=$(floor "$@"); echo "${f#"$BIN"/idexec }"; }
ab() { # ab NAME CMD_A CMD_B (argv strings)
	# shellcheck disable=SC2086 # the commands are argv strings
	"${CLEAN_ENV[@]}" "$BIN/abrun" "$N" "$1" "$out" -- $2 -- $3
}
ab "memory+pids limits" "$(sbx bb-base)" "$(sbx bb-limits)"
ab "python seccomp profile" "$(sbx bb-base)" "$(sbx bb-seccomp)"
ab "seccomp profile + limits" "$(sbx bb-base)" "$(sbx bb-seccomp-limits)"
ab "user namespace" "$(sbx bb-base)" "$(sbx bb-userns)"
ab "run /bin/true over the floor" "$(floor_direct bb)" "$(sbx bb-base)"
ab "run py over floor+userns" "$(floor_direct py -U)" "$(sbx py)"
ab "python -c pass over floor+userns" "$(floor_direct py -U)" "${SBX[*]} python --python $PY -c pass"
# The floor without a libc start-up (bundles.sh): what is left is the runtime's own work
if [ -x "$BIN/floorrun-musl" ]; then
	musl_floor() { local f; f=$(floor_direct "$@"); echo "${f/"$BIN"\/floorrun /$BIN/floorrun-musl }"; }
	ab "run /bin/true over the musl floor" "$(musl_floor bb)" "$(sbx bb-base)"
	ab "run py over the musl floor+userns" "$(musl_floor py -U)" "$(sbx py)"
fi
