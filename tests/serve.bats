#!/usr/bin/env bats
# `sbx-oci serve` and `sbx-oci python --connect`: a warm interpreter that forks one
# sandbox per run. Each test starts its own server on its own state root
# (serve_start, helpers/sandbox.bash) and checks what a user of the client sees:
# output, exit status and --result as one-shot `sbx-oci python` gives them, the same
# sandbox, per-run limits, nothing carried from one run to the next, who may connect,
# the server's load limits, and what is left (nothing) when a client, the warm
# interpreter or the server itself goes away.

load helpers
load helpers/sandbox

setup() {
	requires root userns python-stack
	setup_state
	SERVE_PID=
	BG_PIDS=()
}

teardown() {
	local rc=0 pid
	# background clients a failed test left behind (by the PIDs this test recorded)
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	serve_stop || rc=1
	helpers_teardown || rc=1
	return $rc
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
bg_cpy() {
	local name=$1
	shift
	timeout -k 5 60 "$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$(new_id)" "$@" \
		</dev/null >"$BATS_TEST_TMPDIR/$name.out" 2>"$BATS_TEST_TMPDIR/$name.err" 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
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

# The containers of this test's state root (none: empty).
containers() { "$SBX_OCI" --root "$SBX_ROOT" list -q; }
no_containers() {
	local left
	left=$(containers)
	[ -z "$left" ] && return 0
	echo "containers left: $left" >&2
	return 1
}
no_sandbox_processes() { expect_no_processes_of "$HOST_ID"; }

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

# ms since the epoch
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ---------------------------------------------------------------- runs

@test "serve: the socket is 0600 and root's; a run's output, exit status, exception and signal pass through" {
	serve_start
	[ "$(stat -c '%a %u %F' "$SERVE_SOCKET")" = "600 0 socket" ]
	has "$(cat "$SERVE_LOG")" "listening on $SERVE_SOCKET"
	cpy -c 'import os, sys; print("hello", os.getpid(), os.getppid()); print("warn", file=sys.stderr)'
	expect_status 0
	expect_stdout "hello 2 0"
	[ "$stderr" = warn ]
	result_is --arg id "$PY_ID" '.id == $id and .error == null and .exit_code == 0 and .signal == null'
	result_is '.stdout_bytes == 12 and .stderr_bytes == 5 and .timed_out == false and .oom_killed == false'
	cpy -c 'import sys; sys.exit(3)'
	expect_status 3
	result_is '.exit_code == 3 and .signal == null and .error == null'
	cpy -c 'raise ValueError("boom")'
	expect_status 1
	result_is '.exit_code == 1'
	# the traceback is the program's, as python3 prints it: no frame of the warm interpreter
	[ "$(sed -n 1p <<<"$stderr")" = "Traceback (most recent call last):" ] || { echo "$stderr" >&2; return 1; }
	[[ "$(sed -n 2p <<<"$stderr")" == '  File "<string>"'* ]] || { echo "$stderr" >&2; return 1; }
	[ "$(tail -n 1 <<<"$stderr")" = "ValueError: boom" ]
	lacks "$stderr" zygote
	lacks "$stderr" runpy
	cpy -c 'import os; os.kill(os.getpid(), 15); print("survived")'
	expect_status 143
	[ -z "$stdout" ]
	result_is '.exit_code == 143 and .signal == "SIGTERM"'
	no_sandbox_processes
	no_containers
}

@test "serve: a script with its arguments (absolute and relative to the client's cwd), -m json.tool, and - (stdin)" {
	serve_start
	local d=$BATS_TEST_TMPDIR/scripts
	mkdir "$d"
	echo 'import sys; print("script", sys.argv[1:])' >"$d/s.py"
	cpy "$d/s.py" a --network none
	expect_status 0
	expect_stdout "script ['a', '--network', 'none']"
	cd "$d"
	cpy s.py b
	expect_status 0
	expect_stdout "script ['b']"
	PY_STDIN=$d/in.json
	echo '{"b": 1, "a": 2}' >"$PY_STDIN"
	cpy -m json.tool --sort-keys --compact
	expect_status 0
	expect_stdout '{"a":2,"b":1}'
	echo 'import sys; print("stdin", sys.argv, sys.stdin.read())' >"$PY_STDIN"
	cpy - x y
	expect_status 0
	expect_stdout "stdin ['-', 'x', 'y'] "
}

@test "serve: --result FILE and --workdir DIR relative to the client's cwd; the result has exit_code, limits and files" {
	serve_start
	local d=$BATS_TEST_TMPDIR/client
	mkdir -p "$d/w"
	echo old >"$d/w/modify.txt"
	cd "$d"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$(new_id)" --memory 256M --timeout 20 \
		--workdir w --result r.json -c '
import os
open("/work/new.txt", "w").write("from the sandbox")
open("/work/modify.txt", "a").write("more\n")
print(os.getcwd(), sorted(os.listdir(".")))'
	expect_status 0
	expect_stdout "/work ['modify.txt', 'new.txt']"
	# written by the client's side (where one-shot would have), not the server's cwd
	[ -f "$d/r.json" ]
	RESULT=$d/r.json
	[ "$(cat "$d/w/new.txt")" = "from the sandbox" ]
	[ "$(cat "$d/w/modify.txt")" = "old
more" ]
	result_is --arg w "$d/w" '.workdir == $w and .exit_code == 0 and .error == null'
	result_is '.limits.memory_bytes == 268435456 and .limits.timeout_s == 20'
	result_is '[.files[] | select(.path == "new.txt" and .change == "created" and .type == "file" and .size == 16)] | length == 1'
	result_is '[.files[] | select(.path == "modify.txt" and .change == "modified" and .size == 9)] | length == 1'
	result_is '(.files | length) == 2'
	# --result - : the JSON on stdout, with the output in it
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$(new_id)" --result - -c 'print("in json")'
	expect_status 0
	jq -e '.exit_code == 0 and .stdout == "in json\n"' <<<"$stdout"
}

# ---------------------------------------------------------------- the sandbox

# What a program can see of its sandbox, printed the same whichever way it ran.
# argv: the host's pid, net, ipc, uts, mnt and cgroup namespace links.
SANDBOX_PROBE='
import errno, os, resource, socket, sys
st = dict(l.split(":", 1) for l in open("/proc/self/status"))
for k in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"):
    print(k, " ".join(st.get(k, "(none)").split()))
print("hostname", socket.gethostname())
print("pid", os.getpid(), "procs", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
for ns, host in zip(("pid", "net", "ipc", "uts", "mnt", "cgroup"), sys.argv[1:]):
    print(ns, "own" if os.readlink("/proc/self/ns/" + ns) != host else "HOST")
print("ifaces", sorted(n for _, n in socket.if_nameindex()))
for r in ("RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_CORE"):
    print(r, resource.getrlimit(getattr(resource, r)))
print(open("/proc/meminfo").readline().strip())
print("cwd", os.getcwd(), "umask", oct(os.umask(0o22)))
print("env", sorted(k for k in os.environ if not k.endswith("_NUM_THREADS")))
for path in ("/etc/sbx-serve-escape", "/usr/sbx-serve-escape", "/proc/sys/kernel/hostname", "/work/w", "/tmp/t"):
    try:
        with open(path, "w") as f:
            f.write("x")
        print(path, "written")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
try:
    s = socket.socket()
    s.settimeout(3)
    s.connect(("192.0.2.1", 80))
    print("outside connected")
except OSError as e:
    print("outside", errno.errorcode.get(e.errno, str(e)))
try:
    os.setuid(0)
    print("setuid 0 worked")
except OSError as e:
    print("setuid", errno.errorcode[e.errno])
'

@test "serve: the run's sandbox is one-shot's (credentials, capabilities, seccomp, namespaces, network, limits, read-only system)" {
	serve_start
	local ns host=()
	for ns in pid net ipc uts mnt cgroup; do host+=("$(readlink "/proc/self/ns/$ns")"); done
	py_exec "$SBX_OCI" --root "$SBX_ROOT" python --id "$(new_id)" --result "$BATS_TEST_TMPDIR/oneshot.json" \
		-c "$SANDBOX_PROBE" "${host[@]}"
	expect_status 0
	local oneshot=$stdout
	cpy -c "$SANDBOX_PROBE" "${host[@]}"
	expect_status 0
	if [ "$stdout" != "$oneshot" ]; then
		echo "one-shot and --connect differ:" >&2
		diff <(echo "$oneshot") <(echo "$stdout") >&2 || true
		return 1
	fi
	# what the probe printed is a sandbox (not merely the same thing twice)
	grep -qx 'Uid 101000 101000 101000 101000\|Uid 1000 1000 1000 1000' <<<"$stdout" || { echo "$stdout" >&2; return 1; }
	grep -qx 'CapEff 0000000000000000' <<<"$stdout"
	grep -qx 'CapBnd 0000000000000000' <<<"$stdout"
	grep -qx 'NoNewPrivs 1' <<<"$stdout"
	grep -qx 'Seccomp 2' <<<"$stdout"
	grep -qx 'hostname sandbox' <<<"$stdout"
	grep -qx 'pid 2 procs \[1, 2\]' <<<"$stdout"
	for ns in pid net ipc uts mnt; do grep -qx "$ns own" <<<"$stdout"; done
	grep -qx "ifaces \['lo'\]" <<<"$stdout"
	grep -Eqx '/etc/sbx-serve-escape (EROFS|EACCES)' <<<"$stdout"
	grep -Eqx '/usr/sbx-serve-escape (EROFS|EACCES)' <<<"$stdout"
	grep -Eqx '/proc/sys/kernel/hostname (EROFS|EACCES)' <<<"$stdout"
	grep -qx '/work/w written' <<<"$stdout"
	grep -qx '/tmp/t written' <<<"$stdout"
	grep -Eqx 'outside (ENETUNREACH|EPERM)' <<<"$stdout"
	grep -qx 'setuid EPERM' <<<"$stdout"
	[ ! -e /etc/sbx-serve-escape ] && [ ! -e /usr/sbx-serve-escape ]
	# the result says the same of both
	local f
	for f in network limits degraded landlock_abi cpu_scope peak_memory_scope; do
		[ "$(jq -c ".$f" "$BATS_TEST_TMPDIR/oneshot.json")" = "$(jq -c ".$f" "$RESULT")" ] ||
			{ echo "result .$f: one-shot $(jq -c ".$f" "$BATS_TEST_TMPDIR/oneshot.json"), --connect $(jq -c ".$f" "$RESULT")" >&2; return 1; }
	done
	result_is '.landlock_abi > 0 and .network == "loopback"'
	no_sandbox_processes
}

# ---------------------------------------------------------------- limits

@test "serve: per-run limits: --timeout kills (137, timed_out), --memory OOM-kills (137, oom_killed), --max-output truncates" {
	serve_start
	cpy --timeout 1 -c 'while True: pass'
	expect_status 137
	result_is '.exit_code == 137 and .signal == "SIGKILL" and .timed_out == true and .limits.timeout_s == 1'
	cpy --memory 64M -c 'b = bytearray(512 * 1024 * 1024); print("allocated", len(b))'
	expect_status 137
	lacks "$stdout" allocated
	result_is '.exit_code == 137 and .oom_killed == true and .timed_out == false and .limits.memory_bytes == 67108864'
	result_is '.peak_memory_bytes <= 67108864'
	cpy --max-output 10 -c 'print("x" * 1000)'
	expect_status 0
	[ "${#stdout}" -le 10 ] && [ "${#stdout}" -gt 0 ] || { echo "stdout of ${#stdout} bytes" >&2; return 1; }
	result_is '.stdout_truncated == true and .stdout_bytes == 1001'
	# one run's limits are not the next one's
	cpy -c 'b = bytearray(128 * 1024 * 1024); print(len(b))'
	expect_status 0
	expect_stdout 134217728
	result_is '.limits.memory_bytes == 2147483648 and .limits.timeout_s == 300'
	no_sandbox_processes
}

@test "serve: the server's options are every run's defaults (--timeout 2, --memory 128M); a client's own override them" {
	local t0 t1
	serve_start --timeout 2 --memory 128M
	t0=$(now_ms)
	cpy -c 'while True: pass'
	t1=$(now_ms)
	expect_status 137
	result_is '.timed_out == true and .limits.timeout_s == 2 and .limits.memory_bytes == 134217728'
	[ $((t1 - t0)) -ge 1900 ] && [ $((t1 - t0)) -lt 10000 ] || { echo "took $((t1 - t0)) ms" >&2; return 1; }
	cpy --memory 1G -c 'print(open("/proc/meminfo").readline().split()[1])'
	expect_status 0
	expect_stdout 1048576
	result_is '.limits.memory_bytes == 1073741824 and .limits.timeout_s == 2'
	serve_stop
	serve_start --timeout 30
	t0=$(now_ms)
	cpy --timeout 1 -c 'while True: pass'
	t1=$(now_ms)
	expect_status 137
	result_is '.timed_out == true and .limits.timeout_s == 1'
	[ $((t1 - t0)) -lt 10000 ] || { echo "took $((t1 - t0)) ms" >&2; return 1; }
}

# ---------------------------------------------------------------- preload and isolation

@test "serve: --preload: the module is in sys.modules when the program starts; others are imported as usual" {
	serve_start --preload decimal,json
	cpy -c '
import sys
print("decimal" in sys.modules, "json" in sys.modules, "csv" in sys.modules)
import csv, decimal
print(csv.__name__, decimal.Decimal("1.10") + decimal.Decimal("2.205"))'
	expect_status 0
	expect_stdout "True True False
csv 3.305"
	has "$(cat "$SERVE_LOG")" "decimal,json"
	# without --preload, it is not there
	serve_stop
	serve_start
	cpy -c 'import sys; print("decimal" in sys.modules)'
	expect_status 0
	expect_stdout False
}

@test "serve: nothing of one run is seen by the next: files, environment, module state, processes" {
	serve_start --preload decimal
	cpy -c '
import decimal, os, subprocess, sys
open("/tmp/x", "w").write("run 1")
open("/work/x", "w").write("run 1")
open("/dev/shm/x", "w").write("run 1")
os.environ["LEAK"] = "1"
decimal.LEAKED = 1
decimal.getcontext().prec = 5
sys.modules["leak_mod"] = sys
sys.path.insert(0, "/leak")
p = subprocess.Popen(["sleep", "300"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    import time
    time.sleep(300)
    os._exit(0)
print("run 1 done", p.poll() is None)'
	expect_status 0
	expect_stdout "run 1 done True"
	cpy -c '
import decimal, os, sys
print([p for p in ("/tmp/x", "/work/x", "/dev/shm/x") if os.path.exists(p)])
print("LEAK" in os.environ, hasattr(decimal, "LEAKED"), decimal.getcontext().prec, "leak_mod" in sys.modules, "/leak" in sys.path)
print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))'
	expect_status 0
	expect_stdout "[]
False False 28 False False
[1, 2]"
	no_sandbox_processes
	no_containers
}

# ---------------------------------------------------------------- refusals

@test "serve: --rootfs, --no-subprocess and another --python are refused through --connect: 125, one line, a result with error" {
	serve_start
	local arg
	for arg in "--rootfs /" "--no-subprocess" "--python /usr/bin/python3.11-other"; do
		# shellcheck disable=SC2086
		cpy $arg -c 'open("/work/ran", "w"); print("ran")'
		expect_status 125
		assert_one_line_error "${arg%% *}"
		[ -z "$stdout" ]
		result_is '(.error | type == "string" and length > 0) and .exit_code == null and .signal == null'
	done
	no_containers
	# the server's own interpreter, named, is fine
	cpy --python /usr/bin/python3 -c 'print("ran")'
	expect_status 0
	expect_stdout ran
}

@test "serve: another uid cannot run anything: the client exits 125 with one line" {
	serve_start
	id -u "$RL_USER" >/dev/null 2>&1 || useradd -M -s /bin/sh "$RL_USER" 2>/dev/null || id -u "$RL_USER" >/dev/null
	local sbx=$SBX_OCI marker=$BATS_TEST_TMPDIR/ran-as-other
	if ! runuser -u "$RL_USER" -- test -x "$sbx"; then
		sbx=$BATS_TEST_TMPDIR/sbx-oci-copy
		cp "$SBX_OCI" "$sbx"
		chmod 755 "$sbx"
	fi
	# as made: 0600 and root's (connect fails, or the server refuses)
	py_exec runuser -u "$RL_USER" -- env -C / "$sbx" python --connect "$SERVE_SOCKET" -c 'print("ran")'
	expect_status 125
	assert_one_line_error "$SERVE_SOCKET"
	[ -z "$stdout" ]
	# even when the file's mode lets it connect, the server checks the peer's uid
	local d=$SERVE_SOCKET
	while d=$(dirname "$d") && [ "$d" != / ]; do chmod o+x "$d"; done
	chmod 666 "$SERVE_SOCKET"
	py_exec runuser -u "$RL_USER" -- env -C / "$sbx" python --connect "$SERVE_SOCKET" -c 'print("ran")'
	expect_status 125
	assert_one_line_error "this server runs sandboxes for uid 0 only"
	[ -z "$stdout" ]
	has "$(cat "$SERVE_LOG")" "refused a connection"
	no_containers
	# the owner still can
	cpy -c 'print("ran")'
	expect_status 0
	expect_stdout ran
}

@test "serve: beyond --max-runs 1 and --queue 0 a connection is refused as busy; the running one completes" {
	serve_start --max-runs 1 --queue 0
	local w=$BATS_TEST_TMPDIR/w1
	mkdir "$w"
	bg_cpy first --workdir "$w" -c 'import time; open("/work/started", "w").close(); time.sleep(3); print("first done")'
	wait_for_file "$w/started"
	cpy -c 'open("/work/ran", "w"); print("second")'
	expect_status 125
	assert_one_line_error busy
	[ -z "$stdout" ]
	local rc=0
	wait "$BG_PID" || rc=$?
	[ "$rc" -eq 0 ] || { echo "first run: $rc $(cat "$BATS_TEST_TMPDIR/first.err")" >&2; return 1; }
	[ "$(cat "$BATS_TEST_TMPDIR/first.out")" = "first done" ]
	# the slot is free again
	cpy -c 'print("third")'
	expect_status 0
	expect_stdout third
}

@test "serve: a connection within --queue waits for a run to end, then runs" {
	serve_start --max-runs 1 --queue 1
	local w=$BATS_TEST_TMPDIR/w1 t0 t1
	mkdir "$w"
	bg_cpy first --workdir "$w" -c 'import time; open("/work/started", "w").close(); time.sleep(2); print("first done")'
	wait_for_file "$w/started"
	t0=$(now_ms)
	cpy -c 'print("second")'
	t1=$(now_ms)
	expect_status 0
	expect_stdout second
	# it waited for the first
	[ $((t1 - t0)) -ge 1000 ] || { echo "the queued run took only $((t1 - t0)) ms" >&2; return 1; }
	wait "$BG_PID"
	[ "$(cat "$BATS_TEST_TMPDIR/first.out")" = "first done" ]
}

# ---------------------------------------------------------------- ends

@test "serve: a client killed mid-run ends its run: the program is killed and its container deleted" {
	serve_start
	local w=$BATS_TEST_TMPDIR/w1
	mkdir "$w"
	bg_cpy hung --workdir "$w" -c 'import time; open("/work/started", "w").close(); time.sleep(60)'
	wait_for_file "$w/started"
	[ -n "$(containers)" ]
	kill -KILL "$BG_PID"
	wait "$BG_PID" || true
	until_ok 5 no_sandbox_processes
	until_ok 5 no_containers
	# the server carries on
	kill -0 "$SERVE_PID"
	cpy -c 'print("next")'
	expect_status 0
	expect_stdout next
}

@test "serve: SIGTERM during a run: the run ends, its container is deleted, the socket removed, exit 0" {
	serve_start
	local w=$BATS_TEST_TMPDIR/w1 pid=$SERVE_PID rc=0 i kids
	mkdir "$w"
	bg_cpy long --workdir "$w" -c 'import time; open("/work/started", "w").close(); time.sleep(60)'
	wait_for_file "$w/started"
	kids=$(descendants "$pid")
	kill -TERM "$pid"
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	refute kill -0 "$pid" 2>/dev/null
	SERVE_PID=
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || { echo "serve exited $rc:" >&2; cat "$SERVE_LOG" >&2; return 1; }
	has "$(cat "$SERVE_LOG")" "signal 15: "
	[ ! -e "$SERVE_SOCKET" ]
	rc=0
	wait "$BG_PID" || rc=$?
	[ "$rc" -ne 0 ] || { echo "the client of the ended run exited 0" >&2; return 1; }
	until_ok 5 no_sandbox_processes
	# shellcheck disable=SC2086
	until_ok 5 none_alive $kids
	no_containers
}

@test "serve: the warm interpreter killed: the server says so, starts another (with the preload), later runs work" {
	serve_start --preload decimal
	local z="" p new=""
	for p in $(ps -o pid= --ppid "$SERVE_PID"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q sbx-oci-zygote && z=$p
	done
	[ -n "$z" ] || { echo "no warm interpreter under $SERVE_PID" >&2; ps -o pid=,args= --ppid "$SERVE_PID" >&2; return 1; }
	kill -KILL "$z"
	until_ok 5 grep -q "the warm interpreter ended" "$SERVE_LOG"
	for _ in $(seq 50); do
		cpy -c 'import sys; print("decimal" in sys.modules)'
		[ "$status" -eq 0 ] && break
		sleep 0.1
	done
	expect_status 0
	expect_stdout True
	for p in $(ps -o pid= --ppid "$SERVE_PID"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q sbx-oci-zygote && new=$p
	done
	[ -n "$new" ] && [ "$new" != "$z" ]
	kill -0 "$SERVE_PID"
	no_sandbox_processes
}

@test "serve: the server killed with SIGKILL mid-run: its processes and the sandbox go, delete --force cleans up, a new server replaces the socket" {
	serve_start
	local w=$BATS_TEST_TMPDIR/w1 pid=$SERVE_PID kids c rc=0
	mkdir "$w"
	bg_cpy long --workdir "$w" -c 'import time; open("/work/started", "w").close(); time.sleep(60)'
	wait_for_file "$w/started"
	kids=$(descendants "$pid")
	[ "$(wc -w <<<"$kids")" -ge 3 ] || { echo "server's processes: $kids" >&2; return 1; }
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	SERVE_PID=
	# shellcheck disable=SC2086
	until_ok 5 none_alive $kids
	until_ok 5 no_sandbox_processes
	wait "$BG_PID" || rc=$?
	[ "$rc" -ne 0 ] || { echo "the client of the killed server exited 0" >&2; return 1; }
	for c in $(containers); do
		"$SBX_OCI" --root "$SBX_ROOT" delete --force "$c"
	done
	no_containers
	# the socket the dead server left is replaced
	[ -S "$SERVE_SOCKET" ]
	serve_start
	cpy -c 'print("new server")'
	expect_status 0
	expect_stdout "new server"
}

# ---------------------------------------------------------------- bad input

@test "serve: bad command lines: no --socket, an unknown option or a program is exit 2; a path that is a file is kept" {
	sbx_split serve
	expect_status 2
	assert_one_line_error "--socket"
	sbx_split serve --socket "$BATS_TEST_TMPDIR/s.sock" --bogus
	expect_status 2
	assert_one_line_error "--bogus"
	sbx_split serve --socket "$BATS_TEST_TMPDIR/s.sock" -c 'print(1)'
	expect_status 2
	assert_one_line_error "-c"
	sbx_split serve --socket "$BATS_TEST_TMPDIR/s.sock" prog.py
	expect_status 2
	assert_one_line_error "prog.py"
	sbx_split serve --socket "$BATS_TEST_TMPDIR/s.sock" --max-runs 0
	expect_status 2
	assert_one_line_error "--max-runs"
	[ ! -e "$BATS_TEST_TMPDIR/s.sock" ]
	# a regular file where the socket would go: an error naming it, the file intact
	local f=$BATS_TEST_TMPDIR/not-a-socket
	echo "precious" >"$f"
	sbx_split serve --socket "$f"
	[ "$status" -ne 0 ]
	assert_one_line_error "$f"
	[ -f "$f" ] && [ "$(cat "$f")" = precious ]
	no_sandbox_processes
}

@test "serve: a second server on a socket in use is refused and the first keeps serving" {
	serve_start
	sbx_split serve --socket "$SERVE_SOCKET"
	[ "$status" -ne 0 ]
	has "$stderr" "$SERVE_SOCKET"
	[ -S "$SERVE_SOCKET" ]
	cpy -c 'print("still")'
	expect_status 0
	expect_stdout still
}
