#!/usr/bin/env bats
# Sessions of `sbx-oci serve`: `python --connect SOCKET --session NAME` keeps the
# interpreter's state between calls, each call (a cell) a fork of the last good
# state. What a user of the client sees: state kept, a cell that dies (crash,
# os._exit, OOM, timeout, its client gone) rolled back, each cell a run of its own
# (status, output, --result), the sandbox the first call's, and the ends (request,
# idle, server stop) leaving nothing. Most tests run the server without standbys, so
# that the session's container is the only one ("py-" ids are the server's).

load helpers
load helpers/sandbox
load helpers/serve

# cell NAME [OPTIONS] (-c CODE | -): one call of session NAME; $status $stdout
# $stderr, the result in $RESULT.
cell() {
	local name=$1
	shift
	RESULT=$BATS_TEST_TMPDIR/result.json
	rm -f "$RESULT"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session "$name" --result "$RESULT" "$@"
}

sessions() { standby_ids; }
ended_twice() { [ "$(grep -c "session e ended" "$SERVE_LOG")" -ge 2 ]; }

@test "serve --session: globals, imports and open files stay between calls; other sessions and plain runs see none of it" {
	sstart --standby 0
	cell a -c 'import json; x = 41; f = open("/work/log", "w"); f.write("a"); print("set")'
	expect_status 0
	expect_stdout set
	result_is '.session == {"name": "a", "state": "kept"} and .exit_code == 0 and .error == null'
	cell a -c 'x += 1; f.write("b"); f.flush(); print(x, json.dumps([x]))'
	expect_status 0
	expect_stdout "42 [42]"
	cell b -c 'print("x" in globals(), "json" in globals())'
	expect_status 0
	expect_stdout "False False"
	spy -c 'print("x" in globals())'
	expect_status 0
	expect_stdout False
	cell a -c 'import os; print(open("/work/log").read(), os.getuid(), os.getpid() > 2, os.getcwd())'
	expect_status 0
	expect_stdout "ab 1000 True /work"
	# two sessions, one sandbox each
	[ "$(sessions | wc -l)" -eq 2 ]
	has "$(cat "$SERVE_LOG")" "session a began"
	# the sandbox is one-shot's: no capabilities, no_new_privs, the seccomp filter, a
	# read-only system
	cell a -c '
import os
status = open("/proc/self/status").read()
print([l.split()[1] for l in status.splitlines() if l.startswith(("CapEff", "Seccomp:", "NoNewPrivs"))])
try:
    open("/etc/x", "w")
except OSError as e:
    print("refused")'
	expect_status 0
	expect_stdout "['0000000000000000', '1', '2']
refused"
}

@test "serve --session: numpy's and random's generators are each session's and each run's own, as a process of its own would have them" {
	sstart --preload numpy,random
	local code='import numpy, random; print(numpy.random.randint(1 << 62), random.getrandbits(62))'
	cell a -c "$code"
	expect_status 0
	local a1=$stdout
	cell b -c "$code"
	expect_status 0
	local b1=$stdout
	spy -c "$code"
	expect_status 0
	local r1=$stdout
	spy -c "$code"
	expect_status 0
	local r2=$stdout
	cell a -c "$code"
	expect_status 0
	local a2=$stdout
	# five draws, all different: numpy's legacy generator was seeded once, at the
	# preload, and a fork inherits its state unless it is drawn anew
	[ "$(printf '%s\n' "$a1" "$b1" "$r1" "$r2" "$a2" | tr ' ' '\n' | sort -u | wc -l)" -eq 10 ] ||
		{ printf '%s\n' "$a1" "$b1" "$r1" "$r2" "$a2" >&2; return 1; }
}

