# Helpers of the `sbx-oci serve` suites (serve.bats, serve-sessions.bats): each test
# starts its own server on its own state root (sstart) and checks what a client sees,
# and what is left (nothing but the server's standbys) once runs end.
setup() {
	requires root userns python-stack
	setup_state
	SERVE_PID=
	SERVED=()
	BG_PIDS=()
	IPC_ID=
	# The sandbox user's host uid: one of this test's own (--host-id), so that "no
	# process of that uid is left" is about this test's runs only, whatever else on
	# the host runs sandboxes with the default (101000) meanwhile.
	HOST_ID=$((300000 + (RANDOM % 30000) * 2))
	RL_DIR=
}

teardown() {
	local rc=0 pid
	# background clients a failed test left behind (by the PIDs this test recorded)
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	serve_stop || rc=1
	kept_cgroups_gone || rc=1
	[ -z "$IPC_ID" ] || ipcrm -m "$IPC_ID" 2>/dev/null || true
	helpers_teardown || rc=1
	[ -z "$RL_DIR" ] || rm -rf "$RL_DIR"
	return $rc
}

# The kept cgroups of every server this test started are gone (its own when it
# stopped, a killed one's when the next one started).
kept_cgroups_gone() {
	local served left=
	for served in "${SERVED[@]}"; do
		left+=$(find /sys/fs/cgroup -maxdepth 3 -type d -name "@serve-*-$served-*" 2>/dev/null)
	done
	[ -z "$left" ] && return 0
	echo "kept cgroups left behind: $left" >&2
	return 1
}

# sstart [OPTIONS]: serve_start with this test's --host-id. STANDBYS: the sandboxes
# the server keeps made ahead of requests (--standby, default 2), each a container
# with a generated "py-" id (the tests' own ids start with "t") and two processes of
# the sandbox user (its init and the joined fork of the warm interpreter).
sstart() {
	local a prev=
	STANDBYS=2
	for a in "$@"; do
		[ "$prev" != --standby ] || STANDBYS=$a
		prev=$a
	done
	serve_start --host-id "$HOST_ID" "$@"
}

# cpy [OPTIONS] (-c CODE | ...) [ARGS]: one run through the test's server, with a
# fresh container id ($PY_ID: teardown sees its cgroups) and the result in $RESULT;
# sets $status, $stdout, $stderr (stdin: $PY_STDIN, default /dev/null).
cpy() {
	PY_ID=$(new_id)
	RESULT=$BATS_TEST_TMPDIR/result.json
	rm -f "$RESULT"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$PY_ID" --result "$RESULT" "$@"
}

