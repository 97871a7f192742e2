#!/usr/bin/env bats
# Repetition leaves nothing behind: mounts, state dirs, cgroups, fds, processes.

load helpers

snapshot() {
	echo "mounts $(host_mount_count)"
	echo "cgroups $(find /sys/fs/cgroup -type d -name "*-$$-*" 2>/dev/null | wc -l)"
	echo "state $(ls -A "$SBX_ROOT" 2>/dev/null | wc -l)"
	# this test's runtime processes and container inits (inits are clones of the
	# runtime, so their command line names this test's state root)
	echo "runtime-processes $(pgrep -c -f -- "--root $SBX_ROOT" || true)"
}

file_handles() { cut -f1 /proc/sys/fs/file-nr; }

@test "leaks: 500 runs leave no mount, state dir, cgroup, fd or process behind" {
	set_args /bin/true
	local before fh_before fh_after
	before=$(snapshot)
	fh_before=$(file_handles)
	for i in $(seq 500); do
		"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-$i" || { echo "run $i failed" >&2; false; }
	done
	[ "$(snapshot)" = "$before" ] || { echo "before: $before"; echo "after: $(snapshot)"; false; } >&2
	fh_after=$(file_handles)
	# system-wide open files move with everything else on the machine: allow noise,
	# but 500 runs leaking one fd each (+500) would show
	[ $((fh_after - fh_before)) -lt 250 ]
}

@test "leaks: 100 create/start/delete cycles and 100 failing creates leave nothing behind" {
	set_args /bin/true
	local before
	before=$(snapshot)
	for i in $(seq 100); do
		"$SBX_OCI" --root "$SBX_ROOT" create --bundle "$BUNDLE" "$ID-$i" </dev/null >/dev/null 2>&1
		"$SBX_OCI" --root "$SBX_ROOT" start "$ID-$i"
		for _ in $(seq 100); do
			[ "$("$SBX_OCI" --root "$SBX_ROOT" state "$ID-$i" | jq -r .status)" = stopped ] && break
			sleep 0.01
		done
		"$SBX_OCI" --root "$SBX_ROOT" delete "$ID-$i"
	done
	# failures at different depths: bad mount (in the child), missing program (late)
	cp "$BUNDLE/config.json" "$BUNDLE/good.json"
	update_config '.mounts += [{"destination":"/x","type":"no-such-fs","source":"none"}]'
	for i in $(seq 50); do
		refute "$SBX_OCI" --root "$SBX_ROOT" create --bundle "$BUNDLE" "$ID-f$i" </dev/null >/dev/null 2>&1
	done
	cp "$BUNDLE/good.json" "$BUNDLE/config.json"
	set_args /no/such/program
	for i in $(seq 50); do
		refute "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-g$i" </dev/null >/dev/null 2>&1
	done
	[ "$(snapshot)" = "$before" ] || { echo "before: $before"; echo "after: $(snapshot)"; false; } >&2
}
