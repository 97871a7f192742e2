#!/bin/bash
# Issue 17's numbers: runs through `sbx-oci serve` (a warm interpreter with numpy and
# pandas preloaded) beside the interpreter alone and the one-shot sandbox, in one
# hyperfine invocation with a pause between runs (warm.json), and back to back
# (warm-b2b.json); then WARM_SOAK_RUNS (default 10000) sequential runs
# through the one server with what would show a leak counted before and after (the
# server's and its interpreter's RSS and fds, host mounts, cgroups, state dirs,
# processes: warm-soak.tsv), and WARM_CLIENTS (default 8) clients at once for
# WARM_BURST_RUNS runs (default 400): the throughput (warm-throughput.tsv). Between
# them, interpreter.py: the library's calls, session cells with a value and a figure
# (warm-interpreter.tsv), and sessions.py: SESSIONS_MAX sessions held at once, a cell's
# latency and the memory each costs as they grow (warm-sessions.tsv).
source "$(dirname "$0")/lib.sh"
SOAK=${WARM_SOAK_RUNS:-10000}
CLIENTS=${WARM_CLIENTS:-8}
BURST=${WARM_BURST_RUNS:-400}
SOCK=$W/warm.sock
LOG=$RESULTS/warm-serve.log

"${SBX[@]}" serve --socket "$SOCK" --preload numpy,pandas,matplotlib.pyplot --max-runs "$CLIENTS" --max-sessions 65536 >"$LOG" 2>&1 &
server=$!
stop() {
	kill -TERM "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
}
trap stop EXIT
for _ in $(seq 600); do
	grep -q "listening on" "$LOG" && break
	kill -0 "$server" 2>/dev/null || { cat "$LOG" >&2 && exit 1; }
	sleep 0.1
done
CONNECT="$SBX_OCI python --connect $SOCK"

# 50 ms between runs (hyperfine --prepare, not timed), for every command alike: an
# agent's calls come with its thinking between them, and in that pause the server
# makes the standby (a sandbox joined ahead: serve --standby) that the next run takes.
# Back to back, a run may also wait for one to be made: warm-b2b below.
# a session's cell (--session: a fork of the session's state, which has numpy and
# pandas from the preload and a variable of its own)
$CONNECT --session bench -c 'import numpy; n = 0' >/dev/null
hf warm --prepare "sleep 0.05" -n "python3 -c pass" "$BIN/idexec $PY -c pass" \
	-n "sbx-oci python --connect --session: a cell" "$BIN/idexec $CONNECT --session bench -c n+=1" \
	-n "sbx-oci python -c pass" "$BIN/idexec ${SBX[*]} python --python $PY -c pass" \
	-n "sbx-oci python --connect -c print(1)" "$BIN/idexec $CONNECT -c print(1)" \
	-n "python3 import numpy, pandas" "$BIN/idexec $PY -c 'import numpy, pandas; print(1)'" \
	-n "sbx-oci python import numpy, pandas" "$BIN/idexec ${SBX[*]} python --python $PY -c 'import numpy, pandas; print(1)'" \
	-n "sbx-oci python --connect import numpy, pandas" "$BIN/idexec $CONNECT -c 'import numpy, pandas; print(1)'" \
	-n "idexec alone" "$BIN/idexec $BIN/noop" -n "noop alone" "$BIN/noop"
$CONNECT --session bench --end-session
hf warm-b2b -n "python3 -c pass" "$BIN/idexec $PY -c pass" \
	-n "sbx-oci python --connect -c print(1)" "$BIN/idexec $CONNECT -c print(1)" \
	-n "idexec alone" "$BIN/idexec $BIN/noop" -n "noop alone" "$BIN/noop"

# issue 31's rows: the library's calls, a cell with and without its value, a figure
"$PY" "$BENCH_SRC/interpreter.py" "$SBX_OCI" "$SOCK" "$RESULTS/warm-interpreter.tsv"
# issue 33's fourth row: sessions held at once, up to SESSIONS_MAX (default 1000)
"$PY" "$BENCH_SRC/sessions.py" "$SOCK" "$server" "$RESULTS/warm-sessions.tsv"

