#!/usr/bin/env bats
# containerd 1.6 -> containerd-shim-runc-v2 -> the runtime under test (CONTRACT.md §4):
# ctr with --runc-binary (the runtime name io.containerd.runc.v2 and the binary as an
# option), and the CRI path with the runtime handler `sbx` of contrib/containerd/config.toml.
# Run through tests/clients/run.sh, which starts the private containerd.

load clients

CTR_ROOT=$SBX_CLIENT_TMP/ctr-root # --runc-root: the runtime's state dir is CTR_ROOT/<namespace>

# ctr run through the shim with the runtime under test
crun_() {
	timeout 120 ctr run --runtime io.containerd.runc.v2 --runc-binary "$SBX_CLIENT_RT" --runc-root "$CTR_ROOT" \
		--fifo-dir "$SBX_CLIENT_TMP/fifo" "$@"
}

cexec() {
	ctr task exec --fifo-dir "$SBX_CLIENT_TMP/fifo" --exec-id "e$RANDOM" "$@"
}

# the runtime's own view of a ctr container
rt_state() {
	"$SBX_CLIENT_RT" --root "$CTR_ROOT/$CONTAINERD_NAMESPACE" state "$1"
}

teardown() {
	local t
	for t in $(timeout 20 ctr task ls -q 2>/dev/null); do
		ctr task kill -s SIGKILL "$t" >/dev/null 2>&1 || true
		ctr task rm -f "$t" >/dev/null 2>&1 || true
	done
	for t in $(timeout 20 ctr containers ls -q 2>/dev/null); do
		ctr containers rm "$t" >/dev/null 2>&1 || true
	done
}

# until `ctr task ls` shows the task in STATUS (5 s)
wait_task() {
	local i
	for i in $(seq 50); do
		ctr task ls | grep -Eq "^$1 +[0-9]+ +$2" && return 0
		sleep 0.1
	done
	ctr task ls >&2
	return 1
}

@test "ctr: run passes output and the exit code through" {
	run crun_ --rm "$IMG" c-exit sh -c 'echo from-inside; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = from-inside ]
}

@test "ctr: run -t gives the process a pty" {
	on_tty ctr run --runtime io.containerd.runc.v2 --runc-binary "$SBX_CLIENT_RT" --runc-root "$CTR_ROOT" \
		--fifo-dir "$SBX_CLIENT_TMP/fifo" --rm -t "$IMG" c-tty sh -c "'tty; [ -t 0 ] && [ -t 1 ] && echo both-tty'"
	[ "$status" -eq 0 ]
	[[ $output =~ /dev/pts/[0-9]+ ]]
	[[ $output == *both-tty* ]]
}

