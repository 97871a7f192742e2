#!/usr/bin/env bats
# Sessions and warm runs as a code interpreter (issue 31), as a user of the CLI and of
# the Python client sees them: the value of the last expression, uncaught exceptions,
# matplotlib figures, files in and out of a session's /work, output as it is written,
# interrupts, and a standby that takes a client's --workdir. Bad input each time: a
# huge value, a figure bomb, names escaping /work, a flood, with nothing lost or left.

load helpers
load helpers/sandbox
load helpers/serve

cell() {
	local name=$1
	shift
	RESULT=$BATS_TEST_TMPDIR/result.json
	rm -f "$RESULT"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session "$name" --result "$RESULT" "$@"
}

# files NAME OPTION ARG: a file call of session NAME; stdin from $FILE_IN (default /dev/null)
files() {
	local name=$1
	shift
	PY_STDIN=${FILE_IN:-/dev/null} py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session "$name" "$@"
}

CLIENT() { PYTHONPATH=$(cd "$BATS_TEST_DIRNAME/../contrib/python" && pwd) py_exec "$PYTHON" "$@"; }

@test "interpreter: a cell shows its last expression's value as the REPL does, in the result too; a run with --show-value; None shows nothing" {
	sstart --standby 1
	cell v -c 'x = 41
x + 1'
	expect_status 0
	expect_stdout 42
	result_is '.value == "42" and .value_truncated == false and .exception == null'
	cell v -c 'print("out"); {"a": [1, 2]}'
	expect_stdout "out
{'a': [1, 2]}"
	result_is '.value == "{'"'"'a'"'"': [1, 2]}"'
	cell v -c 'None'
	expect_stdout ""
	result_is '.value == null'
	# _ is the last value shown, as in the REPL
	cell v -c '_["a"]'
	expect_stdout "[1, 2]"
	# a run: only when asked
	spy --show-value -c '6 * 7'
	expect_status 0
	expect_stdout 42
	result_is '.value == "42"'
	spy -c '6 * 7'
	expect_stdout ""
	result_is '.value == null'
	# one-shot runs are python3's own: refused, naming the option
	py --show-value -c '1'
	expect_status 2
	has "$stderr" "--show-value"
}

@test "interpreter: a huge value is capped in the result (value_truncated), its repr on stdout capped by --max-output; the session goes on" {
	sstart --standby 0
	cell h --max-output 1000 -c 'big = list(range(300000))
big'
	expect_status 0
	result_is '.value_truncated == true and (.value | length) == 65536 and .value_length > 1000000 and .stdout_truncated == true'
	cell h -c 'len(big)'
	expect_stdout 300000
}

@test "interpreter: an uncaught exception is in the result as type, message and traceback, besides stderr; the state before it is kept" {
	sstart --standby 1
	cell e -c 'n = 1
def f():
    return 1 / 0
f()'
	expect_status 1
	result_is '.exception.type == "ZeroDivisionError" and .exception.message == "division by zero"'
	result_is '.exception.traceback | test("line 3, in f")'
	result_is '.session.state == "kept"'
	has "$stderr" "ZeroDivisionError: division by zero"
	cell e -c 'class Oops(Exception): pass
raise Oops("mine")'
	result_is '.exception.type == "Oops" and .exception.message == "mine"'
	cell e -c 'import json; json.loads("{")'
	result_is '.exception.type == "json.decoder.JSONDecodeError"'
	cell e -c 'n'
	expect_stdout 1
	spy -c 'raise KeyError("k")'
	expect_status 1
	result_is '.exception.type == "KeyError" and .exception.message == "'"'k'"'"'
	# sys.exit is an exit, not an exception
	cell e -c 'import sys; sys.exit(3)'
	expect_status 3
	result_is '.exception == null'
}

