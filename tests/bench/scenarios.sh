#!/bin/bash
# The timed scenarios of issue 7, one hyperfine invocation each, so that every row of a
# table was measured under the same background load (hyperfine does not interleave
# commands; compare rows within one table only).
# usage: scenarios.sh [true py pycmd limits seccomp userns idle phases]   (default: all)
source "$(dirname "$0")/lib.sh"

# run_rows BUNDLE: "-n 'RT run BUNDLE' CMD" for each runtime; a fresh id per run ({id})
run_rows() {
	local r
	for r in "${RUNTIMES[@]}"; do
		rows+=(-n "$r run $1" "$(rt "$r") run --bundle $BUNDLES/$1 bench-{id}")
	done
}

[ $# -gt 0 ] || set -- true py pycmd limits seccomp userns idle phases
for s in "$@"; do
	rows=()
	case $s in
	true)
		run_rows bb-base
		# the floor, the payload alone, and crun's hybrid-host wrapper alone (its share of the crun row)
		rows+=(-n floor "$(floor bb)" -n direct "$BIN/idexec $W/rootfs/busybox/bin/true"
			-n "crun-hybrid wrapper alone" "$BIN/idexec $BIN/crun-hybrid $W/rootfs/busybox/bin/true"
			-n "idexec alone" "$BIN/idexec $BIN/noop" -n "noop alone" "$BIN/noop")
		;;
	py)
		# the python sandbox: user namespace, no caps, no_new_privs, python profile, limits.
		# floor+userns pays for the user namespace too; floor is issue 7's reference.
		run_rows py
		rows+=(-n floor "$(floor py)" -n floor+userns "$(floor py -U)" -n direct "$BIN/idexec $PY -c pass"
			-n "idexec alone" "$BIN/idexec $BIN/noop" -n "noop alone" "$BIN/noop")
		;;
	pycmd)
		# `sbx-oci python -c pass` end to end: the whole one-shot sandbox (its own bundle,
		# limits, seccomp, Landlock, own init, workdir, result bookkeeping) against the
		# same floor and the interpreter alone
		rows+=(-n "sbx-oci python -c pass" "$BIN/idexec ${SBX[*]} python --python $PY -c pass"
			-n floor+userns "$(floor py -U)" -n direct "$BIN/idexec $PY -c pass"
			-n "idexec alone" "$BIN/idexec $BIN/noop" -n "noop alone" "$BIN/noop")
		;;
	limits) run_rows bb-base && run_rows bb-limits ;;
	seccomp) run_rows bb-base && run_rows bb-seccomp && run_rows bb-seccomp-limits ;;
	userns)
		run_rows bb-base && run_rows bb-userns
		rows+=(-n floor "$(floor bb)" -n floor+userns "$(floor bb -U)")
		;;
	idle)
		# The same run back-to-back and after an untimed idle gap (--prepare): on cgroup v1
		# joining the cgroups was seen to cost 10-15 ms more after a pause.
		for r in "${RUNTIMES[@]}"; do
			rows+=(--prepare true -n "$r run bb-base back-to-back" "$(rt "$r") run --bundle $BUNDLES/bb-base bench-{id}")
			rows+=(--prepare "sleep ${IDLE_GAP:-0.2}" -n "$r run bb-base after ${IDLE_GAP:-0.2}s idle"
				"$(rt "$r") run --bundle $BUNDLES/bb-base bench-{id}")
		done
		rows+=(--prepare "sleep ${IDLE_GAP:-0.2}" -n "floor after ${IDLE_GAP:-0.2}s idle" "$(floor bb)")
		;;
	phases)
		# create/start/delete timed alone; phase.sh (untimed --prepare) puts a fixed id
		# in the state the phase needs.
		for r in "${RUNTIMES[@]}"; do
			c="$(rt "$r")"
			# hyperfine runs --prepare in the clean environment too: pass the settings on
			h="env SBX_OCI=$SBX_OCI BENCH_WORK=$W bash $BENCH_SRC/phase.sh $r ph-$r $BUNDLES/bb-base"
			rows+=(--prepare "$h none" -n "$r create" "$c create --bundle $BUNDLES/bb-base ph-$r"
				--prepare "$h created" -n "$r start" "$c start ph-$r"
				--prepare "$h stopped" -n "$r delete" "$c delete ph-$r")
		done
		;;
	*) echo "scenarios.sh: unknown scenario $s" >&2 && exit 2 ;;
	esac
	hf "$s" "${rows[@]}"
	if [ "$s" = phases ]; then
		for r in "${RUNTIMES[@]}"; do bash "$BENCH_SRC/phase.sh" "$r" "ph-$r" "$BUNDLES/bb-base" none; done
	fi
done