count() {
	# idle first: the last run torn down, its standby made again
	sleep 1
	# the warm interpreter of now: the server's child that runs the zygote (--recycle
	# replaces it every 1000 runs; the other children are the standbys' workers)
	local zygote p
	for p in $(ps -o pid= --ppid "$server"); do
		grep -q sbx-oci-zygote "/proc/$p/cmdline" 2>/dev/null && zygote=$p
	done
	echo "server_rss_kb $(awk '/^VmRSS/ { print $2 }' "/proc/$server/status")"
	echo "server_fds $(ls "/proc/$server/fd" | wc -l)"
	echo "interpreter_rss_kb $(awk '/^VmRSS/ { print $2 }' "/proc/$zygote/status" 2>/dev/null || echo gone)"
	echo "interpreter_fds $(ls "/proc/$zygote/fd" 2>/dev/null | wc -l)"
	echo "server_children $(ps -o pid= --ppid "$server" | wc -l)"
	echo "mounts_of_bench $(grep -cE "$W|sbx-oci" /proc/self/mountinfo || true)"
	# the server's kept cgroups (one per worker slot, reused run after run) are counted
	# apart: they may grow up to the most workers it had at once, not with the runs
	echo "cgroups_of_sbx_oci $(find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -type d -path '*/sbx-oci/*' ! -name '@serve-*' | wc -l)"
	echo "kept_cgroup_slots $(find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -type d -path '*/sbx-oci/@serve-*' -printf '%f\n' | sort -u | wc -l)"
	echo "state_dirs $(find "$STATE/sbx-oci" -mindepth 1 -maxdepth 1 ! -name '@*' | wc -l)"
	echo "sandbox_processes $(ps -u 101000 -o pid= | wc -l)"
}
$CONNECT -c "print(1)" >/dev/null # one run first: the skeleton exists, the caches are made
before=$(count)
t0=$(date +%s.%N)
for _ in $(seq "$SOAK"); do
	$CONNECT -c 'print(1)' >/dev/null || { echo "warm.sh: a run failed" >&2 && exit 1; }
done
t1=$(date +%s.%N)
after=$(count)
out=$RESULTS/warm-soak.tsv
printf 'what\tbefore\tafter (%s sequential runs, %.1f runs/s)\n' "$SOAK" "$(echo "$SOAK / ($t1 - $t0)" | bc -l)" >"$out"
join <(sort <<<"$before") <(sort <<<"$after") | tr ' ' '\t' >>"$out"
cat "$out"

# CLIENTS at once: each client runs BURST/CLIENTS runs back to back
per=$((BURST / CLIENTS))
t0=$(date +%s.%N)
for c in $(seq "$CLIENTS"); do
	(for _ in $(seq "$per"); do $CONNECT -c 'print(1)' >/dev/null || exit 1; done) &
done
fail=0
for c in $(seq "$CLIENTS"); do wait -n || fail=1; done
t1=$(date +%s.%N)
printf 'clients\truns\tseconds\truns_per_s\tfailed\n%s\t%s\t%.2f\t%.1f\t%s\n' "$CLIENTS" $((per * CLIENTS)) \
	"$(echo "$t1 - $t0" | bc -l)" "$(echo "$per * $CLIENTS / ($t1 - $t0)" | bc -l)" "$fail" >"$RESULTS/warm-throughput.tsv"
cat "$RESULTS/warm-throughput.tsv"
# growth in what the server holds, or anything of the runs left: a leak (RSS is
# reported, not judged: a new warm interpreter's is its own)
if awk -F'\t' 'NR > 1 && $1 !~ /rss|kept/ && $3 > $2 { bad = 1 } END { exit !bad }' "$out"; then
	echo "warm.sh: LEAK after $SOAK runs through one server (above)" >&2
	exit 1
fi
# at most a slot per worker the server may have at once: its standbys (2), its runs
# (--max-runs) and the runs being torn down (4 per --max-runs place)
if awk -F'\t' -v most=$((2 + 5 * CLIENTS)) '$1 == "kept_cgroup_slots" && $3 > most { bad = 1 } END { exit !bad }' "$out"; then
	echo "warm.sh: more kept cgroups after $SOAK runs than the server can have workers at once (above)" >&2
	exit 1
fi
