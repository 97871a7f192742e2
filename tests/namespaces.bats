#!/usr/bin/env bats
# linux.namespaces: every type new or joined by path, user namespace mappings,
# hostname/domainname, sysctls, time offsets, the cgroup namespace.

load helpers

ns_inode() { readlink "/proc/$1/ns/$2"; }
# holder_ready PID: an `unshare ... sleep` holding namespaces has made them (it execs
# sleep last): on a slow machine a fixed pause may end before.
holder_ready() {
	local i
	for i in $(seq 200); do
		[ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] && return 0
		sleep 0.05
	done
	return 1
}

@test "namespaces: each listed namespace is new, each unlisted one is the host's" {
	update_config '.linux.namespaces = [{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"},{"type":"cgroup"}]'
	set_args sh -c 'for n in pid net ipc uts mnt cgroup user time; do echo "$n $(readlink /proc/self/ns/$n)"; done'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	for n in pid net ipc uts mnt cgroup; do
		inside=$(awk -v n=$n '$1 == n {print $2}' <<<"$output")
		[ -n "$inside" ]
		[ "$inside" != "$(ns_inode self $n)" ]
	done
	for n in user time; do
		[ "$(awk -v n=$n '$1 == n {print $2}' <<<"$output")" = "$(ns_inode self $n)" ]
	done
}

@test "namespaces: the pid namespace makes the program pid 1 and hides host processes" {
	set_args sh -c 'echo $$; ls /proc | grep -c "^[0-9]"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" -le 3 ]
}

@test "namespaces: the network namespace has only lo, up (as runc and crun)" {
	# (the client connects once the listener listens: 7777 is 1E61, 0A is LISTEN)
	set_args sh -c 'ls /sys/class/net; cat /sys/class/net/lo/flags; echo hi | nc -l -p 7777 & i=0; while [ $i -lt 200 ] && ! grep -q ":1E61 00000000:0000 0A" /proc/net/tcp; do sleep 0.05; i=$((i + 1)); done; nc 127.0.0.1 7777 </dev/null; wait'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = lo ]
	[ "${lines[1]}" = 0x9 ]
	[ "${lines[2]}" = hi ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "namespaces: hostname and domainname are set in the new UTS namespace only" {
	update_config '.hostname = "box-a" | .domainname = "example.test"'
	set_args sh -c 'hostname; cat /proc/sys/kernel/domainname'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = box-a ]
	[ "${lines[1]}" = example.test ]
	[ "$(hostname)" != box-a ]
}

@test "namespaces: joining a network namespace by path" {
	unshare --net sleep 100 &
	local holder=$!
	holder_ready "$holder"
	update_config --arg p "/proc/$holder/ns/net" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)'
	set_args readlink /proc/self/ns/net
	sbx run --bundle "$BUNDLE" "$ID"
	local want
	want=$(ns_inode "$holder" net)
	kill "$holder"
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
}

@test "namespaces: joining a pid and an ipc namespace by path" {
	unshare --pid --ipc --fork --mount-proc sleep 100 &
	local holder_parent=$! holder= i
	for i in $(seq 200); do
		holder=$(pgrep -P "$holder_parent" sleep || true)
		[ -z "$holder" ] || break
		sleep 0.05
	done
	[ -n "$holder" ]
	update_config --arg p "/proc/$holder/ns/pid" --arg i "/proc/$holder/ns/ipc" \
		'.linux.namespaces |= map(if .type == "pid" then .path = $p elif .type == "ipc" then .path = $i else . end)'
	set_args sh -c 'readlink /proc/self/ns/pid_for_children; readlink /proc/self/ns/ipc'
	sbx run --bundle "$BUNDLE" "$ID"
	local want_pid want_ipc
	want_pid=$(ns_inode "$holder" pid)
	want_ipc=$(ns_inode "$holder" ipc)
	kill "$holder_parent" "$holder" 2>/dev/null || true
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$want_pid" ]
	[ "${lines[1]}" = "$want_ipc" ]
}

@test "namespaces: a path that is not a namespace of that type is refused" {
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/ipc" else . end)'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "is not a network namespace"
	assert_no_state "$ID"
}

@test "userns: uid and gid maps are what the config says" {
	requires userns
	use_userns
	set_args sh -c 'cat /proc/self/uid_map /proc/self/gid_map; id -u'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(echo ${lines[0]})" = "0 100000 65536" ]
	[ "$(echo ${lines[1]})" = "0 100000 65536" ]
	[ "${lines[2]}" = 0 ]
}

@test "userns: container root is an unprivileged host user" {
	requires userns
	use_userns
	update_config '.process.args = ["sleep", "100"]'
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx_ok state "$ID"
	pid=$(jq -r .pid <<<"$output")
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" = 100000 ]
	[ "$(awk '/^Gid:/ {print $2}' "/proc/$pid/status")" = 100000 ]
}

@test "userns: joining a user namespace by path together with its network namespace" {
	requires userns
	unshare --user --map-root-user --net sleep 100 &
	local holder=$!
	holder_ready "$holder"
	update_config --arg u "/proc/$holder/ns/user" --arg n "/proc/$holder/ns/net" \
		'.linux.namespaces |= map(if .type == "network" then .path = $n else . end) | .linux.namespaces += [{"type":"user","path":$u}]
		| .mounts |= map(.options |= map(select(. != "gid=5")))'
	# the container's own pid/mount/... namespaces are created inside the joined user
	# namespace; only its uid/gid 0 is mapped, so devpts cannot use gid=5
	set_args sh -c 'readlink /proc/self/ns/user; readlink /proc/self/ns/net; cat /proc/self/uid_map'
	sbx run --bundle "$BUNDLE" "$ID"
	local want_user want_net
	want_user=$(ns_inode "$holder" user)
	want_net=$(ns_inode "$holder" net)
	kill "$holder"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$want_user" ]
	[ "${lines[1]}" = "$want_net" ]
	[ "$(echo ${lines[2]})" = "0 0 1" ]
}