@test "serve --session: a cell that crashes, calls os._exit, is OOM-killed or times out leaves the session as it was; an exception does not undo" {
	sstart --standby 0
	cell s --memory 256M -c 'x = 1; import ctypes'
	expect_status 0
	cell s -c 'import os; x = 100; print("said", flush=True); os._exit(3)'
	expect_status 3
	expect_stdout said
	result_is '.session.state == "rolled back" and .exit_code == 3'
	has "$stderr" "session s is as it was before it"
	cell s -c 'x = 100; ctypes.string_at(0)'
	expect_status 139
	result_is '.session.state == "rolled back" and .signal == "SIGSEGV"'
	cell s -c 'x = 100; b = bytearray(1 << 30)'
	expect_status 137
	result_is '.session.state == "rolled back" and .oom_killed == true and .limits.memory_bytes == 268435456'
	cell s --timeout 1 -c 'x = 100
while True: pass'
	expect_status 137
	result_is '.session.state == "rolled back" and .timed_out == true and .limits.timeout_s == 1'
	has "$stderr" "timed out after 1 s: the cell was killed"
	cell s -c 'print(x)'
	expect_status 0
	expect_stdout 1
	# an exception ends the cell, not its process: what ran before it stays
	cell s -c 'x = 2; raise ValueError("boom")'
	expect_status 1
	[ "$(tail -n 1 <<<"$stderr")" = "ValueError: boom" ]
	result_is '.session.state == "kept"'
	cell s -c 'import sys; x += 1; sys.exit(5)'
	expect_status 5
	cell s -c 'print(x)'
	expect_stdout 3
}

@test "serve --session: each cell is a run to its client: stdin, output caps, --result -; the sandbox is the first call's" {
	sstart --standby 0
	cell c --network none -c 'n = 0'
	expect_status 0
	PY_STDIN=$BATS_TEST_TMPDIR/in
	echo 'n += 10; print("from stdin", n)' >"$PY_STDIN"
	cell c -
	expect_status 0
	expect_stdout "from stdin 10"
	PY_STDIN=/dev/null
	cell c --max-output 4 -c 'print("z" * 50)'
	expect_status 0
	[ "$stdout" = zzzz ]
	result_is '.stdout_truncated == true and .stdout_bytes == 51 and .network == "none"'
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session c --result - -c 'print(n)'
	expect_status 0
	jq -e '.stdout == "10\n" and .session.name == "c"' <<<"$stdout"
	# the same options again are fine; others are refused, naming the first call's
	cell c --network none -c 'print(n)'
	expect_status 0
	expect_stdout 10
	cell c --network full -c 'print(n)'
	expect_status 125
	assert_one_line_error "first call"
	cell c "$BATS_TEST_TMPDIR/in"
	expect_status 2
	assert_one_line_error "--session"
	# a name that is not one, --end-session without one, and either without --connect
	cell "../x" -c 'print(1)'
	expect_status 2
	assert_one_line_error "--session"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --end-session
	expect_status 2
	py_exec "$SBX_OCI" python --session c -c 'print(1)'
	expect_status 2
	assert_one_line_error "--session"
	cell c -c 'print(n)'
	expect_stdout 10
}

@test "serve --session: it ends on --end-session, after --session-idle, and when the server stops; nothing is left" {
	# (3 s: calls come well within it, also from an ASan build)
	sstart --standby 0 --session-idle 3
	cell e -c 'x = 1'
	expect_status 0
	[ -S "$SERVE_SOCKET.sessions/e" ]
	[ "$(stat -c %a "$SERVE_SOCKET.sessions")" = 700 ]
	cell e --end-session
	expect_status 0
	no_containers
	no_sandbox_processes
	[ ! -e "$SERVE_SOCKET.sessions/e" ]
	cell e --end-session
	expect_status 125
	assert_one_line_error "no such session"
	# a new one of the same name begins afresh
	cell e -c 'print("x" in globals())'
	expect_stdout False
	# idle for longer than --session-idle: ended
	sleep 3.5
	until_ok 5 ended_twice
	has "$(cat "$SERVE_LOG")" "no call for 3 s"
	no_containers
	cell e -c 'print("x" in globals()); x = 1'
	expect_stdout False
	# the server stops: the session and its sandbox go
	cell f -c 'y = 1'
	serve_stop
	no_containers
	no_sandbox_processes
	[ ! -e "$SERVE_SOCKET.sessions" ]
}

