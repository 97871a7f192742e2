# Helpers of the `sbx-oci python` suites (sandbox.bats, sandbox-host.bats): one run
# with the test's state root and its result, assertions on what it printed and
# reported, and the same as an unprivileged user.

# helpers.bash's teardown (leak checks: state dirs, host mounts, cgroups), kept under
# this name for the suites' own teardown to call
eval "helpers_teardown() $(declare -f teardown | tail -n +2)"

PYTHON=/usr/bin/python3
HOST_ID=101000 # the sandbox user on the host, as root (the default --host-id)

# py [OPTIONS] (-c CODE | ...) [ARGS]: one `sbx-oci python` run with this test's state
# root, a fresh container id ($PY_ID, so that teardown sees its cgroups) and the result
# in $RESULT; sets $status, $stdout, $stderr (stdin: $PY_STDIN, default /dev/null).
# A hang fails the test (status 124) instead of blocking the suite.
# With SBX_VIA_CONNECT=1 every py goes through `sbx-oci serve` (one server per test,
# on the test's state root, with its default standbys), as `python --connect`: the
# suite then checks that a run from the warm interpreter is what a one-shot run is.
# Without options of its own beyond --timeout, --max-output and --result, the run
# takes a standby (a sandbox made and joined before it came), so no --id is given
# (PY_ID is then the result's); with others the server makes its sandbox for it.
py() {
	PY_ID=$(new_id)
	RESULT=$BATS_TEST_TMPDIR/result.json
	rm -f "$RESULT"
	if [ -n "${SBX_VIA_CONNECT:-}" ]; then
		serve_start --python "$PYTHON"
		py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --result "$RESULT" "$@"
		PY_ID=$(jq -r '.id // empty' "$RESULT" 2>/dev/null || true)
		return
	fi
	py_exec "$SBX_OCI" --root "$SBX_ROOT" python --id "$PY_ID" --python "$PYTHON" --result "$RESULT" "$@"
}

# serve_start [OPTIONS]: `sbx-oci serve` on this test's state root at $SERVE_SOCKET
# (once), its log in $SERVE_LOG, its pid in $SERVE_PID; serve_stop ends it (SIGTERM,
# by its pid) and fails if it did not stop cleanly within 20 s.
serve_start() {
	[ -z "${SERVE_PID:-}" ] || return 0
	SERVE_SOCKET=$BATS_TEST_TMPDIR/sbx.sock
	SERVE_LOG=$BATS_TEST_TMPDIR/serve.log
	# a server of its own environment, not the first client's (a test's TMPDIR=...)
	# (not holding bats' fd 3: a server a failed test left would keep bats waiting);
	# its log new before it starts: an earlier server's "listening on" (a test that
	# starts another) is not this one's, if the shell truncates the log after the check
	rm -f "$SERVE_LOG"
	env -u TMPDIR "$SBX_OCI" --root "$SBX_ROOT" serve --socket "$SERVE_SOCKET" "$@" >"$SERVE_LOG" 2>&1 3>&- &
	SERVE_PID=$!
	# (its pid and start time: a kept cgroup's name has both, helpers/serve.bash)
	SERVED+=("$SERVE_PID-$(awk '{print $22}' "/proc/$SERVE_PID/stat" 2>/dev/null)")
	for _ in $(seq 300); do
		[ -S "$SERVE_SOCKET" ] && grep -qs "listening on" "$SERVE_LOG" && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$SERVE_LOG" >&2
	return 1
}

serve_stop() {
	local pid=${SERVE_PID:-} i
	[ -n "$pid" ] || return 0
	SERVE_PID=
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		echo "serve $pid did not stop within 20 s" >&2
		return 1
	fi
	wait "$pid" 2>/dev/null || true
	serve_left_nothing
}

# A server stopped with SIGTERM has torn its standbys down: no state dir of theirs in
# its root, and (with a --host-id of the test's own, helpers/serve.bash) no temporary
# workdir of theirs in its TMPDIR (/tmp: serve_start drops the test's).
serve_left_nothing() {
	local left
	left=$(ls -A "$SBX_ROOT" 2>/dev/null | grep -v '^@' || true)
	if [ "${HOST_ID:-101000}" -ge 300000 ]; then
		left+=$(find /tmp -maxdepth 1 -name 'sbx-python-*' -uid "$HOST_ID" 2>/dev/null)
	fi
	[ -z "$left" ] && return 0
	echo "left by the server once stopped: $left" >&2
	return 1
}

py_exec() {
	local out=$BATS_TEST_TMPDIR/py.stdout err=$BATS_TEST_TMPDIR/py.stderr
	set +e
	timeout -k 5 60 "$@" <"${PY_STDIN:-/dev/null}" >"$out" 2>"$err"
	status=$?
	set -e
	stdout=$(cat "$out")
	stderr=$(cat "$err")
}

