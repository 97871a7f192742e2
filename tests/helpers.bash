# Shared helpers for the bats suites: a fresh busybox bundle per test, a wrapper
# that runs the built binary against a per-test state root, config edits with jq,
# and a teardown that deletes every container and checks nothing leaked.
#
# Environment:
#   SBX_OCI        the binary under test (make check sets it)
#   SBX_FIXTURES   fixtures built by tests/run.sh (busybox rootfs, probe)
#   SBX_MUST_WORK  1 in CI: a test that would skip for a missing host feature fails

SBX_OCI=${SBX_OCI:-$BATS_TEST_DIRNAME/../sbx-oci}
SBX_FIXTURES=${SBX_FIXTURES:-$BATS_TEST_DIRNAME/.tmp/fixtures}

# Run the runtime with this test's state root; bats' `run` captures status/output.
sbx() {
	run "$SBX_OCI" --root "$SBX_ROOT" "$@"
}

# Like sbx, but the command must succeed; prints what it said otherwise.
sbx_ok() {
	sbx "$@"
	if [ "$status" -ne 0 ]; then
		echo "sbx-oci $* failed with status $status:" >&2
		echo "$output" >&2
		return 1
	fi
}

# For commands that leave a container process behind (create, run -d): that process
# inherits stdio, so capturing with $(...) would wait for it forever. Send the
# runtime's (and the container's) output to a file instead; $output is what the
# runtime printed before returning.
sbx_detached() {
	local log=$BATS_TEST_TMPDIR/detached.$RANDOM
	set +e
	"$SBX_OCI" --root "$SBX_ROOT" "$@" </dev/null >"$log" 2>&1
	status=$?
	set -e
	output=$(cat "$log")
	if [ "$status" -ne 0 ]; then
		echo "sbx-oci $* failed with status $status:" >&2
		echo "$output" >&2
		return 1
	fi
}

# Split stdout and stderr of the runtime: $stdout, $stderr, $status.
sbx_split() {
	local out err
	out=$(mktemp) err=$(mktemp)
	set +e
	"$SBX_OCI" --root "$SBX_ROOT" "$@" </dev/null >"$out" 2>"$err"
	status=$?
	set -e
	stdout=$(cat "$out") stderr=$(cat "$err")
	rm -f "$out" "$err"
}

# Skip, or fail when SBX_MUST_WORK=1, if the host lacks what the test needs.
requires() {
	local why=""
	for req in "$@"; do
		case $req in
		root) [ "$(id -u)" = 0 ] || why="needs root" ;;
		userns) unshare -U true 2>/dev/null || why="user namespaces are not available" ;;
		cgroup_v1) [ -d /sys/fs/cgroup/freezer ] || why="needs cgroup v1" ;;
		cgroup_v2) [ -f /sys/fs/cgroup/cgroup.controllers ] || why="needs cgroup v2" ;;
		timens) [ -e /proc/self/ns/time ] || why="time namespaces are not available" ;;
		python-stack) /usr/bin/python3 -c 'import numpy, pandas' 2>/dev/null ||
			why="needs /usr/bin/python3 with python3-numpy and python3-pandas (contrib/dev-setup.sh)" ;;
		x86_64) [ "$(uname -m)" = x86_64 ] || why="uses x86_64 syscall numbers" ;;
		setcap) command -v setcap >/dev/null || why="needs setcap (libcap2-bin)" ;;
		strace) command -v strace >/dev/null || why="needs strace" ;;
		build-tree) [ -f "${SBX_BUILD_DIR:-}/Makefile" ] || why="needs the build tree (SBX_BUILD_DIR, set by make check)" ;;
		go-md2man) command -v go-md2man >/dev/null || why="needs go-md2man (apt-get install go-md2man)" ;;
		groff) command -v groff >/dev/null || why="needs groff (apt-get install groff-base)" ;;
		zsh) command -v zsh >/dev/null || why="needs zsh (apt-get install zsh)" ;;
		*) why="unknown requirement $req" ;;
		esac
		if [ -n "$why" ]; then
			if [ "${SBX_MUST_WORK:-0}" = 1 ]; then
				echo "required host feature missing ($why) and SBX_MUST_WORK=1" >&2
				return 1
			fi
			skip "$why"
		fi
	done
}

# A fresh bundle at $BUNDLE from the busybox fixture, with a default config from
# `sbx-oci spec`: pid/net/ipc/uts/mount/cgroup namespaces, read-only root.
setup_bundle() {
	BUNDLE=$BATS_TEST_TMPDIR/bundle
	mkdir -p "$BUNDLE"
	cp -a "$SBX_FIXTURES/rootfs" "$BUNDLE/rootfs"
	(cd "$BUNDLE" && "$SBX_OCI" spec)
	update_config '.process.args = ["/bin/true"]'
}

