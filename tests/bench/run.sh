#!/bin/bash
# The one-shot benchmark of issue 7 (`make bench`): sbx-oci against crun, runc and a bare
# floor launcher, one hyperfine invocation per scenario, then ratios and
# results/RESULTS.md. A benchmark, not a test: no timing is asserted. It fails when a
# runtime cannot run a bundle (its rows would mean nothing) and when runs leak.
#   SBX_OCI=path RUNS=50 WARMUP=5 RSS_N=20 SOAK_RUNS=1000 IDLE_GAP=0.2 BENCH_WORK=dir RESULTS=dir
#   run.sh [scenario ...]: only these (true py pycmd limits seccomp userns idle phases deltas
#   vm-deltas vm-systemd rss soak costs warm mcp-http jupyter warm-ab); DELTA_N=60 pairs per delta, VM_DELTA_N=16 in the cgroup v2 guest,
#   COSTS_N=40 runs per way in costs, WARM_AB_OLD=path: an older sbx-oci beside this one in warm's throughput
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (namespaces, mounts, cgroups)" >&2 && exit 1; }
[ -x "$SBX_OCI" ] || { echo "run.sh: no runtime at $SBX_OCI (build it, or set SBX_OCI)" >&2 && exit 1; }
# Debian's packages: crun and runc are the reference, busybox-static the payload
need=()
for t in hyperfine:hyperfine crun:crun runc:runc jq:jq gcc:gcc /usr/bin/time:time \
	/bin/busybox:busybox-static /usr/bin/python3:python3 bpftrace:bpftrace; do
	command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "run.sh: installing ${need[*]}"
	apt-get install -y --no-install-recommends "${need[@]}"
fi

trap '"$BENCH_SRC/cleanup.sh"' EXIT
mkdir -p "$RESULTS"
rm -f "$RESULTS"/*.json "$RESULTS"/*.tsv "$RESULTS/RESULTS.md"
"$BENCH_SRC/bundles.sh"

scn=()
[ $# -gt 0 ] || set -- true py pycmd limits seccomp userns idle phases deltas vm-deltas vm-systemd rss soak costs warm mcp-http jupyter \
	${WARM_AB_OLD:+warm-ab}
for s in "$@"; do
	case $s in
	rss) "$BENCH_SRC/rss.sh" ;;
	deltas) "$BENCH_SRC/deltas.sh" ;;
	vm-deltas) "$BENCH_SRC/vm-deltas.sh" ;;
	vm-systemd) "$BENCH_SRC/vm-systemd.sh" ;;
	soak) leak=0 && "$BENCH_SRC/soak.sh" || leak=1 ;; # the report is still written
	warm) warm_leak=0 && "$BENCH_SRC/warm.sh" || warm_leak=1 ;;
	warm-ab) "$BENCH_SRC/warm-ab.sh" ;;
	mcp-http) "$BENCH_SRC/mcp-http.sh" ;;
	jupyter) "$BENCH_SRC/jupyter.sh" ;;
	costs) "$PY" "$BENCH_SRC/costs.py" "$RESULTS/costs.md" "${COSTS_N:-40}" "${SBX[@]}" ;;
	*) scn+=("$s") ;;
	esac
done
[ ${#scn[@]} -eq 0 ] || "$BENCH_SRC/scenarios.sh" "${scn[@]}"

echo "=== ratios (medians; RUNS=$RUNS; $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)) ==="
"$BENCH_SRC/report.py" "$RESULTS"
echo "written $RESULTS/RESULTS.md"
[ "${leak:-0}" = 0 ] || { echo "run.sh: the sequential runs leaked (see soak above)" >&2 && exit 1; }
[ "${warm_leak:-0}" = 0 ] || { echo "run.sh: the runs through sbx-oci serve failed or leaked (see warm above)" >&2 && exit 1; }