# bg_cpy NAME [OPTIONS] (-c CODE | ...): a run through the server in the background,
# its output in $BATS_TEST_TMPDIR/NAME.{out,err}, its pid in $BG_PID (and BG_PIDS,
# which teardown kills).
# (No `timeout` around it: the tests kill the client itself.)
bg_cpy() {
	local name=$1
	shift
	"$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$(new_id)" "$@" \
		</dev/null >"$BATS_TEST_TMPDIR/$name.out" 2>"$BATS_TEST_TMPDIR/$name.err" 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# wait_bg PID [SECONDS]: PID's exit status in $bg_status, once it ended (20 s at
# most: then it is killed and the test fails).
wait_bg() {
	local i
	for i in $(seq $((${2:-20} * 20))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1"
		wait "$1" 2>/dev/null || true
		echo "$1 did not end within ${2:-20} s" >&2
		return 1
	fi
	bg_status=0
	wait "$1" || bg_status=$?
}

# wait_for_file PATH [SECONDS]: until PATH exists (10 s at most).
wait_for_file() {
	local i
	for i in $(seq $((${2:-10} * 20))); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	echo "$1 did not appear within ${2:-10} s" >&2
	return 1
}

# until_ok SECONDS CMD...: CMD succeeds within SECONDS (retried every 0.1 s); the
# last failure's output is shown otherwise.
until_ok() {
	local secs=$1 i
	shift
	for i in $(seq $((secs * 10))); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	"$@"
}

# The containers of this test's state root.
containers() { "$SBX_OCI" --root "$SBX_ROOT" list -q; }
# No container is left but the server's $STANDBYS standbys (those are made again
# after each run that took one: 15 s for that, on a slow machine).
no_containers() {
	local i left n
	for i in $(seq 150); do
		left=$(containers | grep -v '^py-' || true)
		n=$(containers | grep -c '^py-' || true)
		[ -z "$left" ] && [ "$n" -eq "${STANDBYS:-0}" ] && return 0
		sleep 0.1
	done
	echo "containers: $(containers | tr '\n' ' ')(standbys expected: ${STANDBYS:-0})" >&2
	return 1
}
# No process of the sandbox user's host uid is left but the standbys' two each (short
# lines: the warm interpreter's command line is long).
no_sandbox_processes() {
	local i left
	for i in $(seq 150); do
		left=$(ps -o pid=,ppid=,stat=,args= -u "$HOST_ID" | cut -c1-120 || true)
		[ "$(grep -c . <<<"$left")" -eq $((2 * ${STANDBYS:-0})) ] && return 0
		sleep 0.1
	done
	echo "processes of uid $HOST_ID (standbys expected: ${STANDBYS:-0}):" >&2
	echo "$left" >&2
	return 1
}

# The pids of PID's descendants (children first).
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# none_alive PID...: none of these processes exists any more.
none_alive() {
	local p left=""
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && left+=" $p"
	done
	[ -z "$left" ] && return 0
	echo "still alive:" >&2
	# shellcheck disable=SC2086
	ps -o pid=,ppid=,uid=,comm= -p ${left# } >&2 || true
	return 1
}

# bad_serve ARGS...: `sbx-oci serve ARGS` that must end by itself (a server that
# starts instead is stopped after 5 s: status 124); $status $stdout $stderr.
bad_serve() {
	local out=$BATS_TEST_TMPDIR/bad.out err=$BATS_TEST_TMPDIR/bad.err
	set +e
	timeout -k 2 5 "$SBX_OCI" --root "$SBX_ROOT" serve "$@" </dev/null >"$out" 2>"$err"
	status=$?
	set -e
	stdout=$(cat "$out")
	stderr=$(cat "$err")
}

# ms since the epoch
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start_long_run [SECONDS]: a run through the server that writes /work/started (in
# the --workdir $BATS_TEST_TMPDIR/w1 it is given), sleeps SECONDS (default 60) and
# prints "finished"; its output in $BATS_TEST_TMPDIR/long.{out,err}. Sets BG_PID;
# returns once the program runs, with a process of the sandbox user on the host.
start_long_run() {
	local w=$BATS_TEST_TMPDIR/w1
	mkdir -p "$w"
	bg_cpy long --workdir "$w" -c 'import sys, time; open("/work/started", "w").close(); time.sleep(float(sys.argv[1])); print("finished")' "${1:-60}"
	wait_for_file "$w/started"
	[ -n "$(ps -o pid= -u "$HOST_ID")" ] || { echo "no process of uid $HOST_ID while the run runs" >&2; return 1; }
	[ -n "$(containers)" ]
}

# The warm interpreter: the server's child whose command line names the zygote.
zygote_pid() {
	local p
	for p in $(ps -o pid= --ppid "$SERVE_PID"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q sbx-oci-zygote && echo "$p"
	done
	return 0
}

# The standbys' container ids now (one per line).
standby_ids() { containers | grep '^py-' || true; }
# Container ID is gone.
container_gone() { ! containers | grep -qx "$1"; }

# spy [OPTIONS] (-c CODE | ...): one run through the server as a client with no
# option of its own would send it (no --id): it takes a standby. Result in $RESULT.
spy() {
	RESULT=$BATS_TEST_TMPDIR/result.json
	rm -f "$RESULT"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --result "$RESULT" "$@"
}