@test "ctr: run -d is the runtime's container; task exec (exit code, pid namespace) and exec -t" {
	ok crun_ -d "$IMG" c-det sleep 1000
	wait_task c-det RUNNING
	# the shim drove the runtime under test: its state root holds the container
	ok rt_state c-det
	[ "$(echo "$output" | jq -r .status)" = running ]
	[[ $(echo "$output" | jq -r .bundle) == "$SBX_CLIENT_TMP"/containerd-state/* ]]
	ok cexec c-det sh -c 'tr "\\0" " " < /proc/1/cmdline'
	[[ $output == sleep*1000* ]]
	run cexec c-det sh -c 'exit 9'
	[ "$status" -eq 9 ]
	on_tty ctr task exec -t --fifo-dir "$SBX_CLIENT_TMP/fifo" --exec-id etty c-det tty
	[[ $output =~ /dev/pts/[0-9]+ ]]
}

@test "ctr: task ps lists the container's processes (host pids)" {
	ok crun_ -d "$IMG" c-ps sh -c 'sleep 1001 & sleep 1002 & wait'
	wait_task c-ps RUNNING
	init=$(ctr task ls | awk '$1 == "c-ps" { print $2 }')
	for i in $(seq 50); do
		ok ctr task ps c-ps
		[ "$(echo "$output" | grep -cE '^[0-9]+')" -ge 3 ] && break
		sleep 0.1
	done
	pids=$(echo "$output" | awk '/^[0-9]+/ { print $1 }')
	echo "$pids" | grep -qx "$init"
	[ "$(echo "$pids" | wc -l)" -eq 3 ]
	for p in $pids; do
		grep -q "sleep\|sh" "/proc/$p/comm"
	done
}

@test "ctr: task pause freezes the container, resume thaws it" {
	d=$(shared_dir)
	ok crun_ -d --mount "type=bind,src=$d,dst=/data,options=rbind:rw" "$IMG" c-pause sh -c "$COUNTER"
	wait_file "$d/n"
	ok ctr task pause c-pause
	wait_task c-pause PAUSED
	[ "$(rt_state c-pause | jq -r .status)" = paused ]
	a=$(cat "$d/n")
	sleep 0.6
	[ "$(cat "$d/n")" = "$a" ]
	ok ctr task resume c-pause
	wait_task c-pause RUNNING
	sleep 0.6
	[ "$(cat "$d/n")" -gt "$a" ]
}

@test "ctr: task kill delivers a signal; SIGKILL ends ctr run with 137" {
	d=$(shared_dir)
	crun_ --mount "type=bind,src=$d,dst=/data,options=rbind:rw" "$IMG" c-kill sh -c \
		'trap "echo got-usr1 > /data/usr1" USR1; echo up > /data/ready; while :; do sleep 0.1; done' \
		>/dev/null 2>&1 </dev/null &
	ctr_pid=$!
	wait_file "$d/ready"
	ok ctr task kill -s SIGUSR1 c-kill
	wait_file "$d/usr1"
	[ "$(cat "$d/usr1")" = got-usr1 ]
	ok ctr task kill -s SIGKILL c-kill
	rc=0
	wait "$ctr_pid" || rc=$?
	[ "$rc" -eq 137 ]
}

@test "ctr: --memory-limit is set on the cgroup and enforced (OOM kill, 137)" {
	ok crun_ -d --memory-limit 33554432 "$IMG" c-mem sleep 1000
	wait_task c-mem RUNNING
	# ctr mounts no cgroupfs in the container: read the limit where its cgroup is
	path=$(cexec c-mem cat /proc/self/cgroup | awk -F: '$2 == "memory" || $2 == "" { print $3; exit }')
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		[ "$(cat "/sys/fs/cgroup/memory$path/memory.limit_in_bytes")" = 33554432 ]
	else
		[ "$(cat "/sys/fs/cgroup$path/memory.max")" = 33554432 ]
	fi
	run cexec c-mem sh -c 'tail /dev/zero; echo "hog=$?"'
	[[ $output == *hog=137* ]]
}

@test "cri: containerd loaded the config with the sbx runtime handler" {
	ok ctr plugins ls
	echo "$output" | grep -E '^io\.containerd\.grpc\.v1 +cri +.* ok *$'
	ok $SBX_CRI version
	[[ $output == containerd* ]]
}

# A pod with handler sbx through its whole life: run, a container (exec, update, stop,
# remove), stop and remove the pod. $1: the pod's name; the rest: run-pod's network options.
cri_pod_lifecycle() {
	local name=$1
	shift
	root=$SBX_CLIENT_TMP/sbx-root/k8s.io # the Root option of the sbx handler, plus the namespace
	ok $SBX_CRI run-pod "$name" sbx "/sbx-clients-cri/$name" "$@"
	pod=$output
	"$SBX_CLIENT_RT" --root "$root" state "$pod" | jq -e '.status == "running"'
	# sh is not pid 1 (the pod's pause is): on stop its child outlives it, and
	# containerd's `kill --all ID 9` must still reach that child
	ok $SBX_CRI create "$pod" c1 "$IMG" /bin/sh -c 'echo started; sleep 100123 & wait'
	cid=$output
	ok $SBX_CRI start "$cid"
	ok $SBX_CRI status "$cid"
	[ "$output" = "running 0" ]
	ok "$SBX_CLIENT_RT" --root "$root" state "$cid"
	[ "$(echo "$output" | jq -r .status)" = running ]
	# not the default runtime's root
	[ ! -e "$SBX_CLIENT_TMP/runc-root/k8s.io/$cid" ]
	ok $SBX_CRI exec "$cid" sh -c 'tr "\\0" " " < /proc/1/cmdline; echo; echo exec-ok'
	[[ ${lines[0]} == */bin/sleep*1000000* ]] # the pod's pid namespace, joined
	[ "${lines[1]}" = exec-ok ]
	run $SBX_CRI exec "$cid" sh -c 'exit 4'
	[ "$status" -eq 4 ]
	ok $SBX_CRI update-memory "$cid" 67108864
	ok $SBX_CRI exec "$cid" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max'
	[ "$output" = 67108864 ]
	ok $SBX_CRI stop "$cid"
	ok $SBX_CRI status "$cid"
	[[ $output == exited* ]]
	! ps -eo args | grep -qx 'sleep 100123'
	ok $SBX_CRI rm "$cid"
	run "$SBX_CLIENT_RT" --root "$root" state "$cid"
	[ "$status" -ne 0 ]
	ok $SBX_CRI stop-pod "$pod"
	ok $SBX_CRI rm-pod "$pod"
	run "$SBX_CLIENT_RT" --root "$root" state "$pod"
	[ "$status" -ne 0 ]
}

