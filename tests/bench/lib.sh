# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
# Settings and helpers shared by the benchmark scripts (sourced, not run).
#   SBX_OCI   runtime under test (default: the tree's ./sbx-oci)
#   RUNS      hyperfine runs per command (default 50), WARMUP (default 5)
#   BENCH_WORK  scratch dir for rootfs trees, bundles, state roots (default /var/tmp/sbx-oci-bench)
#   RESULTS   hyperfine exports and RESULTS.md (default tests/bench/results)
set -euo pipefail

BENCH_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SBX_OCI=$(readlink -f "${SBX_OCI:-$BENCH_SRC/../../sbx-oci}")
RUNS=${RUNS:-50}
WARMUP=${WARMUP:-5}
W=${BENCH_WORK:-/var/tmp/sbx-oci-bench}
RESULTS=${RESULTS:-$BENCH_SRC/results}
BIN=$W/bin
BUNDLES=$W/bundles
PY=/usr/bin/python3   # Debian's interpreter: a pyenv python3 first on PATH is never used
HOSTID=100000         # user-namespace bundles map container 0-65535 to host 100000+
# Our own cgroup parent, absolute so nothing lands under the caller's cgroup (it may be
# a job's memory cgroup we must not touch); cleanup removes only what is under it.
CG_PREFIX=/sbxbench

# Each runtime keeps its state under our scratch dir, so leftovers are ours to see and
# remove, and containers of other users of the machine are never listed or deleted.
# bundles.sh mounts a tmpfs there: the runtimes' default roots (/run/runc, /run/crun,
# /run/sbx-oci) are on tmpfs on a systemd host, and on this VM's ext4 /run each run
# paid ~0.3 ms of journal work for its state dir (the floor has none).
STATE=$W/state
SBX=("$SBX_OCI" --root "$STATE/sbx-oci")
CRUN=("$BIN/crun-hybrid" "$(command -v crun || echo /usr/bin/crun)" --root "$STATE/crun")
RUNC=("$(command -v runc || echo /usr/sbin/runc)" --root "$STATE/runc")

# hyperfine and the floors run with only the environment the containers get, so that
# the direct and floor rows do not read a different environment than the payload does.
CLEAN_ENV=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=xterm HOME=/root LANG=C.UTF-8)

# rt NAME: the argv (as one string, for hyperfine -N) of runtime NAME, behind idexec
rt() {
	case $1 in
	sbx-oci) echo "$BIN/idexec ${SBX[*]}" ;;
	crun) echo "$BIN/idexec ${CRUN[*]}" ;;
	runc) echo "$BIN/idexec ${RUNC[*]}" ;;
	esac
}
RUNTIMES=(sbx-oci crun runc)

# floor BUNDLE [-U]: the floorrun command with the same rootfs and mounts as BUNDLE
floor() {
	local u=
	[ "${2:-}" = -U ] && u="-U $HOSTID"
	case $1 in
	bb*) echo "$BIN/idexec $BIN/floorrun $u -P $W/rootfs/busybox /bin/true" ;;
	py*) echo "$BIN/idexec $BIN/floorrun $u -b /usr:/usr:ro -b /etc/alternatives:/etc/alternatives:ro -t /tmp" \
		"-b $W/work:/work -P -w /work $W/rootfs/python $PY -c pass" ;;
	esac
}

# hf NAME hyperfine-args...: one hyperfine invocation, exported as results/NAME.json.
# Without -i, a command that exits non-zero aborts the benchmark (and the script).
hf() {
	local name=$1
	shift
	echo "=== $name (runs $RUNS) ==="
	"${CLEAN_ENV[@]}" hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" \
		--export-json "$RESULTS/$name.json" "$@"
}