@test "interpreter: matplotlib figures left open or shown come back as PNG; a figure bomb and a giant figure are dropped, counted" {
	sstart --standby 1 --preload matplotlib.pyplot
	cell f -c 'import matplotlib.pyplot as plt
plt.plot([1, 3, 2])
plt.show()
plt.figure(figsize=(2, 2))
plt.bar(["a"], [1])'
	expect_status 0
	result_is '(.figures | length) == 2 and .figures[0].format == "png" and .figures[0].width == 640 and .figures[1].width == 200'
	jq -r '.figures[0].data' "$RESULT" | base64 -d | head -c 8 | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a"
	# shown figures are closed: the next cell starts with none
	cell f -c 'len(plt.get_fignums())'
	expect_stdout 0
	result_is '(.figures | length) == 0 and .figures_dropped == 0'
	cell f -c 'for i in range(100):
    plt.figure(); plt.plot([i])'
	result_is '(.figures | length) == 16 and .figures_dropped == 84'
	cell f -c 'plt.figure(figsize=(1000, 1000), dpi=100)'
	expect_status 0
	result_is '(.figures | length) == 0 and .figures_dropped == 1 and .oom_killed == false'
	# a plain run too, from a fresh interpreter's matplotlib (MPLBACKEND=Agg)
	spy -c 'import matplotlib.pyplot as plt, os; plt.plot([1]); print(os.environ["MPLBACKEND"])'
	expect_stdout Agg
	result_is '(.figures | length) == 1'
}

@test "interpreter: files in and out of a session's /work: put, get, list, remove; subdirectories; a binary file" {
	sstart --standby 0
	printf 'a,b\n1,2\n' >"$BATS_TEST_TMPDIR/in.csv"
	FILE_IN=$BATS_TEST_TMPDIR/in.csv files d --put-file data/in.csv
	expect_status 0
	cell d -c 'open("data/in.csv").read().count("\n")'
	expect_stdout 2
	head -c 100000 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
	FILE_IN=$BATS_TEST_TMPDIR/blob files d --put-file blob.bin
	cell d -c 'import hashlib; open("out.txt", "w").write(hashlib.sha256(open("blob.bin", "rb").read()).hexdigest())'
	files d --get-file out.txt
	expect_stdout "$(sha256sum "$BATS_TEST_TMPDIR/blob" | cut -d' ' -f1)"
	"$SBX_OCI" python --connect "$SERVE_SOCKET" --session d --get-file blob.bin >"$BATS_TEST_TMPDIR/back"
	cmp "$BATS_TEST_TMPDIR/blob" "$BATS_TEST_TMPDIR/back"
	files d --list-files .
	expect_status 0
	jq -e -s 'map(.path) == ["blob.bin", "data", "data/in.csv", "out.txt"]' <<<"$stdout"
	jq -e -s 'map(select(.path == "data"))[0].type == "dir"' <<<"$stdout"
	files d --list-files data
	jq -e -s 'map(.path) == ["data/in.csv"]' <<<"$stdout"
	files d --remove-file data
	expect_status 0
	cell d -c 'import os; sorted(os.listdir("."))'
	expect_stdout "['blob.bin', 'out.txt']"
	# the first call of a session may be a file call
	FILE_IN=$BATS_TEST_TMPDIR/in.csv files d2 --put-file x.csv
	expect_status 0
	cell d2 -c 'len(open("x.csv").read())'
	expect_stdout 8
}