# has TEXT NEEDLE / lacks TEXT NEEDLE: TEXT contains NEEDLE or not (says what it was).
has() {
	[[ "$1" == *"$2"* ]] && return 0
	printf 'expected to find "%s" in:\n%s\n' "$2" "$1" >&2
	return 1
}
lacks() {
	[[ "$1" != *"$2"* ]] && return 0
	printf 'did not expect "%s" in:\n%s\n' "$2" "$1" >&2
	return 1
}

# The run exited with status $1 (default 0); says what it printed otherwise.
expect_status() {
	local want=${1:-0}
	[ "$status" -eq "$want" ] && return 0
	printf 'expected status %s, got %s\n--- stdout:\n%s\n--- stderr:\n%s\n' "$want" "$status" "$stdout" "$stderr" >&2
	return 1
}

# Stdout is exactly $1.
expect_stdout() {
	[ "$stdout" = "$1" ] && return 0
	printf 'expected stdout:\n%s\n--- got:\n%s\n--- stderr:\n%s\n' "$1" "$stdout" "$stderr" >&2
	return 1
}

# result_is [JQ-OPTIONS...] FILTER: the result JSON satisfies the jq filter.
result_is() {
	local filter=${*: -1}
	jq -e "${@:1:$#-1}" "$filter" "$RESULT" >/dev/null && return 0
	echo "result does not satisfy: $filter" >&2
	cat "$RESULT" >&2 || echo "(no result file)" >&2
	return 1
}

# Through a server (SBX_VIA_CONNECT), the standbys it keeps (serve's default, 2) are
# sandboxes made ahead of the next run, each with two processes of the sandbox user
# (its init and the joined fork), a temporary workdir and a meminfo-run file; a run
# that took one is torn down after its client has the result, and the server then
# makes another. What a run leaves is counted beside them once that is done.
SERVE_STANDBYS=2
standbys() {
	if [ -n "${SBX_VIA_CONNECT:-}" ] && [ -n "${SERVE_PID:-}" ]; then echo "$SERVE_STANDBYS"; else echo 0; fi
}

# until_count N CMD...: CMD prints N lines (retried for 5 s); its output otherwise.
until_count() {
	local n=$1 i out
	shift
	for i in $(seq 50); do
		out=$("$@" || true)
		[ "$(grep -c . <<<"$out")" -eq "$n" ] && return 0
		sleep 0.1
	done
	echo "expected $n, found:" >&2
	echo "$out" >&2
	return 1
}

# No process of host uid $1 exists (the sandbox's processes are all gone), but the
# standbys' when the runs go through a server.
expect_no_processes_of() {
	local n=0
	[ "$1" != "$HOST_ID" ] || n=$((2 * $(standbys)))
	until_count "$n" ps -o pid=,stat=,args= -u "$1" && return 0
	echo "(processes of uid $1 left after the run, beside $n of standbys)" >&2
	return 1
}

# ---------------------------------------------------------------- unprivileged user
# An ordinary user: a dedicated account "sbxtest", a state root and TMPDIR it owns
# under /tmp ($RL_DIR: the suite's teardown removes it).

RL_USER=sbxtest

rootless_setup() {
	id -u "$RL_USER" >/dev/null 2>&1 || useradd -M -s /bin/sh "$RL_USER" 2>/dev/null || id -u "$RL_USER" >/dev/null
	runuser -u "$RL_USER" -- unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available"
	RL_UID=$(id -u "$RL_USER")
	RL_DIR=$(mktemp -d /tmp/sbx-rootless.XXXXXX)
	chmod 755 "$RL_DIR"
	mkdir "$RL_DIR/run" "$RL_DIR/tmp" "$RL_DIR/work"
	chown -R "$RL_USER:" "$RL_DIR"
	SBX_ROOT=$RL_DIR/state
	# the user must be able to execute the binary under test
	RL_SBX=$SBX_OCI
	if ! runuser -u "$RL_USER" -- test -x "$RL_SBX"; then
		RL_SBX=$RL_DIR/sbx-oci
		cp "$SBX_OCI" "$RL_SBX"
		chmod 755 "$RL_SBX"
	fi
	expect_no_processes_of "$RL_UID"
}

# rl_py: like py, as $RL_USER (no --allow-degraded unless given).
rl_py() {
	PY_ID=$(new_id)
	RESULT=$RL_DIR/result.json
	rm -f "$RESULT"
	py_exec runuser -u "$RL_USER" -- env HOME="$RL_DIR" TMPDIR="$RL_DIR/tmp" XDG_RUNTIME_DIR="$RL_DIR/run" \
		"$RL_SBX" --root "$SBX_ROOT" python --id "$PY_ID" --python "$PYTHON" --result "$RESULT" "$@"
}