# Apply a jq filter to the bundle's config.json.
update_config() {
	local tmp=$BUNDLE/config.json.new
	jq "$@" "$BUNDLE/config.json" >"$tmp"
	mv "$tmp" "$BUNDLE/config.json"
}

# Set process.args from the shell words given.
set_args() {
	local json
	json=$(printf '%s\n' "$@" | jq -R . | jq -s .)
	update_config --argjson a "$json" '.process.args = $a'
}

# Give the container a user namespace mapping container 0-65535 to host 100000+.
use_userns() {
	update_config '.linux.namespaces += [{"type":"user"}]
		| .linux.uidMappings = [{"containerID":0,"hostID":100000,"size":65536}]
		| .linux.gidMappings = [{"containerID":0,"hostID":100000,"size":65536}]'
	# gid 5 (tty) is mapped, so the default devpts options stay valid.
	# The mapped root (host uid 100000) must be able to reach the bundle: bats makes
	# its temp dirs 0700, so open the path up for traversal (runc needs the same).
	local d=$BUNDLE
	while [ "$d" != / ]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
}

new_id() {
	echo "t${BATS_SUITE_TEST_NUMBER:-0}-$$-$RANDOM"
}

# What the host has that a container could leak: mounts, state dirs, our cgroups.
host_mount_count() { wc -l </proc/self/mountinfo; }
# This test's container ids all contain "-$$-" (new_id): only its own cgroups count,
# so suites running side by side do not see each other's.
our_cgroups() {
	find /sys/fs/cgroup -maxdepth 6 -type d -name "*-$$-*" 2>/dev/null | sort
}

# This test's state root and container id, and what teardown compares against.
setup_state() {
	SBX_ROOT=$BATS_TEST_TMPDIR/state
	ID=$(new_id)
	SBX_MOUNTS_BEFORE=$(host_mount_count)
	SBX_CGROUPS_BEFORE=$(our_cgroups)
}

setup() {
	setup_state
	setup_bundle
}

teardown() {
	local leftover
	# a test's own cleanup (of host state it made on purpose), even when it failed
	if declare -F test_cleanup >/dev/null; then test_cleanup || true; fi
	if [ -d "$SBX_ROOT" ]; then
		for c in $("$SBX_OCI" --root "$SBX_ROOT" list -q 2>/dev/null); do
			"$SBX_OCI" --root "$SBX_ROOT" delete --force "$c" >/dev/null 2>&1 || true
		done
		# "@..." entries are the runtime's caches (no container id starts with @)
		leftover=$(ls -A "$SBX_ROOT" | grep -v '^@' || true)
		if [ -n "$leftover" ]; then
			echo "state dirs left behind: $leftover" >&2
			# remove the leftovers so the next test starts clean, then fail
			for c in $leftover; do "$SBX_OCI" --root "$SBX_ROOT" delete --force "$c" >/dev/null 2>&1 || true; done
			return 1
		fi
	fi
	if [ "$(host_mount_count)" != "$SBX_MOUNTS_BEFORE" ]; then
		echo "host mount count changed: $SBX_MOUNTS_BEFORE -> $(host_mount_count)" >&2
		return 1
	fi
	if [ "$(our_cgroups)" != "$SBX_CGROUPS_BEFORE" ]; then
		echo "cgroups left behind: $(our_cgroups)" >&2
		return 1
	fi
}

# The error contract: non-zero exit, exactly one line on stderr, naming $1.
# refute CMD...: CMD must fail. (A bare `! CMD` in the middle of a test checks
# nothing: bats' errexit ignores a negated command.)
refute() {
	if "$@"; then
		echo "unexpectedly succeeded: $*" >&2
		return 1
	fi
}

assert_one_line_error() {
	local needle=$1
	[ "$status" -ne 0 ] || { echo "expected failure, got status 0" >&2; return 1; }
	[ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || { echo "expected one line on stderr, got:" >&2; echo "$stderr" >&2; return 1; }
	[[ "$stderr" == *"$needle"* ]] || { echo "stderr does not mention '$needle': $stderr" >&2; return 1; }
}

# Nothing of the container remains: no state dir.
assert_no_state() {
	[ ! -e "$SBX_ROOT/$1" ] || { echo "state dir $SBX_ROOT/$1 still exists" >&2; return 1; }
}

# wait_stopped ID: until the container's state says stopped (15 s at most).
wait_stopped() {
	for _ in $(seq 300); do
		[ "$("$SBX_OCI" --root "$SBX_ROOT" state "$1" | jq -r .status)" = stopped ] && return 0
		sleep 0.05
	done
	return 1
}
