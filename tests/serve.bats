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
load helpers/serve

# ---------------------------------------------------------------- runs

@test "serve: the socket is 0600 and root's; a run's output, exit status, exception and signal pass through" {
	sstart
	[ "$(stat -c '%a %u %F' "$SERVE_SOCKET")" = "600 0 socket" ]
	has "$(cat "$SERVE_LOG")" "listening on $SERVE_SOCKET"
	cpy -c 'import os, sys; print("hello", os.getpid(), os.getppid()); print("warn", file=sys.stderr)'
	expect_status 0
	expect_stdout "hello 2 0"
	[ "$stderr" = warn ]
	result_is --arg id "$PY_ID" '.id == $id and .error == null and .exit_code == 0 and .signal == null'
	result_is '.stdout_bytes == 10 and .stderr_bytes == 5 and .timed_out == false and .oom_killed == false'
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
	sstart
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
	echo 'import sys; print("stdin", sys.argv, repr(sys.stdin.read()))' >"$PY_STDIN"
	cpy - x y
	expect_status 0
	expect_stdout "stdin ['-', 'x', 'y'] ''"
}

@test "serve: --result FILE and --workdir DIR relative to the client's cwd; the result has exit_code, limits and files" {
	sstart
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
	# written on the client's side (where one-shot would have), not in the server's cwd
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
	# --result -: the JSON on stdout, with the output in it
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$(new_id)" --result - -c 'print("in json")'
	expect_status 0
	jq -e '.exit_code == 0 and .stdout == "in json\n"' <<<"$stdout"
}

@test "serve: the run's environment is one-shot's from the client's: allow-listed variables are the client's, secrets of neither side pass" {
	TZ=Asia/Tokyo SBX_SERVER_SECRET=server-secret-1 sstart
	TZ=Europe/Paris SBX_CLIENT_SECRET=client-secret-2 cpy --env FOO=bar -c '
import os
print(os.environ.get("TZ"), os.environ.get("FOO"), os.environ.get("HOME"))
print(sorted(k for k in os.environ if "SECRET" in k))'
	expect_status 0
	expect_stdout "Europe/Paris bar /work
[]"
	refute grep -q secret "$RESULT"
	# a client without TZ gets none, not the server's
	env -u TZ "$SBX_OCI" python --connect "$SERVE_SOCKET" -c 'import os; print(os.environ.get("TZ"))' \
		</dev/null >"$BATS_TEST_TMPDIR/tz.out" 2>&1
	[ "$(cat "$BATS_TEST_TMPDIR/tz.out")" = None ]
}

# ---------------------------------------------------------------- the sandbox

# What a program can see of its sandbox, printed the same whichever way it ran.
SANDBOX_PROBE='
import errno, os, resource, socket
st = dict(l.split(":", 1) for l in open("/proc/self/status"))
for k in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"):
    print(k, " ".join(st.get(k, "(none)").split()))