@test "interpreter: file names cannot leave /work: '..', absolute, through a link the cells made; a directory is not a file; size capped" {
	sstart --standby 0
	cell n -c 'import os; os.symlink("/etc/passwd", "link"); os.symlink("/etc", "dirlink"); os.mkdir("d")'
	for name in ../etc/passwd /etc/passwd link dirlink/passwd d a/../../x ""; do
		files n --get-file "$name"
		[ "$status" -ne 0 ] || { echo "get $name succeeded" >&2; return 1; }
		[ -z "$stdout" ]
		[ "$(printf '%s\n' "$stderr" | grep -c .)" = 1 ]
		has "$stderr" "--get-file"
	done
	files n --get-file ../etc/passwd
	has "$stderr" "'..' would leave /work"
	files n --get-file link
	has "$stderr" "Too many levels of symbolic links"
	# a put over a link replaces the link: never written through it
	FILE_IN=/dev/null files n --put-file link
	expect_status 0
	cell n -c 'import os; os.path.islink("link"), os.path.getsize("link")'
	expect_stdout "(False, 0)"
	FILE_IN=/dev/null files n --put-file dirlink/evil
	[ "$status" -ne 0 ]
	[ ! -e /etc/evil ]
	# more than 64 MiB: refused, nothing written
	head -c $((65 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/big"
	FILE_IN=$BATS_TEST_TMPDIR/big files n --put-file big
	[ "$status" -ne 0 ]
	has "$stderr" "more than 64 MiB"
	cell n -c 'import os; os.path.exists("big")'
	expect_stdout False
	files n --put-file x -c 'print(1)'
	expect_status 2
	has "$stderr" "a file call runs no program"
}

@test "interpreter: output reaches the client as it is written; a flood is capped; ^C interrupts a cell (KeyboardInterrupt, state kept) and a run" {
	sstart --standby 1
	local out=$BATS_TEST_TMPDIR/stream.out pid
	"$SBX_OCI" python --connect "$SERVE_SOCKET" --session s -c 'import time
print("first", flush=True)
time.sleep(3)
print("second")' >"$out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	for _ in $(seq 50); do grep -q first "$out" && break; sleep 0.1; done
	grep -q first "$out"
	kill -0 "$pid"
	refute grep -q second "$out"
	wait "$pid"
	grep -q second "$out"
	cell s --max-output 1000 -c 'import sys
for i in range(200000): sys.stdout.write("flood\n")
"done"'
	expect_status 0
	result_is '.stdout_truncated == true and .stdout_bytes > 1200000 and .value == "'"'done'"'"'
	# an interrupt: the CLI's first ^C asks the server
	# (once the cell runs, as its output says: on a busy machine a fixed pause may end first)
	"$SBX_OCI" python --connect "$SERVE_SOCKET" --session s --result "$BATS_TEST_TMPDIR/int.json" -c 'import time
n = 0
while True:
    n += 1
    if n == 20:
        print("looping", flush=True)
    time.sleep(0.01)' >"$out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	for _ in $(seq 100); do grep -q looping "$out" && break; sleep 0.1; done
	grep -q looping "$out"
	kill -INT "$pid"
	set +e
	wait "$pid"
	status=$?
	set -e
	[ "$status" = 1 ]
	RESULT=$BATS_TEST_TMPDIR/int.json result_is '.exception.type == "KeyboardInterrupt" and .session.state == "kept"'
	cell s -c 'n > 10'
	expect_stdout True
	"$SBX_OCI" python --connect "$SERVE_SOCKET" --result "$BATS_TEST_TMPDIR/int2.json" -c 'import time; print("sleeping", flush=True); time.sleep(60)' >"$out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	for _ in $(seq 100); do grep -q sleeping "$out" && break; sleep 0.1; done
	grep -q sleeping "$out"
	kill -INT "$pid"
	set +e
	wait "$pid"
	status=$?
	set -e
	[ "$status" = 1 ]
	RESULT=$BATS_TEST_TMPDIR/int2.json result_is '.exception.type == "KeyboardInterrupt"'
}

@test "interpreter: a standby takes a run with the client's --workdir: its files, written as the directory's owner, its mode put back; system paths refused" {
	sstart --standby 2
	until_count 2 standby_ids
	local before w=$BATS_TEST_TMPDIR/wd
	before=$(standby_ids)
	mkdir "$w"
	chown 4242:4343 "$w"
	chmod 700 "$w"
	echo in >"$w/in.txt"
	spy --workdir "$w" -c 'import os; open("out.txt", "w").write(open("in.txt").read().upper()); os.chmod(".", 0o777); os.getuid()'
	expect_status 0
	# the run was one of the standbys made before it came
	grep -qx "$(jq -r .id "$RESULT")" <<<"$before"
	[ "$(cat "$w/out.txt")" = IN ]
	[ "$(stat -c %u:%g "$w/out.txt")" = 4242:4343 ]
	[ "$(stat -c %a "$w")" = 700 ]
	result_is '.files == [{"path": "out.txt", "change": "created", "type": "file", "size": 3}] or (.files | map(.path) == ["out.txt"])'
	spy --workdir /etc -c 'pass'
	expect_status 125
	has "$stderr" "which the sandbox may not write"
	# Landlock holds on the taken workdir as on a one-shot one: nothing outside it
	spy --workdir "$w" -c 'open("/tmp/x", "w").write("y"); open("/etc/x", "w")'
	expect_status 1
	has "$stderr" "Read-only file system"
}

@test "interpreter: a standby takes a run with --rw DIR:/tmp/NAME and --env (a Jupyter kernel's): its files there, as the directory's owner, its mode put back, the variables over the server's; other binds get a sandbox of their own" {
	sstart --standby 2 --env SERVER_ONLY=s --env BOTH=server
	until_count 2 standby_ids
	local before k=$BATS_TEST_TMPDIR/sbx-kernel-t
	before=$(standby_ids)
	mkdir "$k"
	chown 4242:4343 "$k"
	chmod 700 "$k"
	echo in >"$k/in.txt"
	spy --rw "$k:/tmp/kernel" --env BOTH=client --env ONLY=c -c 'import os
d = "/tmp/kernel"
open(d + "/out.txt", "w").write(open(d + "/in.txt").read().upper())
os.chmod(d, 0o777)
print(os.environ["SERVER_ONLY"], os.environ["BOTH"], os.environ["ONLY"], sorted(os.listdir("/tmp")))'
	expect_status 0
	expect_stdout "s client c ['kernel']"
	# the run was one of the standbys made before it came
	grep -qx "$(jq -r .id "$RESULT")" <<<"$before"
	[ "$(cat "$k/out.txt")" = IN ]
	[ "$(stat -c %u:%g "$k/out.txt")" = 4242:4343 ]
	[ "$(stat -c %a "$k")" = 700 ]
	# nothing of it in the next standby's run
	spy -c 'import os; print(sorted(os.listdir("/tmp")), os.environ.get("ONLY"), os.environ["BOTH"])'
	expect_status 0
	expect_stdout "[] None server"
	# a system path is refused as a one-shot run refuses it
	spy --rw /etc:/tmp/etc -c 'pass'
	expect_status 125
	has "$stderr" "which the sandbox may not write"
	# a bind elsewhere than /tmp/NAME, two on one point, or a file, gets a sandbox made
	# for it, and holds there; so do the variables (the last --env of a name wins)
	local f=$BATS_TEST_TMPDIR/file.txt other=$BATS_TEST_TMPDIR/other
	echo file >"$f"
	mkdir "$other"
	for args in "--rw $k:/tmp/a/b" "--rw $f:/tmp/a/b" "--rw $other:/tmp/a/b --rw $k:/tmp/a/b" "--rw $other:/tmp/kernel --rw $k:/tmp/kernel"; do
		until_count 2 standby_ids
		before=$(standby_ids)
		# shellcheck disable=SC2086 # (the words of $args)
		spy $args --env BOTH=client -c 'import os
p = "/tmp/kernel" if os.path.exists("/tmp/kernel") else "/tmp/a/b"
print(open(p if os.path.isfile(p) else p + "/in.txt").read().strip(), os.environ["BOTH"])'
		expect_status 0
		[ "$stdout" = "in client" ] || [ "$stdout" = "file client" ]
		refute grep -qx "$(jq -r .id "$RESULT")" <<<"$before"
	done
	[ "$(stat -c %a "$k")" = 700 ]
	no_sandbox_processes
}

# lines_at_least TEXT N FILE: FILE has N lines with TEXT, or more (until_ok's check:
# its command line is read anew each time)
lines_at_least() { [ "$(grep -c "$1" "$3")" -ge "$2" ]; }

@test "interpreter: --die-with-parent through --connect: the client ends when the process that started it exits, and so does its run; a SIGINT not from a terminal always interrupts" {
	sstart --standby 1
	local out=$BATS_TEST_TMPDIR/out pid i
	# a shell starts the client and sleeps; killing the shell ends the client and the run
	bash -c '"$1" python --connect "$2" --die-with-parent --timeout 0 -c "import time; print(\"up\", flush=True); time.sleep(300)" \
		</dev/null >"$3" 2>"$3.err" &
		echo $! >"$3.pid"
		exec sleep 300' _ "$SBX_OCI" "$SERVE_SOCKET" "$out" &
	local parent=$!
	BG_PIDS+=("$parent")
	wait_for_file "$out.pid"
	for i in $(seq 100); do grep -q up "$out" && break; sleep 0.1; done
	grep -q up "$out"
	pid=$(cat "$out.pid")
	kill -KILL "$parent"
	for i in $(seq 100); do [ -d "/proc/$pid" ] || break; sleep 0.05; done
	[ ! -d "/proc/$pid" ]
	has "$(cat "$out.err")" "the process that started this one has exited"
	no_sandbox_processes
	# SIGINT sent by a program (stdin not a terminal), twice: two KeyboardInterrupts,
	# the run goes on
	"$SBX_OCI" python --connect "$SERVE_SOCKET" -c 'import time
n = 0
for _ in range(2):
    try:
        print("ready", flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        n += 1
        print("interrupted", n, flush=True)' </dev/null >"$out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	for i in 1 2; do
		until_ok 30 lines_at_least ready "$i" "$out"
		kill -INT "$pid"
		until_ok 30 grep -q "interrupted $i" "$out"
	done
	set +e
	wait "$pid"
	status=$?
	set -e
	[ "$status" = 0 ]
}

@test "interpreter: a standby takes a run that names the server's own --memory and --network; other values get a sandbox of their own, with their limits" {
	sstart --standby 2 --memory 300M --network none
	until_count 2 standby_ids
	local before
	before=$(standby_ids)
	spy --memory 300M --network none -c 'print(1)'
	expect_status 0
	grep -qx "$(jq -r .id "$RESULT")" <<<"$before"
	result_is '.limits.memory_bytes == 314572800'
	# another memory limit, or another network: made for the request, and they hold
	until_count 2 standby_ids
	before=$(standby_ids)
	spy --memory 200M -c 'bytearray(250 << 20)'
	[ "$status" -ne 0 ]
	refute grep -qx "$(jq -r .id "$RESULT")" <<<"$before"
	result_is '.oom_killed == true and .limits.memory_bytes == 209715200'
	spy --network loopback -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("lo")'
	expect_status 0
	expect_stdout lo
	refute grep -qx "$(jq -r .id "$RESULT")" <<<"$before"
}

@test "interpreter: the Python client: value, exception, figures, files, streaming callbacks, interrupt; run_python with files takes a standby" {
	sstart --standby 2 --preload matplotlib.pyplot
	CLIENT -c '
import sys, threading, time
from package import Session, run_python
sock = sys.argv[1]
with Session(sock) as s:
    s.put("data.csv", "a\n1\n2\n")
    r = s.run("import csv\nrows = list(csv.DictReader(open(\"data.csv\")))\nsum(int(r[\"a\"]) for r in rows)")
    assert r.value == "3" and r.ok, r
    r = s.run("rows[5]")
    assert r.exception["type"] == "IndexError" and "list index out of range" in r.exception["message"], r
    r = s.run("import matplotlib.pyplot as plt\nplt.plot([1, 2])")
    assert len(r.figures) == 1 and r.figures[0][:8] == b"\x89PNG\r\n\x1a\n", r
    seen = []
    r = s.run("import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)", on_stdout=seen.append)
    assert b"".join(seen) == b"0\n1\n2\n" and len(seen) >= 2, seen
    # interrupted once the cell says it runs (a timer could fire before the cell exists)
    looping = threading.Event()
    threading.Thread(target=lambda: looping.wait(30) and s.interrupt(), daemon=True).start()
    r = s.run("import time\nn = 0\nwhile True:\n    n += 1\n    if n == 20: print(\"looping\", flush=True)\n    time.sleep(0.01)",
              on_stdout=lambda b: b"looping" in b and looping.set())
    assert r.exception["type"] == "KeyboardInterrupt" and r.session_state == "kept", r
    s.run("open(\"out.bin\", \"wb\").write(bytes(range(256)))")
    assert s.get("out.bin") == bytes(range(256))
    assert sorted(e["path"] for e in s.list()) == ["data.csv", "out.bin"]
    s.remove("out.bin")
    assert [e["path"] for e in s.list()] == ["data.csv"]
    try:
        s.get("../etc/passwd")
        raise AssertionError("escaped")
    except Exception as e:
        assert "would leave /work" in str(e), e
r = run_python("open(\"o.txt\", \"w\").write(open(\"i.txt\").read() * 2)", connect=sock, files={"i.txt": "ab"}, show_value=True)
assert r.ok and r.files == {"o.txt": b"abab"} and r.value == "4", r
print(r.raw["id"])' "$SERVE_SOCKET"
	expect_status 0
	[[ "$stdout" == py-* ]]
}

@test "interpreter: contrib/python/notebook_agent.py: an agent loop over a session (upload, values, a chart, a crashing cell survived)" {
	sstart --standby 1
	PY_STDIN=/dev/null CLIENT "$BATS_TEST_DIRNAME/../contrib/python/notebook_agent.py" --socket "$SERVE_SOCKET" --out "$BATS_TEST_TMPDIR"
	expect_status 0
	has "$stdout" "[a crash (the interpreter dies)] exit 139, state rolled back"
	has "$stdout" "answer: east"
	[ "$(head -c 4 "$BATS_TEST_TMPDIR/figure-5-0.png" | od -An -c | tr -d ' ')" = "211PNG" ]
}

@test "interpreter: a session on the client's --workdir: its files there, as the directory's owner, its mode put back when the session ends" {
	sstart --standby 0
	local w=$BATS_TEST_TMPDIR/sw
	mkdir "$w"
	chown 4242:4343 "$w"
	chmod 750 "$w"
	echo 1 >"$w/n.txt"
	cell w --workdir "$w" -c 'n = int(open("n.txt").read())
import os; os.chmod(".", 0o777)
n'
	expect_status 0
	expect_stdout 1
	FILE_IN=/dev/null files w --workdir "$w" --put-file sub/empty
	expect_status 0
	cell w -c 'open("m.txt", "w").write(str(n + 1))'
	expect_status 0
	[ "$(cat "$w/m.txt")" = 2 ]
	[ "$(stat -c %u:%g "$w/m.txt")" = 4242:4343 ]
	# n.txt is root's (made above by the test): the sandbox is the directory's owner
	cell w -c 'open("n.txt", "w")'
	expect_status 1
	has "$stderr" "Permission denied"
	[ "$(cat "$w/n.txt")" = 1 ]
	[ "$(stat -c %u:%g "$w/sub/empty")" = 4242:4343 ]
	cell w --end-session
	# put back with the session's teardown, just after the reply
	for _ in $(seq 50); do [ "$(stat -c %a "$w")" = 750 ] && break; sleep 0.1; done
	[ "$(stat -c %a "$w")" = 750 ]
	cell w2 --workdir /usr -c '1'
	expect_status 125
	has "$stderr" "which the sandbox may not write"
}
