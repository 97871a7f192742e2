#!/usr/bin/env bats
# What a hybrid host's v1 hierarchies hold while a container runs: which controllers
# a container joins. (cgroups.bats checks limits through events --stats and what the
# process sees, on v1 and in the v2 guest; this file reads v1 directories.)

load helpers

# The v1 hierarchies that hold a cgroup named ID, one name per line, sorted.
hierarchies_of() {
	local d
	for d in /sys/fs/cgroup/*/; do
		[ -L "${d%/}" ] && continue # cpu -> cpu,cpuacct style links: the mount is listed itself
		find "$d" -maxdepth 4 -type d -name "$1" 2>/dev/null | grep -q . && basename "$d"
	done | sort
}

# Start a foreground run of the bundle in the background; wait until it is running.
run_in_background() {
	"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$1" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 300); do
		[ "$("$SBX_OCI" --root "$SBX_ROOT" state "$1" 2>/dev/null | jq -r .status)" = running ] && return 0
		sleep 0.05
	done
	echo "$1 did not start" >&2
	return 1
}

stop_background() {
	"$SBX_OCI" --root "$SBX_ROOT" kill "$1" KILL
	wait
}

@test "cgroups (v1): a foreground run joins only the hierarchies its config uses, a detached one the defaults" {
	requires cgroup_v1
	set_args sleep 100
	run_in_background "$ID"
	run hierarchies_of "$ID"
	stop_background "$ID"
	# freezer (membership, pause, kill) and devices (the allow-list), nothing else
	[ "$output" = "$(printf 'devices\nfreezer')" ] || { echo "no resources: $output" >&2; false; }

	update_config '.linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 64}}'
	run_in_background "$ID-lim"
	run hierarchies_of "$ID-lim"
	stop_background "$ID-lim"
	[ "$output" = "$(printf 'devices\nfreezer\nmemory\npids')" ] || { echo "memory+pids: $output" >&2; false; }

	# a container that lives on joins what `events --stats` and `update` may want
	update_config 'del(.linux.resources)'
	sbx_detached run -d --bundle "$BUNDLE" "$ID-d"
	run hierarchies_of "$ID-d"
	for c in cpuacct devices freezer memory pids; do
		grep -qx "$c" <<<"$output" || { echo "detached: $c missing from: $output" >&2; false; }
	done
}