print("hostname", socket.gethostname())
print("pid", os.getpid(), "procs", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print("ifaces", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
print("sysv shm segments", len(open("/proc/sysvipc/shm").readlines()) - 1)
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
    print("setuid", errno.errorcode[e.errno], os.getuid())
'

@test "serve: the run's sandbox is one-shot's (credentials, capabilities, seccomp, namespaces, network, limits, read-only system)" {
	sstart
	# a SysV segment on the host, which a sandbox's own IPC namespace does not show
	IPC_ID=$(ipcmk -M 4096 | awk '{ print $NF }')
	[ "$(($(wc -l </proc/sysvipc/shm) - 1))" -ge 1 ]
	py_exec "$SBX_OCI" --root "$SBX_ROOT" python --id "$(new_id)" --host-id "$HOST_ID" \
		--result "$BATS_TEST_TMPDIR/oneshot.json" -c "$SANDBOX_PROBE"
	expect_status 0
	local oneshot=$stdout f
	cpy -c "$SANDBOX_PROBE"
	expect_status 0
	if [ "$stdout" != "$oneshot" ]; then
		echo "one-shot and --connect differ:" >&2
		diff <(echo "$oneshot") <(echo "$stdout") >&2 || true
		return 1
	fi
	# what the probe printed is a sandbox (not merely the same thing twice)
	grep -qx 'Uid 1000 1000 1000 1000' <<<"$stdout" || { echo "$stdout" >&2; return 1; }
	grep -qx 'CapEff 0000000000000000' <<<"$stdout"
	grep -qx 'CapBnd 0000000000000000' <<<"$stdout"
	grep -qx 'NoNewPrivs 1' <<<"$stdout"
	grep -qx 'Seccomp 2' <<<"$stdout"
	grep -qx 'hostname sandbox' <<<"$stdout"
	grep -qx 'pid 2 procs \[1, 2\]' <<<"$stdout"
	grep -qx "ifaces \['lo'\]" <<<"$stdout"
	grep -qx 'sysv shm segments 0' <<<"$stdout"
	grep -Eqx '/etc/sbx-serve-escape (EROFS|EACCES)' <<<"$stdout"
	grep -Eqx '/usr/sbx-serve-escape (EROFS|EACCES)' <<<"$stdout"
	grep -Eqx '/proc/sys/kernel/hostname (EROFS|EACCES)' <<<"$stdout"
	grep -qx '/work/w written' <<<"$stdout"
	grep -qx '/tmp/t written' <<<"$stdout"
	grep -Eqx 'outside (ENETUNREACH|EPERM)' <<<"$stdout"
	grep -Eqx 'setuid (EPERM|EINVAL) 1000' <<<"$stdout"
	[ ! -e /etc/sbx-serve-escape ] && [ ! -e /usr/sbx-serve-escape ]
	# the results say the same of both
	for f in network limits degraded landlock_abi cpu_scope peak_memory_scope; do
		[ "$(jq -c ".$f" "$BATS_TEST_TMPDIR/oneshot.json")" = "$(jq -c ".$f" "$RESULT")" ] ||
			{ echo "result .$f: one-shot $(jq -c ".$f" "$BATS_TEST_TMPDIR/oneshot.json"), --connect $(jq -c ".$f" "$RESULT")" >&2; return 1; }
	done
	result_is '.landlock_abi > 0 and .network == "loopback"'
	no_sandbox_processes
}

# ---------------------------------------------------------------- standbys

@test "serve: a run without options of its own takes a standby made before it came; it is torn down after, and another made" {
	sstart
	local before id
	until_count 2 standby_ids
	before=$(standby_ids)
	spy -c 'import os; print(os.getpid(), os.getppid(), os.getcwd(), os.getuid(), sorted(os.listdir("/work")))'
	expect_status 0
	expect_stdout "2 0 /work 1000 []"
	result_is '.exit_code == 0 and .signal == null and .error == null and .workdir == null and .timed_out == false'
	id=$(jq -r .id "$RESULT")
	grep -qx "$id" <<<"$before" || { echo "the run's container $id was not a standby: $before" >&2; return 1; }
	# the standby's join is not the program's: its CPU time is the run's alone
	result_is '.cpu_scope == "cgroup" and .cpu_user_ms + .cpu_sys_ms < 50'
	# gone, and replaced by another
	until_ok 5 container_gone "$id"
	no_containers
	no_sandbox_processes
	[ "$(standby_ids | wc -l)" -eq 2 ]
	[ "$(standby_ids)" != "$before" ]
	has "$(cat "$SERVE_LOG")" "2 standing by"
}

@test "serve: a standby's run is one-shot's: stdin, exit status, exception, signal, os._exit, --timeout, --max-output, --result -, environment" {
	sstart
	local out
	PY_STDIN=$BATS_TEST_TMPDIR/in
	echo 'import sys; print("stdin", sys.argv[1:], repr(sys.stdin.read()))' >"$PY_STDIN"
	spy - a b
	expect_status 0
	expect_stdout "stdin ['a', 'b'] ''"
	echo "data" >"$PY_STDIN"
	spy -c 'import sys; print(sys.stdin.read().strip())'
	expect_status 0
	expect_stdout data
	PY_STDIN=/dev/null
	spy -m json.tool --help
	expect_status 0
	has "$stdout" "usage:"
	spy -c 'import sys; print("out"); print("err", file=sys.stderr); sys.exit(4)'
	expect_status 4
	expect_stdout out
	[ "$stderr" = err ]
	result_is '.exit_code == 4 and .stdout_bytes == 4 and .stderr_bytes == 4'
	spy -c 'raise KeyError("boom")'
	expect_status 1
	[ "$(tail -n 1 <<<"$stderr")" = "KeyError: 'boom'" ]
	lacks "$stderr" zygote
	# the ends that say no word on the run channel: the fork's waiter reports them
	spy -c 'import os, signal; print("before", flush=True); os.kill(os.getpid(), signal.SIGTERM)'
	expect_status 143
	expect_stdout before
	result_is '.exit_code == 143 and .signal == "SIGTERM"'
	spy -c 'import os; print("x", flush=True); os._exit(7)'
	expect_status 7
	expect_stdout x
	spy -c 'import os; os.close(3); print("closed")'
	expect_status 0
	expect_stdout closed
	# per-run options a standby takes
	spy --timeout 1 -c 'while True: pass'
	expect_status 137
	result_is '.timed_out == true and .limits.timeout_s == 1 and .wall_ms >= 900'
	spy --max-output 5 -c 'print("y" * 100)'
	expect_status 0
	[ "$stdout" = yyyyy ]
	result_is '.stdout_truncated == true and .stdout_bytes == 101'
	out=$(cd "$BATS_TEST_TMPDIR" && "$SBX_OCI" python --connect "$SERVE_SOCKET" --result - -c 'print("in json")')
	jq -e '.stdout == "in json\n" and .exit_code == 0' <<<"$out"
	# the client's allow-listed environment, no one's secrets
	LANG=C.UTF-8 PYTHONHASHSEED=7 SECRET_TOKEN=x spy -c 'import os; print(os.environ.get("PYTHONHASHSEED"), "SECRET_TOKEN" in os.environ, os.environ["HOME"])'
	expect_status 0
	expect_stdout "7 False /work"
	no_containers
	no_sandbox_processes
}

@test "serve: a client whose stdout and stderr are pipes (a shell's \$(...), a pipeline) gets all of the output, as written; a reader that goes away does not hang the run" {
	sstart
	local out sum
	# 3 MiB on stdout (--max-output 4M) and a line per 1000 on stderr, through pipes read by others
	out=$("$SBX_OCI" python --connect "$SERVE_SOCKET" --max-output 4M -c 'import sys
for i in range(300000):
    sys.stdout.write("%09d\n" % i)
    if i % 1000 == 0:
        print(i, file=sys.stderr, flush=True)' 2> >(wc -l >"$BATS_TEST_TMPDIR/err.lines") </dev/null | sha256sum)
	sum=$(python3 -c 'import sys, hashlib; print(hashlib.sha256("".join("%09d\n" % i for i in range(300000)).encode()).hexdigest())')
	[ "${out%% *}" = "$sum" ]
	for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/err.lines" ] && break; sleep 0.1; done
	[ "$(cat "$BATS_TEST_TMPDIR/err.lines")" = 300 ]
	# the status comes through a pipeline too
	run bash -c '"$0" python --connect "$1" -c "print(1); raise SystemExit(3)" </dev/null | cat; exit ${PIPESTATUS[0]}' "$SBX_OCI" "$SERVE_SOCKET"
	[ "$status" = 3 ]
	[ "$output" = 1 ]
	# head reads a line and goes: the run still ends (its output past that is dropped)
	run timeout 60 bash -c '"$0" python --connect "$1" -c "for i in range(10**6): print(i)" </dev/null | head -1' "$SBX_OCI" "$SERVE_SOCKET"
	[ "$status" = 0 ]
	[ "${lines[0]}" = 0 ]
}

@test "serve: a run's streams are python3's: seekable() and tell() as its stdin, stdout and stderr are (a file, a pipe), for a standby's run and one with a sandbox of its own" {
	sstart
	local code='import io, sys
for s in (sys.stdin, sys.stdout, sys.stderr):
    try:
        s.tell()
        t = "tell"
    except io.UnsupportedOperation:
        t = "unsupported"
    except OSError as e:
        t = "oserror"
    print(s.seekable(), t, file=sys.stderr)'
	local bare
	# python3 itself with stdin a file and stdout and stderr pipes: a run's stdout and
	# stderr are always pipes (the worker's, which caps the output)
	bare=$(python3 -c "$code" </etc/hostname 2>&1 | cat)
	PY_STDIN=/etc/hostname spy -c "$code"
	expect_status 0
	[ "$stderr" = "$bare" ] || { echo "standby's run: $stderr; python3: $bare" >&2; return 1; }
	PY_STDIN=/etc/hostname cpy -c "$code"
	expect_status 0
	[ "$stderr" = "$bare" ] || { echo "own sandbox: $stderr; python3: $bare" >&2; return 1; }
	# a pipe for stdin too
	bare=$(echo x | python3 -c "$code" 2>&1 | cat)
	[ "$(echo x | "$SBX_OCI" python --connect "$SERVE_SOCKET" -c "$code" 2>&1 | cat)" = "$bare" ]
}

@test "serve: a client with options of its own, or another TMPDIR, gets a sandbox made for it; the standby it reached is replaced" {
	sstart
	local tmp=$BATS_TEST_TMPDIR/tmp
	mkdir "$tmp"
	until_count 2 standby_ids
	spy --memory 100M --network none -c 'import socket
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1)
except OSError as e:
    print(type(e).__name__)'
	expect_status 0
	result_is '.limits.memory_bytes == 104857600 and .network == "none"'
	TMPDIR=$tmp spy -c 'print("ok")'
	expect_status 0
	expect_stdout ok
	until_count 0 ls -A "$tmp"
	no_containers
	no_sandbox_processes
}

@test "serve: --standby 0 keeps no sandbox while idle, --standby 3 keeps three; a standby whose fork dies is replaced" {
	sstart --standby 0
	no_containers
	no_sandbox_processes
	spy -c 'print("cold")'
	expect_status 0
	expect_stdout cold
	serve_stop
	STANDBYS=0
	no_containers
	sstart --standby 3
	until_count 3 standby_ids
	no_sandbox_processes
	# the joined fork of one dies while it waits: the server makes another
	local f
	f=$(ps -o pid=,args= -u "$HOST_ID" | grep sbx-oci-zygote | head -1 | awk '{ print $1 }')
	[ -n "$f" ]
	kill -KILL "$f"
	until_ok 5 grep -q "a standby failed" "$SERVE_LOG"
	no_containers
	no_sandbox_processes
	spy -c 'print("served")'
	expect_status 0
	expect_stdout served
}

@test "serve: the warm interpreter killed: the standbys it spawned end with it, a run in progress completes; clients are refused while it cannot be started again" {
	# a standby's process is the warm interpreter's own child (one copy of it) and dies
	# with it; a run with a sandbox of its own is a child of a copy, which outlives it
	local wrap=$BATS_TEST_TMPDIR/python3 ok=$BATS_TEST_TMPDIR/ok z
	printf '#!/bin/sh\n[ -e %s ] || exit 3\nexec /usr/bin/python3 "$@"\n' "$ok" >"$wrap"
	chmod +x "$wrap"
	touch "$ok"
	sstart --python "$wrap" --standby 2
	until_count 2 standby_ids
	no_sandbox_processes
	start_long_run 3
	rm "$ok"
	z=$(zygote_pid)
	kill -KILL "$z"
	until_ok 5 grep -q "the warm interpreter ended" "$SERVE_LOG"
	wait_bg "$BG_PID"
	[ "$bg_status" -eq 0 ] || { echo "the run in progress ended with $bg_status" >&2; cat "$BATS_TEST_TMPDIR/long.err" >&2; return 1; }
	grep -qx finished "$BATS_TEST_TMPDIR/long.out"
	# the standbys are gone, and none can be made
	STANDBYS=0
	no_containers
	no_sandbox_processes
	spy -c 'print("none")'
	expect_status 125
	has "$stderr" "the warm interpreter could not be started"
	touch "$ok"
	spy -c 'print("again")'
	expect_status 0
	expect_stdout again
}

@test "serve: nothing of a run is in the memory later runs are copied from: its code, --env and workdir path, which its container config holds, are not in a later run's memory" {
	# A run's process is forked into its sandbox by a process that reads the container's
	# config (the program's arguments, --env values, host paths); a later run, a copy
	# of the warm interpreter, can read its own memory (/proc/self/mem). The canary is
	# given as two halves and never put together in the scanning runs. (When the warm
	# interpreter spawned every run itself, this found the canary in [heap].)
	sstart --standby 1
	local a b scan
	a=sbxcanary$RANDOM$RANDOM
	b=x$RANDOM$RANDOM
	mkdir "$BATS_TEST_TMPDIR/w-$a$b"
	cpy --env "CANARY_ENV=e-$a$b" --workdir "$BATS_TEST_TMPDIR/w-$a$b" -c "s = 'c-$a$b'; print(len(s))"
	expect_status 0
	scan='import os, sys
a, b = sys.argv[1].encode(), sys.argv[2].encode()
mem = os.open("/proc/self/mem", os.O_RDONLY)
hits = []
for line in open("/proc/self/maps"):
    f = line.split()
    if "r" not in f[1] or (len(f) > 5 and f[5] in ("[vvar]", "[vsyscall]")):
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    try:
        data = os.pread(mem, hi - lo, lo)
    except OSError:
        continue
    i = data.find(a)
    while i >= 0:
        if data[i + len(a):i + len(a) + len(b)] == b:
            hits.append(f[5] if len(f) > 5 else "anonymous")
        i = data.find(a, i + 1)
print(len(hits), hits[:5])'
	# two later runs, each with a sandbox of its own (its config read as the first one's was)
	cpy -c "$scan" "$a" "$b"
	expect_status 0
	expect_stdout "0 []"
	cpy -c "$scan" "$a" "$b"
	expect_stdout "0 []"
	# and one that takes the standby made meanwhile
	spy -c "$scan" "$a" "$b"
	expect_stdout "0 []"
}

@test "serve: a standby's process is the warm interpreter's own child in its sandbox (one copy); a run with a sandbox of its own is spawned by a copy that waits outside" {
	sstart --standby 1
	until_count 1 standby_ids
	local z zns kids k copy f
	z=$(zygote_pid)
	zns=$(readlink "/proc/$z/ns/pid")
	kids=$(ps -o pid= --ppid "$z")
	[ "$(grep -c . <<<"$kids")" -eq 1 ] || { echo "the warm interpreter's children: $kids" >&2; return 1; }
	k=$(echo $kids)
	[ "$(readlink "/proc/$k/ns/pid")" != "$zns" ] || { echo "the standby's process $k is in the host's pid namespace" >&2; return 1; }
	[ "$(ps -o uid= -p "$k" | tr -d ' ')" = "$HOST_ID" ] || { echo "$k is not the sandbox user's" >&2; return 1; }
	# --id: a sandbox of its own, whose config holds this client's data
	start_long_run
	for copy in $(ps -o pid= --ppid "$z"); do
		[ "$copy" = "$k" ] || break
	done
	[ "$copy" != "$k" ] || { echo "no copy beside the standby" >&2; return 1; }
	[ "$(readlink "/proc/$copy/ns/pid")" = "$zns" ] || { echo "the copy $copy is not outside" >&2; return 1; }
	f=$(ps -o pid= --ppid "$copy" | tr -d ' ')
	[ -n "$f" ] && [ "$(readlink "/proc/$f/ns/pid")" != "$zns" ] || { echo "the copy's child '$f' is not in the sandbox" >&2; return 1; }
	[ "$(ps -o uid= -p "$f" | tr -d ' ')" = "$HOST_ID" ]
	kill -TERM "$BG_PID"
	wait_bg "$BG_PID"
	no_containers
}

@test "serve: the warm interpreter keeps no fd of a run: after 30 runs and 5 session cells, as many as before" {
	sstart --standby 1
	local z before after
	z=$(zygote_pid)
	until_count 1 standby_ids
	no_sandbox_processes
	before=$(ls "/proc/$z/fd" | wc -l)
	for _ in $(seq 30); do
		spy -c 'print(1)'
		expect_status 0
	done
	for _ in $(seq 5); do
		py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session s -c 'x = 1'
		expect_status 0
	done
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session s --end-session
	no_containers
	no_sandbox_processes
	after=$(ls "/proc/$z/fd" | wc -l)
	[ "$after" -eq "$before" ] || { echo "fds before: $before, after: $after" >&2; ls -l "/proc/$z/fd" >&2; return 1; }
}

@test "serve: a warm interpreter with threads (pandas' numexpr pool): runs and sessions fork from it and use numexpr and numpy" {
	# numexpr's pool has a thread per CPU the sandbox gets (at most 4): none with one
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs for numexpr's threads"
	sstart --preload numpy,pandas --standby 1
	local z
	z=$(zygote_pid)
	# the case itself: threads in the process each run is copied from
	[ "$(ls "/proc/$z/task" | wc -l)" -gt 1 ] || { echo "the warm interpreter has one thread" >&2; return 1; }
	for _ in 1 2 3; do
		spy -c 'import numexpr, numpy as np; a = np.arange(1e6); print(int(numexpr.evaluate("a * 2").sum()), int((a @ a) > 0))'
		expect_status 0
		expect_stdout "999999000000 1"
	done
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session t -c 'import numexpr, numpy as np; a = np.ones(1000)'
	expect_status 0
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session t -c 'print(int(numexpr.evaluate("a + 1").sum()))'
	expect_status 0
	expect_stdout 2000
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --session t --end-session
}

# ---------------------------------------------------------------- limits

@test "serve: per-run limits: --timeout kills (137, timed_out), --memory OOM-kills (137, oom_killed), --max-output truncates" {
	sstart
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
	result_is '.limits.memory_bytes == 2147483648 and .limits.timeout_s == 300 and .timed_out == false'
	no_sandbox_processes
}

@test "serve: the server's options are every run's defaults (--timeout 2, --memory 128M); a client's own override them" {
	local t0 t1
	sstart --timeout 2 --memory 128M
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
	sstart --timeout 30
	t0=$(now_ms)
	cpy --timeout 1 -c 'while True: pass'
	t1=$(now_ms)
	expect_status 137
	result_is '.timed_out == true and .limits.timeout_s == 1'
	[ $((t1 - t0)) -lt 10000 ] || { echo "took $((t1 - t0)) ms" >&2; return 1; }
}

# ---------------------------------------------------------------- preload and isolation

@test "serve: --preload: the modules are in sys.modules when the program starts; others are imported as usual" {
	sstart --preload decimal,json
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
	sstart
	cpy -c 'import sys; print("decimal" in sys.modules)'
	expect_status 0
	expect_stdout False
	# a module that does not import: the server does not start
	bad_serve --socket "$BATS_TEST_TMPDIR/bad.sock" --preload sbx_no_such_module
	[ "$status" -ne 0 ]
	has "$stderr" sbx_no_such_module
	[ ! -e "$BATS_TEST_TMPDIR/bad.sock" ]
}

@test "serve: nothing of one run is seen by the next: files, environment, module state, random state, processes" {
	sstart --preload decimal,random
	cpy -c '
import decimal, os, random, subprocess, sys
open("/tmp/x", "w").write("run 1")
open("/work/x", "w").write("run 1")
open("/dev/shm/x", "w").write("run 1")
os.environ["LEAK"] = "1"
decimal.LEAKED = 1
decimal.getcontext().prec = 5
sys.modules["leak_mod"] = sys
sys.path.insert(0, "/leak")
random.seed(1)
p = subprocess.Popen(["sleep", "300"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    import time
    time.sleep(300)
    os._exit(0)
print("run 1 done", p.poll() is None, random.random())'
	expect_status 0
	[[ "$stdout" == "run 1 done True 0.134364244112"* ]] || { echo "$stdout" >&2; return 1; }
	cpy -c '
import decimal, os, random, sys
print([p for p in ("/tmp/x", "/work/x", "/dev/shm/x") if os.path.exists(p)])
print("LEAK" in os.environ, hasattr(decimal, "LEAKED"), decimal.getcontext().prec, "leak_mod" in sys.modules, "/leak" in sys.path)
print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print(random.random())'
	expect_status 0
	[ "$(sed -n 1,3p <<<"$stdout")" = "[]
False False 28 False False
[1, 2]" ] || { echo "$stdout" >&2; return 1; }
	local r2
	r2=$(sed -n 4p <<<"$stdout")
	# random's state is not run 1's (seeded with 1), nor the same in every run
	[[ "$r2" != 0.134364244112* ]]
	cpy -c 'import random; print(random.random())'
	expect_status 0
	[ "$stdout" != "$r2" ]
	no_sandbox_processes
	no_containers
}

# ---------------------------------------------------------------- refusals

@test "serve: --rootfs, --no-subprocess and another --python are refused through --connect: 125, one line, a result with error" {
	sstart
	local arg
	for arg in "--rootfs /" "--no-subprocess" "--python /usr/bin/python3.11-other"; do
		# shellcheck disable=SC2086
		cpy $arg -c 'print("ran")'
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
	# and a usage error is one-shot's: exit 2
	cpy --network bogus -c 'print("ran")'
	expect_status 2
	assert_one_line_error "--network"
}

@test "serve: a client the server cannot take (unreachable, busy) still writes its --result, with error set" {
	sstart --max-runs 1 --queue 0
	local r=$BATS_TEST_TMPDIR/refused.json
	py_exec "$SBX_OCI" python --connect "$BATS_TEST_TMPDIR/nobody.sock" --result "$r" -c 'print("ran")'
	expect_status 125
	jq -e '(.error | type == "string" and length > 0) and .exit_code == null' "$r"
	start_long_run 3
	rm -f "$r"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --result "$r" -c 'print("ran")'
	expect_status 125
	jq -e '(.error | test("busy")) and .exit_code == null' "$r"
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" --result - -c 'print("ran")'
	expect_status 125
	jq -e '(.error | test("busy")) and .exit_code == null' <<<"$stdout"
	wait_bg "$BG_PID"
}

@test "serve: another uid cannot run anything: the client exits 125 with one line, also when the socket's mode would let it in" {
	sstart
	id -u "$RL_USER" >/dev/null 2>&1 || useradd -M -s /bin/sh "$RL_USER" 2>/dev/null || id -u "$RL_USER" >/dev/null
	local sbx=$SBX_OCI d
	if ! runuser -u "$RL_USER" -- test -x "$sbx"; then
		sbx=$BATS_TEST_TMPDIR/sbx-oci-copy
		cp "$SBX_OCI" "$sbx"
		chmod 755 "$sbx"
	fi
	# as made: 0600 and root's (connect() fails, or the server refuses)
	py_exec runuser -u "$RL_USER" -- env -C / "$sbx" python --connect "$SERVE_SOCKET" -c 'print("ran")'
	expect_status 125
	assert_one_line_error "$SERVE_SOCKET"
	[ -z "$stdout" ]
	# when the file's mode lets it connect, the server checks the peer's uid
	d=$SERVE_SOCKET
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

@test "serve: beyond --max-runs 1 and --queue 0 a connection is refused as busy (125); the running one completes" {
	sstart --max-runs 1 --queue 0
	start_long_run 3
	cpy -c 'print("second")'
	expect_status 125
	assert_one_line_error busy
	[ -z "$stdout" ]
	has "$(cat "$SERVE_LOG")" busy
	# the first is not disturbed
	wait_bg "$BG_PID"
	[ "$bg_status" -eq 0 ] || { echo "the first run: $bg_status $(cat "$BATS_TEST_TMPDIR/long.err")" >&2; return 1; }
	[ "$(cat "$BATS_TEST_TMPDIR/long.out")" = finished ]
	# and the slot is free again
	cpy -c 'print("third")'
	expect_status 0
	expect_stdout third
}

@test "serve: with --max-runs 1 and --queue 0, clients one after another are never busy: a run that has replied gives its place while it is torn down" {
	sstart --max-runs 1 --queue 0
	local i
	for i in $(seq 30); do
		spy -c "print($i)"
		[ "$status" = 0 ] || { echo "client $i: $status: $stderr" >&2; return 1; }
		[ "$stdout" = "$i" ]
	done
	refute grep -q busy "$SERVE_LOG"
	# the teardowns all ended: no sandbox is left but the standbys
	until_count "$STANDBYS" standby_ids
}

@test "serve: a connection within --queue waits for a run to end, then runs; one that hangs up while waiting never runs" {
	sstart --max-runs 1 --queue 2
	local w=$BATS_TEST_TMPDIR/w2 wq=$BATS_TEST_TMPDIR/wq t0 t1
	mkdir "$w" "$wq"
	bg_cpy first --workdir "$w" -c 'import time; open("/work/started", "w").close(); time.sleep(2); print("first done")'
	wait_for_file "$w/started"
	# a client that waits, then goes away
	bg_cpy gone --workdir "$wq" -c 'open("/work/ran", "w").close(); print("gone ran")'
	sleep 0.3
	kill -KILL "$BG_PID"
	wait "$BG_PID" || true
	t0=$(now_ms)
	cpy -c 'print("second")'
	t1=$(now_ms)
	expect_status 0
	expect_stdout second
	# it waited for the first
	[ $((t1 - t0)) -ge 1000 ] || { echo "the queued run took only $((t1 - t0)) ms" >&2; return 1; }
	wait_bg "${BG_PIDS[0]}"
	[ "$bg_status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/first.out")" = "first done" ]
	# the slot is free again
	cpy -c 'print("third")'
	expect_status 0
	expect_stdout third
	# the program of the client that went away did not run
	[ ! -e "$wq/ran" ]
	no_containers
}

@test "serve: 8 clients at once (--max-runs 2, the rest queued): each gets its own run, output, workdir and result" {
	sstart --max-runs 2
	local i w=$BATS_TEST_TMPDIR/par pids=()
	for i in $(seq 8); do
		mkdir -p "$w/$i"
		"$SBX_OCI" python --connect "$SERVE_SOCKET" --id "$(new_id)-$i" --workdir "$w/$i" --result "$w/$i.json" -c '
import os, sys
n = int(sys.argv[1])
open("/work/mine", "w").write("run %d" % n)
print("run", n, n * n, sorted(os.listdir("/work")), sorted(os.listdir("/tmp")))
open("/tmp/t%d" % n, "w").close()
' "$i" </dev/null >"$w/$i.out" 2>"$w/$i.err" 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for i in $(seq 8); do
		wait_bg "${pids[$((i - 1))]}" 30
		[ "$bg_status" -eq 0 ] || { echo "run $i: $bg_status $(cat "$w/$i.err")" >&2; return 1; }
	done
	for i in $(seq 8); do
		[ "$(cat "$w/$i.out")" = "run $i $((i * i)) ['mine'] []" ] || { echo "run $i: $(cat "$w/$i.out") $(cat "$w/$i.err")" >&2; return 1; }
		[ "$(cat "$w/$i/mine")" = "run $i" ]
		jq -e '.exit_code == 0 and .files == [{"path": "mine", "change": "created", "type": "file", "size": ('"${#i}"' + 4)}]' "$w/$i.json" >/dev/null
	done
	no_sandbox_processes
	no_containers
}

# ---------------------------------------------------------------- ends

@test "serve: a client killed mid-run ends its run: the program is killed and its container deleted" {
	sstart
	start_long_run
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

@test "serve: SIGTERM during a run: the run ends, its container is deleted, a waiting client is let go, the socket removed, exit 0" {
	sstart --max-runs 1 --queue 4
	local pid=$SERVE_PID rc=0 i kids queued
	start_long_run
	# a second client, which waits in the queue behind the run
	bg_cpy queued -c 'print("queued ran")'
	queued=$BG_PID
	sleep 0.5
	kill -0 "$queued"
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
	STANDBYS=0
	has "$(cat "$SERVE_LOG")" "signal 15: "
	[ ! -e "$SERVE_SOCKET" ]
	wait_bg "${BG_PIDS[0]}" 5
	[ "$bg_status" -ne 0 ] || { echo "the client of the ended run exited 0" >&2; return 1; }
	[ ! -s "$BATS_TEST_TMPDIR/long.out" ]
	wait_bg "$queued" 5
	[ "$bg_status" -eq 125 ] || { echo "the waiting client exited $bg_status: $(cat "$BATS_TEST_TMPDIR/queued.err")" >&2; return 1; }
	[ ! -s "$BATS_TEST_TMPDIR/queued.out" ]
	until_ok 5 no_sandbox_processes
	# shellcheck disable=SC2086
	until_ok 5 none_alive $kids
	no_containers
}

@test "serve: SIGINT and SIGHUP stop an idle server as SIGTERM does: exit 0, the socket removed, the warm interpreter ended" {
	local sig num pid z i rc
	for sig in INT HUP; do
		sstart
		pid=$SERVE_PID z=$(zygote_pid) num=$(kill -l "$sig")
		[ -n "$z" ]
		kill -"$sig" "$pid"
		for i in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		refute kill -0 "$pid" 2>/dev/null
		SERVE_PID=
		rc=0
		wait "$pid" || rc=$?
		[ "$rc" -eq 0 ] || { echo "SIG$sig: serve exited $rc" >&2; cat "$SERVE_LOG" >&2; return 1; }
		has "$(cat "$SERVE_LOG")" "signal $num: "
		[ ! -e "$SERVE_SOCKET" ]
		until_ok 5 none_alive "$z"
	done
}

@test "serve: the warm interpreter killed: the server says so, starts another (with the preload), later runs work" {
	sstart --preload decimal
	local z new
	z=$(zygote_pid)
	[ -n "$z" ] || { echo "no warm interpreter under $SERVE_PID" >&2; ps -o pid=,args= --ppid "$SERVE_PID" | cut -c1-120 >&2; return 1; }
	kill -KILL "$z"
	until_ok 5 grep -q "the warm interpreter ended" "$SERVE_LOG"
	for _ in $(seq 30); do
		cpy -c 'import sys; print("decimal" in sys.modules)'
		[ "$status" -eq 0 ] && break
		sleep 0.1
	done
	expect_status 0
	expect_stdout True
	new=$(zygote_pid)
	[ -n "$new" ] && [ "$new" != "$z" ]
	kill -0 "$SERVE_PID"
	no_sandbox_processes
}

@test "serve: a warm interpreter that cannot be started again: a client is refused at once (125, why), not left waiting" {
	# the interpreter through a wrapper that works while $ok exists
	local wrap=$BATS_TEST_TMPDIR/python3 ok=$BATS_TEST_TMPDIR/ok z
	printf '#!/bin/sh\n[ -e %s ] || exit 3\nexec /usr/bin/python3 "$@"\n' "$ok" >"$wrap"
	chmod +x "$wrap"
	touch "$ok"
	# no standbys: one made before the interpreter died would serve the client
	sstart --python "$wrap" --standby 0
	cpy -c 'print("before")'
	expect_status 0
	expect_stdout before
	rm "$ok"
	z=$(zygote_pid)
	kill -KILL "$z"
	until_ok 5 grep -q "the warm interpreter ended" "$SERVE_LOG"
	SECONDS=0
	py_exec "$SBX_OCI" python --connect "$SERVE_SOCKET" -c 'print("after")'
	expect_status 125
	has "$stderr" "the warm interpreter could not be started"
	[ "$SECONDS" -lt 10 ]
	# and once it can, the next client is served again
	touch "$ok"
	cpy -c 'print("again")'
	expect_status 0
	expect_stdout again
}

@test "serve: the server killed with SIGKILL mid-run: its processes and the sandbox go, the next server replaces the socket and sweeps what is left" {
	sstart
	local pid=$SERVE_PID kids
	start_long_run
	kids=$(descendants "$pid")
	[ "$(wc -w <<<"$kids")" -ge 3 ] || { echo "the server's processes: $kids" >&2; return 1; }
	# the run's worker is killed with the server, before it can end its container:
	# that container is an orphan, left for the next server
	local id init worker
	id=$(containers | grep -v '^py-')
	init=$("$SBX_OCI" --root "$SBX_ROOT" state "$id" | jq -r .pid)
	worker=$(ps -o ppid= -p "$init" | tr -d ' ')
	kill -KILL "$pid" "$worker"
	wait "$pid" 2>/dev/null || true
	SERVE_PID=
	STANDBYS=0
	# shellcheck disable=SC2086
	until_ok 5 none_alive $kids
	until_ok 5 no_sandbox_processes
	wait_bg "$BG_PID" 5
	[ "$bg_status" -ne 0 ] || { echo "the client of the killed server exited 0" >&2; return 1; }
	[ ! -s "$BATS_TEST_TMPDIR/long.out" ]
	containers | grep -qx "$id" || { echo "the killed worker's container $id is not left" >&2; return 1; }
	# the socket the dead server left is replaced, and the new server sweeps the orphan
	[ -S "$SERVE_SOCKET" ]
	sstart
	container_gone "$id" || { echo "left by the killed server, not swept: $id" >&2; return 1; }
	cpy -c 'print("new server")'
	expect_status 0
	expect_stdout "new server"
	no_containers
}

@test "serve: a worker killed with SIGKILL mid-run: its client fails, the server sweeps what it left at once, the next run is served" {
	sstart --standby 0
	local id init worker
	start_long_run
	id=$(containers)
	[ "$(wc -w <<<"$id")" -eq 1 ]
	init=$("$SBX_OCI" --root "$SBX_ROOT" state "$id" | jq -r .pid)
	worker=$(ps -o ppid= -p "$init" | tr -d ' ')
	[ "$(ps -o ppid= -p "$worker" | tr -d ' ')" = "$SERVE_PID" ] || { echo "the run's worker: $worker" >&2; return 1; }
	kill -KILL "$worker"
	wait_bg "$BG_PID" 5
	[ "$bg_status" -ne 0 ]
	# no run comes meanwhile: the server itself sweeps (runs through it no longer do)
	until_ok 5 container_gone "$id"
	no_sandbox_processes
	kill -0 "$SERVE_PID"
	cpy -c 'print("next")'
	expect_status 0
	expect_stdout next
	no_containers
}

@test "serve: --recycle 2: a new warm interpreter every 2 runs, the old one ends" {
	sstart --recycle 2
	local z1 z2 i
	z1=$(zygote_pid)
	for i in 1 2 3; do
		cpy -c 'print("run")'
		expect_status 0
		expect_stdout run
	done
	z2=$(zygote_pid)
	[ -n "$z2" ] && [ "$z2" != "$z1" ] || { echo "warm interpreter $z1, then $z2" >&2; return 1; }
	until_ok 5 none_alive "$z1"
	# each run, each standby made is a fork of it: 2 standbys, then 3 runs that each
	# fork (--id: a sandbox of its own) and each a standby to replace the one it took
	[ "$(grep -c "new warm interpreter" "$SERVE_LOG")" -ge 1 ]
}

@test "serve: --recycle 2 during a long run: the old warm interpreter stays until its run ends (the run is its child), and the run completes" {
	sstart --recycle 2 --standby 0
	local z1
	z1=$(zygote_pid)
	start_long_run 3
	for _ in 1 2 3; do
		spy -c 'print("run")'
		expect_status 0
	done
	[ "$(zygote_pid)" != "$z1" ] || { echo "no new warm interpreter" >&2; return 1; }
	kill -0 "$z1"
	wait_bg "$BG_PID"
	[ "$bg_status" -eq 0 ]
	grep -qx finished "$BATS_TEST_TMPDIR/long.out"
	until_ok 5 none_alive "$z1"
}

# ---------------------------------------------------------------- bad input

@test "serve: bad command lines: no --socket, an unknown option, --rootfs or a program is exit 2; a path that is a file is kept" {
	local sock=$BATS_TEST_TMPDIR/s.sock
	bad_serve
	expect_status 2
	assert_one_line_error "--socket"
	bad_serve --socket "$sock" --bogus
	expect_status 2
	assert_one_line_error "--bogus"
	bad_serve --socket "$sock" -c 'print(1)'
	expect_status 2
	assert_one_line_error "-c"
	bad_serve --socket "$sock" prog.py
	expect_status 2
	assert_one_line_error "prog.py"
	bad_serve --socket "$sock" --max-runs 0
	expect_status 2
	assert_one_line_error "--max-runs"
	bad_serve --socket "$sock" --rootfs /
	expect_status 2
	assert_one_line_error "--rootfs"
	[ ! -e "$sock" ]
	# a regular file where the socket would go: an error naming it, the file intact
	local f=$BATS_TEST_TMPDIR/not-a-socket
	echo precious >"$f"
	bad_serve --socket "$f"
	expect_status 1
	assert_one_line_error "$f"
	[ -f "$f" ] && [ "$(cat "$f")" = precious ]
}

@test "serve: a second server on a socket in use is refused and the first keeps serving" {
	sstart
	bad_serve --socket "$SERVE_SOCKET"
	expect_status 1
	assert_one_line_error "$SERVE_SOCKET"
	[ -S "$SERVE_SOCKET" ]
	cpy -c 'print("still")'
	expect_status 0
	expect_stdout still
}

@test "serve: a server option that is not valid (--max-output lots) is refused when the server starts, not by every run" {
	local sock=$BATS_TEST_TMPDIR/s.sock
	bad_serve --socket "$sock" --max-output lots
	expect_status 2
	assert_one_line_error "--max-output"
	[ ! -e "$sock" ]
	# as the other options are
	bad_serve --socket "$sock" --memory lots
	expect_status 2
	assert_one_line_error "--memory"
}

# ---------------------------------------------------------------- run by a user

# as $RL_USER, against the user's server (runuser: its environment is the user's)
rl_cpy() {
	py_exec runuser -u "$RL_USER" -- env -C / HOME="$RL_DIR" XDG_RUNTIME_DIR="$RL_DIR/run" \
		"$RL_SBX" python --connect "$RL_DIR/run/s.sock" "$@"
}

@test "serve run by a user: standbys, runs of their own sandbox, a session and a --workdir all work, each process in its sandbox's pid namespace; nothing is left once it stops" {
	rootless_setup
	# the warm interpreter loads the engine from beside the binary
	[ "$RL_SBX" = "$SBX_OCI" ] || install -m 755 "$(dirname "$SBX_OCI")/libsbx-warm.so" "$RL_DIR/"
	SERVE_LOG=$RL_DIR/serve.log
	# the server itself as the user (setpriv execs: its pid is the server's)
	setpriv --reuid="$RL_UID" --regid="$(id -g "$RL_USER")" --clear-groups \
		env -C / HOME="$RL_DIR" XDG_RUNTIME_DIR="$RL_DIR/run" \
		"$RL_SBX" --root "$SBX_ROOT" serve --allow-degraded --socket "$RL_DIR/run/s.sock" >"$SERVE_LOG" 2>&1 3>&- &
	SERVE_PID=$!
	until_ok 30 grep -q "listening on" "$SERVE_LOG"
	# the standbys' runs (one more than are made ahead), then one of a sandbox of its
	# own (--env: not a standby's), each the second process of its pid namespace,
	# where the server's pid is nobody's
	local code="import os; print(os.getpid(), os.getuid() != 0); os.kill($SERVE_PID, 0)" i
	for i in 1 2 3; do
		rl_cpy -c "$code"
		expect_status 1
		expect_stdout "2 True"
		has "$stderr" ProcessLookupError
	done
	rl_cpy --env A=b -c "import os; print(os.getpid(), os.environ['A'])"
	expect_status 0
	expect_stdout "2 b"
	rl_cpy --session s1 -c 'x = 41'
	expect_status 0
	rl_cpy --session s1 -c 'print(x + 1)'
	expect_status 0
	expect_stdout 42
	rl_cpy --session s1 --end-session
	expect_status 0
	rl_cpy --workdir "$RL_DIR/work" -c 'open("/work/out.txt", "w").write("x")'
	expect_status 0
	[ "$(stat -c %u "$RL_DIR/work/out.txt")" = "$RL_UID" ]
	lacks "$(cat "$SERVE_LOG")" "standby failed"
	serve_stop
	expect_no_processes_of "$RL_UID"
	[ -z "$(ls -A "$SBX_ROOT" | grep -v '^@')" ]
}