@test "serve --session: beyond --max-sessions a new session is refused (125, naming the option); those held keep their state; one ended makes room before its --end-session returns" {
	sstart --standby 0 --max-sessions 2
	cell m1 -c 'v = "one"'
	expect_status 0
	cell m2 -c 'v = "two"'
	expect_status 0
	cell m3 -c 'v = "three"'
	expect_status 125
	assert_one_line_error "--max-sessions"
	result_is '.error != null and .exit_code == null'
	[ "$(sessions | wc -l)" -eq 2 ]
	cell m1 -c 'print(v)'
	expect_stdout one
	cell m2 -c 'print(v)'
	expect_stdout two
	# a plain run is not a session: it still runs
	spy -c 'print("run")'
	expect_stdout run
	cell m1 --end-session
	expect_status 0
	cell m3 -c 'v = "three"; print(v)'
	expect_status 0
	expect_stdout three
	# the room is made before --end-session returns: a session begun right after it
	# is never refused (the socket used to go after the reply: refused 1 in ~300)
	for i in $(seq 10); do
		cell m2 --end-session
		expect_status 0
		cell "n$i" -c 'pass'
		expect_status 0
		cell "n$i" --end-session
		expect_status 0
		cell m2 -c 'pass'
		expect_status 0
	done
	run "$SBX_OCI" serve --socket "$BATS_TEST_TMPDIR/x.sock" --max-sessions 0
	[ "$status" -eq 2 ]
	has "$output" "--max-sessions"
}

@test "serve --session: a client that hangs up mid-cell: the cell is killed, the session is as before; calls of one session come in turn" {
	sstart --standby 0
	local w=$BATS_TEST_TMPDIR/flag
	cell h -c 'x = 1'
	bg_cpy_session() {
		"$SBX_OCI" python --connect "$SERVE_SOCKET" --session h "$@" </dev/null >"$BATS_TEST_TMPDIR/bg.out" 2>"$BATS_TEST_TMPDIR/bg.err" 3>&- &
		BG_PID=$!
		BG_PIDS+=("$BG_PID")
	}
	bg_cpy_session -c 'x = 100; import time; print("started", flush=True); time.sleep(30)'
	until_ok 10 grep -q started "$BATS_TEST_TMPDIR/bg.out"
	kill -KILL "$BG_PID"
	wait "$BG_PID" || true
	cell h -c 'print(x)'
	expect_status 0
	expect_stdout 1
	# a second call while one runs waits for it (one state, one cell at a time)
	bg_cpy_session -c 'import time; print("in", flush=True); time.sleep(1); x = 2'
	until_ok 10 grep -q in "$BATS_TEST_TMPDIR/bg.out"
	cell h -c 'print(x)'
	expect_status 0
	expect_stdout 2
	wait_bg "$BG_PID"
	[ "$bg_status" -eq 0 ]
}

@test "serve --session: beside standbys and plain runs; the Python client's Session" {
	sstart
	cell p -c 'import decimal; d = decimal.Decimal("1.5")'
	expect_status 0
	spy -c 'print("plain")'
	expect_status 0
	expect_stdout plain
	cell p -c 'print(d * 2)'
	expect_stdout "3.0"
	PYTHONPATH=$(cd "$BATS_TEST_DIRNAME/../contrib/python" && pwd) py_exec "$PYTHON" -c '
import sys
from package import Session
sock = sys.argv[1]
with Session(sock, memory="300M") as s:
    r = s.run("import math; v = math.pi")
    assert r.ok and r.session_state == "kept", r
    r = s.run("import os; v = 0; os._exit(9)")
    assert r.exit_code == 9 and r.session_state == "rolled back", r
    r = s.run("print(round(v, 2))")
    assert r.stdout == "3.14\n" and r.raw["limits"]["memory_bytes"] == 300 << 20, r
    r = s.run("while True: pass", timeout=1)
    assert r.timed_out and r.session_state == "rolled back", r
    name = s.name
r = Session(sock, name=name).run("print(\"v\" in globals())")
assert r.stdout == "False\n", r
Session(sock, name=name).close()
print("ok")' "$SERVE_SOCKET"
	expect_status 0
	expect_stdout ok
	cell p --end-session
	no_containers
	no_sandbox_processes
}