@test "cri: a pod with handler sbx runs on the runtime under test (exec, update, stop, remove), host network" {
	cri_pod_lifecycle pod-a
}

@test "cri: the same on a CNI pod network" {
	cri_pod_lifecycle pod-b --pod-network
}

@test "cri: a pod on a CNI pod network, with a net.* sysctl, runs on the runtime under test" {
	root=$SBX_CLIENT_TMP/sbx-root/k8s.io
	# the kubelet passes the pod's sysctls; net.* ones live in the network namespace
	# containerd made for the pod and hands the runtime by path
	ok $SBX_CRI run-pod pod-net sbx /sbx-clients-cri/pod-net --pod-network --sysctl net.ipv4.ping_group_range="0 2000"
	pod=$output
	"$SBX_CLIENT_RT" --root "$root" state "$pod" | jq -e '.status == "running"'
	ok $SBX_CRI pod-ip "$pod"
	ip=$output
	[[ $ip == 10.99.77.* ]]
	ok $SBX_CRI create "$pod" web "$IMG" /bin/sh -c 'while :; do echo hello-from-pod | nc -l -p 8080; done'
	cid=$output
	ok $SBX_CRI start "$cid"
	ok $SBX_CRI exec "$cid" sh -c 'cat /proc/sys/net/ipv4/ping_group_range; ip -o -4 addr show eth0'
	[[ ${lines[0]} =~ ^0[[:space:]]+2000$ ]]
	[[ ${lines[1]} == *"inet $ip/"* ]]
	# the host's own value is untouched, and the host reaches the pod (only the pod)
	[[ ! "$(cat /proc/sys/net/ipv4/ping_group_range)" =~ ^0[[:space:]]+2000$ ]]
	for _ in $(seq 50); do
		got=$(timeout 2 bash -c "exec 3<>/dev/tcp/$ip/8080 && cat <&3" 2>/dev/null) && [ -n "$got" ] && break
		sleep 0.1
	done
	[ "$got" = hello-from-pod ]
	ok $SBX_CRI stop "$cid"
	ok $SBX_CRI rm "$cid"
	ok $SBX_CRI stop-pod "$pod"
	ok $SBX_CRI rm-pod "$pod"
	run "$SBX_CLIENT_RT" --root "$root" state "$pod"
	[ "$status" -ne 0 ]
}
