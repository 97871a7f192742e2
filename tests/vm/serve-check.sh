#!/bin/sh
# serve-check.sh SBX_OCI: warm runs on a pure cgroup v2 host, inside the QEMU guest of
# run-python-check.sh. There the warm interpreter forks each run's process without
# clone3's CLONE_INTO_CGROUP (runtime/container/exec.c: clone_child) and the process
# is moved into its sandbox's cgroup by pid: a run must be in its cgroup (its
# /proc/self/cgroup, and a --memory limit that OOM-kills it), a session's cell too.
# libsbx-warm.so is beside SBX_OCI. Prints what failed; exit 1 then.
set -u
sbx=$1
dir=$(mktemp -d /tmp/serve-check.XXXXXX) || exit 1
sock=$dir/s.sock
fail=0
"$sbx" serve --socket "$sock" --standby 1 >"$dir/serve.log" 2>&1 &
server=$!
i=0
until grep -q "listening on" "$dir/serve.log"; do
	i=$((i + 1))
	if [ $i -gt 600 ] || ! kill -0 $server 2>/dev/null; then
		echo "serve-check: the server did not start:" >&2
		cat "$dir/serve.log" >&2
		exit 1
	fi
	sleep 0.1
done
check() { # WHAT EXPECTED GOT
	if [ "$2" != "$3" ]; then
		echo "serve-check: $1: expected '$2', got '$3'" >&2
		fail=1
	fi
}

# a run that takes the standby, and one with a sandbox of its own: each in a cgroup
# of its own (the sandbox's cgroup namespace shows it as its root)
out=$("$sbx" python --connect "$sock" -c 'print(open("/proc/self/cgroup").read().strip())')
check "a standby's run: its cgroup" "0::/" "$out"
out=$("$sbx" python --connect "$sock" --memory 256M -c 'print(open("/proc/self/cgroup").read().strip())')
check "a run with --memory: its cgroup" "0::/" "$out"

# the limit holds for the warm fork: a memory bomb is OOM-killed by the cgroup
"$sbx" python --connect "$sock" --memory 64M --result "$dir/oom.json" \
	-c 'b = []
while True: b.append(bytearray(1 << 20))' >/dev/null 2>&1
check "a memory bomb under --memory 64M: exit status" 137 $?
grep -q '"oom_killed": *true' "$dir/oom.json" || {
	echo "serve-check: the memory bomb's result does not say oom_killed:" >&2
	cat "$dir/oom.json" >&2
	fail=1
}

# kept cgroups (runtime/cgroup/cgroup_kept.c): each worker slot's cgroup is recycled
# by the next sandbox in the slot, not made anew. Each run here says "up" and sleeps,
# while its container's state names its cgroup; two runs in one cgroup with the same
# inode: recycled. The first one OOM-kills itself: the runs after it report their own
# numbers (no OOM kill, their own peak).
sleep 1
seen=
recycled=0
for i in 0 1 2 3 4; do
	code='import time; print("up", flush=True); time.sleep(1.5)'
	[ $i = 0 ] && code="$code"'
b = []
while True: b.append(bytearray(1 << 20))'
	"$sbx" python --connect "$sock" --id "kept$i" --memory 64M --result "$dir/kept$i.json" -c "$code" \
		>"$dir/kept$i.out" 2>&1 &
	client=$!
	j=0
	until grep -q up "$dir/kept$i.out" 2>/dev/null || [ $j -gt 200 ]; do j=$((j + 1)); sleep 0.05; done
	cg=$(sed -n 's/.*"cgroupPath":"\([^"]*\)".*/\1/p' "/run/sbx-oci/kept$i/state.json" 2>/dev/null)
	ino=$(stat -c %i "/sys/fs/cgroup$cg" 2>/dev/null)
	case "$cg" in /sbx-oci/@serve-*-$server-*) ;; *) echo "serve-check: run $i: not a kept cgroup: '$cg'" >&2; fail=1 ;; esac
	case " $seen " in *" $cg:$ino "*) recycled=$((recycled + 1)) ;; esac
	seen="$seen $cg:$ino"
	wait $client
	if [ $i = 0 ]; then
		grep -q '"oom_killed": *true' "$dir/kept0.json" || { echo "serve-check: the bomb was not OOM-killed" >&2; fail=1; }
		sleep 1 # what the kernel frees after the bomb's processes
		continue
	fi
	peak=$(sed -n 's/.*"peak_memory_bytes": *\([0-9]*\).*/\1/p' "$dir/kept$i.json")
	grep -q '"oom_killed": *false' "$dir/kept$i.json" && [ "${peak:-0}" -gt 0 ] && [ "$peak" -lt 33554432 ] || {
		echo "serve-check: run $i after the memory bomb:" >&2
		cat "$dir/kept$i.json" >&2
		fail=1
	}
done
[ $recycled -ge 1 ] || { echo "serve-check: no kept cgroup was recycled:$seen" >&2; fail=1; }

# a session: its cells run in its sandbox's cgroup, and keep their state
"$sbx" python --connect "$sock" --session s -c 'x = 41' >/dev/null
out=$("$sbx" python --connect "$sock" --session s -c 'print(x + 1, open("/proc/self/cgroup").read().strip())')
check "a session's second cell" "42 0::/" "$out"
"$sbx" python --connect "$sock" --session s --end-session >/dev/null

kill -TERM $server
wait $server
check "the server's exit status after SIGTERM" 0 $?
left=$(ls -d /sys/fs/cgroup/sbx-oci/@serve-*-$server-* 2>/dev/null)
check "kept cgroups left after the server stopped" "" "$left"
[ $fail = 0 ] && echo "serve-check: warm runs and a session joined their cgroups; the memory limit held; kept cgroups were recycled ($recycled of 5 runs in one used before) and removed"
rm -rf "$dir"
exit $fail
