#!/usr/bin/env bats
# What a hybrid host's v1 hierarchies hold while a container runs: which controllers
# a container joins. (cgroups.bats checks limits through events --stats and what the
# process sees, on v1 and in the v2 guest; this file reads the v1 view.)

load helpers

# The v1 controllers whose cgroup for process PID is the container ID's, one per
# line, sorted; from /proc/PID/cgroup, which names every controller of a hierarchy
# however the host mounted them ("cpu,cpuacct" or one each).
controllers_of() {
	awk -F: -v id="$2" '$2 != "" && $2 !~ /^name=/ && $3 ~ ("/" id "$") { print $2 }' "/proc/$1/cgroup" |
		tr ',' '\n' | sort
}

# the container's init pid, once its state says running (15 s at most)
running_pid() {
	local st
	for _ in $(seq 300); do
		st=$("$SBX_OCI" --root "$SBX_ROOT" state "$1" 2>/dev/null) || st=
		if [ "$(jq -r .status <<<"$st" 2>/dev/null)" = running ]; then
			jq -r .pid <<<"$st"
			return 0
		fi
		sleep 0.05
	done
	echo "$1 did not start" >&2
	return 1
}

# Until the program runs (its setup, cgroup joins included, is over): PID's command
# line is the program's, or PID (our own init) has forked it. The state says running
# earlier: it is recorded while the init sets up.
wait_program() {
	for _ in $(seq 300); do
		case "$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)" in
		"$2"*) return 0 ;;
		esac
		[ -n "$(cat "/proc/$1/task/$1/children" 2>/dev/null)" ] && [ "$2" = "" ] && return 0
		sleep 0.05
	done
	echo "the program of $1 did not start" >&2
	return 1
}

# controllers of a foreground run of the bundle, taken while it runs
foreground_controllers() {
	local pid
	"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$1" </dev/null >/dev/null 2>&1 &
	pid=$(running_pid "$1")
	wait_program "$pid" "sleep 100"
	controllers_of "$pid" "$1"
	"$SBX_OCI" --root "$SBX_ROOT" kill "$1" KILL
	wait
}

@test "cgroups (v1): a foreground run joins only the hierarchies its config uses, a detached one the defaults" {
	requires cgroup_v1
	set_args sleep 100
	run foreground_controllers "$ID"
	# freezer (membership, pause, kill) and devices (the allow-list), nothing else
	[ "$output" = "$(printf 'devices\nfreezer')" ] || { echo "no resources: $output" >&2; false; }

	update_config '.linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 64}}'
	run foreground_controllers "$ID-lim"
	[ "$output" = "$(printf 'devices\nfreezer\nmemory\npids')" ] || { echo "memory+pids: $output" >&2; false; }

	# a CPU limit: cpu, and cpuacct with it (the usage goes with the limit)
	update_config '.linux.resources = {"cpu": {"shares": 512}}'
	run foreground_controllers "$ID-cpu"
	[ "$output" = "$(printf 'cpu\ncpuacct\ndevices\nfreezer')" ] || { echo "cpu shares: $output" >&2; false; }

	# a container that lives on joins what `events --stats` and `update` may want
	update_config 'del(.linux.resources)'
	sbx_detached run -d --bundle "$BUNDLE" "$ID-d"
	local pid
	pid=$(running_pid "$ID-d")
	wait_program "$pid" "sleep 100"
	run controllers_of "$pid" "$ID-d"
	for c in cpuacct cpuset devices freezer memory pids; do
		grep -qx "$c" <<<"$output" || { echo "detached: $c missing from: $output" >&2; false; }
	done
	# so that a later update of cpuset.cpus works (runc and crun join every hierarchy)
	sbx_ok update --cpuset-cpus 0 "$ID-d"
	[ "$(cat /sys/fs/cgroup/cpuset/sbx-oci/"$ID-d"/cpuset.cpus)" = 0 ]
}

@test "cgroups (v1): sbx-oci python, whose report has the cgroup's CPU time, joins cpuacct" {
	requires cgroup_v1
	local id=$ID-py pid
	timeout -k 5 60 "$SBX_OCI" --root "$SBX_ROOT" python --id "$id" -c 'import time; time.sleep(30)' \
		</dev/null >/dev/null 2>&1 &
	pid=$(running_pid "$id")
	wait_program "$pid" "" # pid 1 is the sandbox's own init: it forks the interpreter
	run controllers_of "$pid" "$id"
	"$SBX_OCI" --root "$SBX_ROOT" kill "$id" KILL
	wait || true
	for c in cpuacct devices freezer memory pids; do
		grep -qx "$c" <<<"$output" || { echo "python: $c missing from: $output" >&2; false; }
	done
}

@test "cgroups (v1): linux.resources.cpu.realtimeRuntime: our /sbx-oci group is given the budget; one we did not make is not" {
	requires cgroup_v1
	[ -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] || skip "the kernel has no realtime group scheduling"
	set_args sleep 100
	update_config '.linux.resources = {"cpu": {"realtimeRuntime": 1000, "realtimePeriod": 100000}}'
	sbx_detached run -d --bundle "$BUNDLE" "$ID-a"
	sbx_detached run -d --bundle "$BUNDLE" "$ID-b"
	[ "$(cat /sys/fs/cgroup/cpu/sbx-oci/"$ID-a"/cpu.rt_runtime_us)" = 1000 ]
	[ "$(cat /sys/fs/cgroup/cpu/sbx-oci/"$ID-b"/cpu.rt_runtime_us)" = 1000 ]
	# 1000 of 100000 each is 1%: the parent (period 1 s) holds at least 2 x 10000 us
	[ "$(cat /sys/fs/cgroup/cpu/sbx-oci/cpu.rt_runtime_us)" -ge 20000 ]
	sbx_ok delete -f "$ID-a"
	sbx_ok delete -f "$ID-b"
	# under a cgroupsPath of the caller's the budget is not ours to give: refused, named
	update_config --arg p "/sbx-test-rt-$ID/c" '.linux.cgroupsPath = $p'
	sbx_split run --bundle "$BUNDLE" "$ID-c"
	[ "$status" -ne 0 ]
	assert_one_line_error "realtimeRuntime"
	[ ! -e "/sys/fs/cgroup/cpu/sbx-test-rt-$ID" ]
}