@test "userns: a new user namespace together with a joined network namespace (two stages)" {
	requires userns
	unshare --net sleep 100 &
	local holder=$!
	holder_ready "$holder"
	use_userns
	# sysfs can only be mounted for a network namespace the container's user namespace
	# owns; this one is the host's, so bind /sys instead (as runc's rootless spec does)
	update_config --arg n "/proc/$holder/ns/net" '.linux.namespaces |= map(if .type == "network" then .path = $n else . end)
		| .mounts |= map(if .destination == "/sys" then {"destination":"/sys","type":"bind","source":"/sys","options":["rbind","ro","nosuid","nodev","noexec"]} else . end)'
	set_args sh -c 'readlink /proc/self/ns/net; cat /proc/self/uid_map; echo $$'
	sbx run --bundle "$BUNDLE" "$ID"
	local want_net
	want_net=$(ns_inode "$holder" net)
	kill "$holder"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$want_net" ]
	[ "$(echo ${lines[1]})" = "0 100000 65536" ]
	[ "${lines[2]}" = 1 ]
}

@test "sysctl: a namespaced sysctl is set inside and the host keeps its value" {
	local before
	before=$(cat /proc/sys/net/ipv4/ip_forward)
	local want=$((1 - before))
	update_config --arg v "$want" '.linux.sysctl = {"net.ipv4.ip_forward": $v, "kernel.shmmni": "2048"}'
	set_args sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmni'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$want" ]
	[ "${lines[1]}" = 2048 ]
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$before" ]
}

@test "sysctl: CVE-2025-52881 a tmpfs over /proc/sys/net is refused and the host value is untouched" {
	# a config mount would shadow /proc/sys/net; mounts inside /proc are refused
	# (CVE-2019-16884), and sysctls go through a private procfs anyway
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1"}
		| .mounts += [{"destination":"/proc/sys/net","type":"tmpfs","source":"tmpfs","options":["rw"]}]
		| .linux.readonlyPaths = []'
	local before
	before=$(cat /proc/sys/net/ipv4/ip_forward)
	set_args sh -c 'ls /proc/sys/net | wc -l'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "/proc/sys/net"
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$before" ]
	assert_no_state "$ID"
}

@test "mounts: CVE-2019-16884 only procfs and lxcfs-style files may be mounted inside /proc" {
	echo "fake meminfo" >"$BATS_TEST_TMPDIR/meminfo"
	update_config --arg m "$BATS_TEST_TMPDIR/meminfo" '.mounts += [{"destination":"/proc/meminfo","type":"bind","source":$m,"options":["bind","ro"]}]'
	set_args cat /proc/meminfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "fake meminfo" ]
	update_config '.mounts += [{"destination":"/proc/self","type":"tmpfs","source":"tmpfs"}]'
	sbx_split run --bundle "$BUNDLE" "$ID-b"
	assert_one_line_error "/proc/self"
	assert_no_state "$ID-b"
}

@test "timens: monotonic and boottime offsets are applied" {
	requires timens
	update_config '.linux.namespaces += [{"type":"time"}] | .linux.timeOffsets = {"boottime": {"secs": 86400}, "monotonic": {"secs": 3600}}'
	set_args cat /proc/uptime
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	local inside host
	inside=$(cut -d. -f1 <<<"$output")
	host=$(cut -d. -f1 /proc/uptime)
	[ $((inside - host)) -ge 86390 ]
	[ $((inside - host)) -le 86410 ]
}

@test "cgroupns: the container sees its own cgroup as /" {
	set_args cat /proc/self/cgroup
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# every hierarchy the container was placed in shows "/" (its cgroup namespace root)
	grep -q ':freezer:/$' <<<"$output" || grep -q '^0::/$' <<<"$output"
}

@test "sysctl: a net sysctl applies in a joined network namespace that is not the host's (podman's bridge network hands one over)" {
	local host_value holder
	host_value=$(cat /proc/sys/net/ipv4/ping_group_range)
	unshare --net sleep 100 &
	holder=$!
	for _ in $(seq 50); do [ "$(readlink /proc/$holder/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05; done
	update_config --arg p "/proc/$holder/ns/net" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)
		| .linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}'
	set_args cat /proc/sys/net/ipv4/ping_group_range
	sbx run --bundle "$BUNDLE" "$ID"
	local seen
	seen=$(nsenter --net=/proc/$holder/ns/net cat /proc/sys/net/ipv4/ping_group_range)
	kill "$holder"
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "0 0" ]
	[ "$(echo $seen)" = "0 0" ]
	[ "$(cat /proc/sys/net/ipv4/ping_group_range)" = "$host_value" ]
}

@test "sysfs in a user namespace that shares the host's network namespace: the host's /sys is bound read-only instead (as runc and crun), masks still apply" {
	requires userns
	use_userns
	update_config '.linux.namespaces |= map(select(.type != "network"))'
	set_args sh -c 'awk "\$5 == \"/sys\" { print \$5, \$6 }" /proc/self/mountinfo; ls /sys/class/net | grep -c .; /bin/probe write /sys/kernel/x; cat /sys/firmware/* 2>/dev/null | wc -c'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "/sys ro,"* ]]
	[ "${lines[1]}" -eq "$(ls /sys/class/net | grep -c .)" ]
	[ "${lines[2]}" = EROFS ]
	[ "${lines[3]}" = 0 ]
}
