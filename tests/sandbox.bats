#!/usr/bin/env bats
# `sbx-oci python`, the one-shot Python sandbox, driven as a user would: each test runs
# a real attack or workload as a Python snippet and checks the exit status and the
# --result JSON. The same representative attacks are then run again as an unprivileged
# user (rootless: --allow-degraded, per-process limits where cgroups are not ours).
# Uses Debian's /usr/bin/python3 (with numpy and pandas).

load helpers
load helpers/sandbox

setup() {
	requires root userns python-stack
	setup_state
	SERVE_PID=
	LISTEN_PID=
	FAKE_HOME=
	RL_DIR=
}

teardown() {
	local rc=0
	serve_stop || rc=1
	[ -z "$LISTEN_PID" ] || { kill "$LISTEN_PID" 2>/dev/null || true; wait "$LISTEN_PID" 2>/dev/null || true; }
	helpers_teardown || rc=1
	[ -z "$FAKE_HOME" ] || rm -rf "$FAKE_HOME"
	[ -z "$RL_DIR" ] || rm -rf "$RL_DIR"
	return $rc
}

# A TCP listener on the host's 127.0.0.1 (a free port, $LISTEN_PORT) and on the abstract
# unix socket "@sbx-test-PORT" of the host's network namespace: it answers "pong" and
# appends what each client sent to $LISTEN_LOG. Killed by its PID in teardown.
start_listener() {
	local portfile=$BATS_TEST_TMPDIR/listener.port
	LISTEN_LOG=$BATS_TEST_TMPDIR/listener.log
	: >"$LISTEN_LOG"
	"$PYTHON" -c '
import os, select, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
port = s.getsockname()[1]
u = socket.socket(socket.AF_UNIX)
u.bind(b"\0sbx-test-%d" % port)
u.listen(16)
with open(sys.argv[1] + ".new", "w") as f:
    f.write(str(port))
os.rename(sys.argv[1] + ".new", sys.argv[1])
while True:
    for ready in select.select([s, u], [], [])[0]:
        c, _ = ready.accept()
        c.settimeout(5)
        try:
            data = c.recv(100)
            with open(sys.argv[2], "ab") as f:
                f.write(data + b"\n")
            c.sendall(b"pong")
        except OSError:
            pass
        c.close()
' "$portfile" "$LISTEN_LOG" </dev/null >/dev/null 2>&1 3>&- &
	LISTEN_PID=$!
	for _ in $(seq 200); do
		[ -s "$portfile" ] && break
		sleep 0.02
	done
	LISTEN_PORT=$(cat "$portfile")
	# the host itself reaches both
	"$PYTHON" -c '
import socket, sys
port = int(sys.argv[1])
for family, addr in ((socket.AF_INET, ("127.0.0.1", port)), (socket.AF_UNIX, b"\0sbx-test-%d" % port)):
    c = socket.socket(family)
    c.settimeout(5)
    c.connect(addr)
    c.sendall(b"from the host")
    assert c.recv(4) == b"pong"
' "$LISTEN_PORT"
	[ "$(grep -cx "from the host" "$LISTEN_LOG")" -eq 2 ]
}

# The network attack: prints "inet ...", "inet6 ...", "unix ..." (a socketpair),
# "abstract ..." (the host's abstract unix socket), "outside ..." and "resolv ..." lines.
# argv[1]: the host port, argv[2]: a tag sent to it.
NET_ATTACK='
import errno, socket, sys
port, tag = int(sys.argv[1]), sys.argv[2].encode()
def attempt(family, addr):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
    except OSError as e:
        return "socket " + errno.errorcode[e.errno]
    s.settimeout(5)
    try:
        s.connect(addr)
        s.sendall(tag)
        return "connected " + s.recv(4).decode()
    except OSError as e:
        return "connect " + errno.errorcode.get(e.errno, str(e))
print("inet", attempt(socket.AF_INET, ("127.0.0.1", port)))
print("inet6", attempt(socket.AF_INET6, ("::1", port)))
a, b = socket.socketpair()
a.sendall(b"u")
print("unix", b.recv(1).decode())
print("abstract", attempt(socket.AF_UNIX, b"\0sbx-test-%d" % port))
print("outside", attempt(socket.AF_INET, ("192.0.2.1", 80)))
print("resolv", "empty" if open("/etc/resolv.conf").read().strip() == "" else "set")
'

# A program that writes everywhere it should not and where it may: "PATH ERRNO|written".
FS_ATTACK='
import errno, os
for path in ("/usr/sbx-escape", "/usr/bin/sbx-escape", "/etc/sbx-escape", "/etc/passwd", "/sbx-escape",
             "/bin/sbx-escape", "/sbx/sbx-escape", "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches",
             "/work/new.txt", "/tmp/t.txt", "/dev/shm/s.txt"):
    try:
        with open(path, "w") as f:
            f.write("x")
        print(path, "written")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
'

# The lines FS_ATTACK must print: the writes outside /work, /tmp and /dev/shm fail with
# EROFS or EACCES, those inside succeed.
expect_fs_attack_refused() {
	local path want
	for path in /usr/sbx-escape /usr/bin/sbx-escape /etc/sbx-escape /etc/passwd /sbx-escape /bin/sbx-escape \
		/sbx/sbx-escape /proc/sys/kernel/hostname /proc/sys/vm/drop_caches; do
		grep -Eqx "$path (EROFS|EACCES)" <<<"$stdout" || { echo "write to $path: $(grep "^$path " <<<"$stdout" || echo 'no output')" >&2; return 1; }
	done
	for path in /work/new.txt /tmp/t.txt /dev/shm/s.txt; do
		grep -qx "$path written" <<<"$stdout" || { echo "write to $path: $(grep "^$path " <<<"$stdout" || echo 'no output')" >&2; return 1; }
	done
	# and nothing reached the host
	for path in /usr/sbx-escape /usr/bin/sbx-escape /etc/sbx-escape /sbx-escape; do
		[ ! -e "$path" ] || { echo "$path exists on the host" >&2; return 1; }
	done
}

# A fork bomb: fork children that sleep until fork fails; "forked N ERRNO".
FORK_BOMB='
import errno, os, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(1000)
            os._exit(0)
        n += 1
    print("forked", n, "no error")
except OSError as e:
    print("forked", n, errno.errorcode[e.errno])
'

# Two daemons that try to outlive the run: a new-session subprocess and a
# double-forked, setsid'd child with its stdio closed.
DAEMONS='
import os, subprocess, time
p = subprocess.Popen(["sleep", "1000"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(0); os.close(1); os.close(2)
        os.write(w, b"x")
        time.sleep(1000)
    os._exit(0)
os.read(r, 1)  # the grandchild is up
print("daemons started", p.poll() is None)
'

NUMPY_PANDAS='
import numpy as np, pandas as pd
a = np.arange(6, dtype=np.float64).reshape(2, 3)
print((a @ a.T).astype(int).tolist())
df = pd.DataFrame({"k": ["a", "b", "a"], "v": [1, 2, 3]})
print(df.groupby("k")["v"].sum().to_dict())
'

# ---------------------------------------------------------------- root: environment

@test "sandbox: the caller's secrets are not in the environment; allow-listed variables and --env are passed" {
	export SECRET_API_KEY=sk-sbx-secret-1 AWS_SECRET_ACCESS_KEY=sbx-aws-secret-2 OPENAI_API_KEY=sbx-openai-secret-3
	export PYTHONPATH=/sbx-evil LD_LIBRARY_PATH=/sbx-evil
	export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb TZ=Europe/Paris PYTHONHASHSEED=123 PYTHONIOENCODING=utf-8 PYTHONUNBUFFERED=1
	py --env FOO=bar=baz --env EMPTY= -c '
import os, sys
# (the *_NUM_THREADS of numeric libraries depend on the CPUs: tested on their own)
print(sorted(kv for kv in os.environ.items() if not kv[0].endswith("_NUM_THREADS")))
blobs = [open("/proc/self/environ", "rb").read()]
# pid 1 is the sandbox init, a copy of the runtime that holds the environment of the
# caller in its memory: it must not be readable
try:
    open("/proc/1/environ", "rb").read()
    print("/proc/1/environ is readable")
except PermissionError:
    pass
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            blobs.append(open("/proc/%s/environ" % pid, "rb").read())
        except OSError:
            pass
for secret in (b"sk-sbx-secret-1", b"sbx-aws-secret-2", b"sbx-openai-secret-3", b"sbx-evil"):
    print(secret.decode(), "leaked" if any(secret in b for b in blobs) else "absent")
print("SECRET_API_KEY" in os.environ, os.getenv("AWS_SECRET_ACCESS_KEY"), os.getenv("OPENAI_API_KEY"))
print("pid", os.getpid())
'
	expect_status 0
	expect_stdout "[('EMPTY', ''), ('FOO', 'bar=baz'), ('HOME', '/work'), ('LANG', 'C.UTF-8'), ('LC_ALL', 'C.UTF-8'), ('MPLBACKEND', 'Agg'), ('PATH', '/usr/local/bin:/usr/bin:/bin'), ('PYTHONHASHSEED', '123'), ('PYTHONIOENCODING', 'utf-8'), ('PYTHONUNBUFFERED', '1'), ('TERM', 'dumb'), ('TMPDIR', '/tmp'), ('TZ', 'Europe/Paris')]
sk-sbx-secret-1 absent
sbx-aws-secret-2 absent
sbx-openai-secret-3 absent
sbx-evil absent
False None None
pid 2"
	# the secrets are not in the result either
	refute grep -q secret "$RESULT"
	# a variable once, whoever set it: the last --env of a name wins, over the sandbox's
	# own and the caller's (CPython's os.environ would take the first of two); as the
	# program and a child it runs see it (a warm run's /proc/self/environ is the warm
	# interpreter's start, not the run's)
	py --env X=1 --env X=2 --env HOME=/tmp --env TZ=UTC -c 'import os, subprocess
e = subprocess.run(["/usr/bin/env"], capture_output=True, check=True).stdout.split(b"\n")
print(os.environ["X"], os.environ["HOME"], os.environ["TZ"], [k for k in (b"X=", b"HOME=", b"TZ=") if sum(v.startswith(k) for v in e) != 1])'
	expect_status 0
	expect_stdout "2 /tmp UTC []"
}

@test "sandbox: LANG defaults to C.UTF-8; the sandbox user is 'sandbox' (uid 1000) with HOME and cwd /work" {
	unset LANG LC_ALL TERM TZ PYTHONHASHSEED PYTHONIOENCODING PYTHONUNBUFFERED
	py -c '
import grp, os, pwd
print(os.environ.get("LANG"), os.getuid(), os.getgid(), pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name)
print(os.getcwd(), os.path.expanduser("~"))
users = [l.split(":")[0] for l in open("/etc/passwd")]
print("host users visible", any(u not in ("root", "sandbox", "nobody") for u in users))
'
	expect_status 0
	expect_stdout "C.UTF-8 1000 1000 sandbox sandbox
/work /work
host users visible False"
}

@test "sandbox: service and protocol names resolve (/etc/services, /etc/protocols); tar -cf (creat), setreuid(-1,-1), posix_spawn resetids and sched_rr_get_interval work" {
	[ -f /etc/services ] || skip "the host has no /etc/services (netbase)"
	py -c '
import os, socket, subprocess
print(socket.getservbyname("http", "tcp"), socket.getprotobyname("tcp"))
print(socket.getaddrinfo("127.0.0.1", "http", proto=socket.IPPROTO_TCP)[0][4])
open("f.txt", "w").write("x")
print(subprocess.run(["tar", "-cf", "x.tar", "f.txt"]).returncode, os.path.getsize("x.tar") > 0)
os.setreuid(-1, -1); os.setregid(-1, -1); os.setresuid(-1, -1, -1)
pid = os.posix_spawn("/bin/true", ["true"], {}, resetids=True)
print(os.waitpid(pid, 0)[1])
print(os.sched_rr_get_interval(0) >= 0)
'
	expect_status 0
	expect_stdout "80 6
('127.0.0.1', 80)
0 True
0
True"
}

# ---------------------------------------------------------------- root: file system

@test "sandbox: /etc/shadow, /root and the caller's home are absent or unreadable" {
	FAKE_HOME=/home/sbxtest-$BATS_TEST_NUMBER-$$
	mkdir -p "$FAKE_HOME/.ssh"
	echo "PRIVATE KEY sbx-home-secret" >"$FAKE_HOME/.ssh/id_ed25519"
	export HOME=$FAKE_HOME
	py -c '
import errno, glob, os, sys
home = sys.argv[1]
for path in ("/etc/shadow", "/etc/gshadow", "/root/.bashrc", home + "/.ssh/id_ed25519"):
    try:
        open(path).read()
        print(path, "read")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
for d in ("/root", "/home"):
    print(d, "exists" if os.path.lexists(d) else "absent")
print("found", glob.glob("/*/*/.ssh/id_ed25519") + glob.glob("/*/.ssh/*"))
' "$FAKE_HOME"
	expect_status 0
	local f
	for f in /etc/shadow /etc/gshadow /root/.bashrc "$FAKE_HOME/.ssh/id_ed25519"; do
		grep -Eqx "$f (ENOENT|EACCES)" <<<"$stdout" || { echo "$f: $(grep "^$f " <<<"$stdout")" >&2; return 1; }
	done
	has "$stdout" "/root absent"
	has "$stdout" "/home absent"
	has "$stdout" "found []"
}

@test "sandbox: writes outside the workdir fail (EROFS/EACCES), /work, /tmp and /dev/shm are writable" {
	py -c "$FS_ATTACK"
	expect_status 0
	expect_fs_attack_refused
}

@test "sandbox: --workdir: what the program creates, modifies and deletes is on the host and in files[]" {
	local w=$BATS_TEST_TMPDIR/work
	mkdir "$w" "$w/keep"
	echo old >"$w/modify.txt"
	echo bye >"$w/delete.txt"
	echo same >"$w/keep/same.txt"
	py --workdir "$w" -c '
import os
open("/work/new.txt", "w").write("created in the sandbox")
open("/work/modify.txt", "a").write("more\n")
os.remove("/work/delete.txt")
os.mkdir("/work/newdir")
os.symlink("new.txt", "/work/link")
print(open("/work/keep/same.txt").read().strip())
'
	expect_status 0
	expect_stdout same
	[ "$(cat "$w/new.txt")" = "created in the sandbox" ]
	# root's directory, bound idmapped: what the sandbox made is root's (sandbox-host.bats)
	[ "$(stat -c %u:%g "$w/new.txt")" = 0:0 ]
	[ "$(cat "$w/modify.txt")" = "old
more" ]
	[ ! -e "$w/delete.txt" ]
	result_is --arg w "$w" '.workdir == $w'
	result_is '[.files[] | select(.path == "new.txt" and .change == "created" and .type == "file" and .size == 22)] | length == 1'
	result_is '[.files[] | select(.path == "modify.txt" and .change == "modified" and .type == "file" and .size == 9)] | length == 1'
	result_is '[.files[] | select(.path == "delete.txt" and .change == "deleted")] | length == 1'
	result_is '[.files[] | select(.path == "newdir" and .change == "created" and .type == "dir")] | length == 1'
	result_is '[.files[] | select(.path == "link" and .change == "created" and .type == "symlink")] | length == 1'
	# unchanged files are not listed
	result_is '[.files[] | select(.path | startswith("keep"))] | length == 0'
	result_is '(.files | length) == 5 and .files_truncated == false'
}

@test "sandbox: without --workdir the temporary workdir is removed and workdir is null" {
	local tmp=$BATS_TEST_TMPDIR/tmpdir
	mkdir "$tmp"
	TMPDIR=$tmp py -c 'open("/work/x", "w").write("x"); print("ok")'
	expect_status 0
	expect_stdout ok
	result_is '.workdir == null and .files == [{"path": "x", "change": "created", "type": "file", "size": 1}]'
	# (through a server, removed once the client has its result)
	until_count 0 ls -A "$tmp"
}

@test "sandbox: --ro binds a host dir read-only, --rw one writable" {
	local ro=$BATS_TEST_TMPDIR/ro rw=$BATS_TEST_TMPDIR/rw
	mkdir "$ro" "$rw"
	echo input >"$ro/data.txt"
	chown "$HOST_ID:$HOST_ID" "$rw"
	py --ro "$ro:/data" --rw "$rw:/out" -c '
import errno
print(open("/data/data.txt").read().strip())
for path in ("/data/new", "/out/new"):
    try:
        open(path, "w").write("x")
        print(path, "written")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
'
	expect_status 0
	expect_stdout "input
/data/new EROFS
/out/new written"
	[ ! -e "$ro/new" ]
	[ "$(cat "$rw/new")" = x ]
}

# ---------------------------------------------------------------- root: network

# What NET_ATTACK reports, with the network off and with loopback only (root and rootless alike).
NET_NONE_SEES="inet socket EPERM
inet6 socket EPERM
unix u
abstract connect ECONNREFUSED
outside socket EPERM
resolv empty"
NET_LOOPBACK_SEES="inet connect ECONNREFUSED
inet6 connect ECONNREFUSED
unix u
abstract connect ECONNREFUSED
outside connect ENETUNREACH
resolv empty"

@test "sandbox: --network none: socket(AF_INET) is EPERM and the host port is unreachable" {
	start_listener
	py --network none -c "$NET_ATTACK" "$LISTEN_PORT" none
	expect_status 0
	expect_stdout "$NET_NONE_SEES"
	result_is '.network == "none"'
	refute grep -q none "$LISTEN_LOG"
}

@test "sandbox: --network loopback (the default): a private lo, the host's 127.0.0.1 port is not reachable" {
	start_listener
	py -c "$NET_ATTACK" "$LISTEN_PORT" loopback
	expect_status 0
	expect_stdout "$NET_LOOPBACK_SEES"
	result_is '.network == "loopback"'
	refute grep -q loopback "$LISTEN_LOG"
	# explicitly asked for, the same
	py --network loopback -c "$NET_ATTACK" "$LISTEN_PORT" loopback
	expect_status 0
	[ "${stdout%%$'\n'*}" = "inet connect ECONNREFUSED" ] || { echo "$stdout" >&2; return 1; }
}

@test "sandbox: a signal to the caller's process group reaches the program once (a terminal's ^C, Jupyter's interrupt)" {
	cat >"$BATS_TEST_TMPDIR/count.py" <<'EOF'
import signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda *a: got.append(1))
print("ready", flush=True)
time.sleep(3)
print("SIGINT", len(got), flush=True)
EOF
	# its own process group, as a shell's job or a Jupyter kernel's launcher makes one
	setsid "$SBX_OCI" --root "$SBX_ROOT" python --python "$PYTHON" "$BATS_TEST_TMPDIR/count.py" \
		>"$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
	local pid=$!
	for _ in $(seq 300); do grep -q ready "$BATS_TEST_TMPDIR/out" && break; sleep 0.1; done
	kill -INT -- "-$pid"
	wait "$pid" || true
	grep -qx "SIGINT 1" "$BATS_TEST_TMPDIR/out" || { cat "$BATS_TEST_TMPDIR/out" >&2; false; }
}

@test "sandbox: a zmq tcp bind on loopback works (libzmq lists the interfaces first; netlink's refusal must not abort it)" {
	/usr/bin/python3 -c 'import zmq' 2>/dev/null || skip "python3-zmq is not installed"
	py --network loopback -c 'import zmq; s = zmq.Context().socket(zmq.PULL); print("bound", s.bind_to_random_port("tcp://127.0.0.1") > 0)'
	[ "$status" -eq 0 ] || { echo "$stderr" >&2; false; }
	[ "$stdout" = "bound True" ]
	# with no network, the bind is a zmq error to catch, as on a host without inet
	py --network none -c 'import zmq
try:
    zmq.Context().socket(zmq.PULL).bind_to_random_port("tcp://127.0.0.1")
except zmq.ZMQError as e:
    print("refused", e.errno)'
	[ "$status" -eq 0 ] || { echo "$stderr" >&2; false; }
	[ "$stdout" = "refused 1" ]
}

@test "sandbox: --network full: the host's 127.0.0.1 port is reachable" {
	start_listener
	py --network full -c "$NET_ATTACK" "$LISTEN_PORT" full-mode
	expect_status 0
	[ "${stdout%%$'\n'*}" = "inet connected pong" ] || { echo "$stdout" >&2; return 1; }
	[ "$(grep -cx full-mode "$LISTEN_LOG")" -eq 1 ] # the TCP connection only
	# the host's abstract unix sockets stay out of reach (Landlock scoping)
	grep -Eqx 'abstract (socket|connect) (EPERM|EACCES)' <<<"$stdout" || { echo "$stdout" >&2; return 1; }
	result_is '.network == "full"'
	if [ -s /etc/resolv.conf ]; then
		has "$stdout" "resolv set"
	fi
}

# ---------------------------------------------------------------- root: resources

@test "sandbox: a fork bomb under --pids 16 gets EAGAIN, the host keeps forking, nothing is left" {
	py --pids 16 -c "$FORK_BOMB"
	expect_status 0
	[[ "$stdout" == "forked "*" EAGAIN" ]] || { echo "$stdout" >&2; return 1; }
	local n=${stdout#forked }
	n=${n%% *}
	[ "$n" -ge 8 ] && [ "$n" -le 15 ] || { echo "forked $n children under --pids 16" >&2; return 1; }
	result_is '.limits.pids == 16'
	result_is '.limits_hit == ["pids"]'
	for _ in $(seq 20); do /bin/true; done
	expect_no_processes_of "$HOST_ID"
}

@test "sandbox: a 512M memory bomb under --memory 64M is OOM-killed: 137, oom_killed" {
	py --memory 64M -c 'b = bytearray(512 * 1024 * 1024); print("allocated", len(b))'
	expect_status 137
	lacks "$stdout" allocated
	result_is '.exit_code == 137 and .signal == "SIGKILL" and .oom_killed == true and .timed_out == false'
	result_is '.limits.memory_bytes == 67108864 and .peak_memory_scope == "cgroup" and .peak_memory_bytes <= 67108864 and .degraded == []'
	result_is '.limits_hit == ["memory"]'
	expect_no_processes_of "$HOST_ID"
}

@test "sandbox: /proc/meminfo shows the memory limit, not the host's memory (numpy's MemAvailable, psutil's MemTotal)" {
	local host_kb
	host_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	py --memory 256M -c '
info = dict(l.split(":", 1) for l in open("/proc/meminfo"))
for k in ("MemTotal", "MemFree", "MemAvailable", "SwapTotal"):
    print(k, info[k].split()[0])
'
	expect_status 0
	[ "$(sed -n 1p <<<"$stdout")" = "MemTotal 262144" ]
	# free: the limit less what the sandbox uses (Python itself, a few MiB)
	[[ "$(sed -n 2p <<<"$stdout")" =~ ^MemFree\ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 200000 ] && [ "${BASH_REMATCH[1]}" -le 262144 ]
	[[ "$(sed -n 3p <<<"$stdout")" =~ ^MemAvailable\ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 200000 ] && [ "${BASH_REMATCH[1]}" -le 262144 ]
	[ "$(sed -n 4p <<<"$stdout")" = "SwapTotal 0" ]
	[ "$host_kb" != 262144 ]
	# the default limit (2 GiB), and read-only: the file is not the sandbox's to change
	py -c '
print(open("/proc/meminfo").readline().split()[1])
try:
    open("/proc/meminfo", "w")
except OSError as e:
    print(type(e).__name__)
'
	expect_status 0
	[ "$(sed -n 1p <<<"$stdout")" = 2097152 ]
	[[ "$(sed -n 2p <<<"$stdout")" =~ ^(PermissionError|OSError)$ ]]
}

@test "sandbox: /proc/meminfo follows the sandbox's use: 300M touched lowers MemAvailable by as much, freed raises it" {
	py --memory 1G -c '
import time
def avail():
    return int([l for l in open("/proc/meminfo") if l.startswith("MemAvailable:")][0].split()[1])
size = len(open("/proc/meminfo").read())
before = avail()
x = bytearray(300 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
time.sleep(0.6)
during = avail()
del x
time.sleep(0.6)
after = avail()
print((before - during) // 1024, (after - during) // 1024, len(open("/proc/meminfo").read()) == size)
'
	expect_status 0
	read -r used freed same <<<"$stdout"
	# MiB: 300 touched, within what else the run allocated meanwhile
	[ "$used" -ge 280 ] && [ "$used" -le 340 ] && [ "$freed" -ge 280 ] && [ "$same" = True ]
	# the run's file is gone with the run (its bind held it)
	until_count "$(standbys)" find "$SBX_ROOT" -name 'meminfo-run-*'
	# one a killed runtime left (its pid gone) goes with the next run; a live pid's stays
	local skel dead=4194000
	while kill -0 "$dead" 2>/dev/null; do dead=$((dead + 1)); done
	# the skeleton a default run uses: where its file is while it runs
	local f="" bg
	"$SBX_OCI" --root "$SBX_ROOT" python -c 'import time; time.sleep(2)' &
	bg=$!
	for _ in $(seq 100); do
		f=$(find "$SBX_ROOT/@python" -name 'meminfo-run-*' | head -1)
		[ -z "$f" ] || break
		sleep 0.05
	done
	wait "$bg"
	[ -n "$f" ]
	skel=$(dirname "$f")
	touch "$skel/meminfo-run-$dead" "$skel/meminfo-run-$$"
	py -c pass
	expect_status 0
	[ ! -e "$skel/meminfo-run-$dead" ] && [ -e "$skel/meminfo-run-$$" ]
	rm "$skel/meminfo-run-$$"
}

@test "sandbox: a disk fill past --fsize 8M in /work gets EFBIG (Python) and SIGXFSZ (a shell child), and is reported" {
	local w=$BATS_TEST_TMPDIR/work
	mkdir "$w"
	py --workdir "$w" --fsize 8M -c '
with open("/work/big", "wb") as f:
    for _ in range(16):
        f.write(b"x" * 1024 * 1024)
print("wrote 16M")
'
	expect_status 1
	lacks "$stdout" "wrote 16M"
	has "$stderr" "File too large"
	[ "$(stat -c %s "$w/big")" -le 8388608 ]
	result_is '.exit_code == 1 and .limits.fsize_bytes == 8388608 and .stderr_bytes > 0'
	result_is '[.files[] | select(.path == "big" and .size <= 8388608)] | length == 1'
	result_is '.limits_hit == ["fsize"]'
	# a child with the default SIGXFSZ disposition is killed by it
	py --workdir "$w" --fsize 8M -c '
import subprocess
print(subprocess.run(["/bin/sh", "-c", "head -c 16777216 /dev/zero >/work/big2"]).returncode)
'
	expect_status 0
	expect_stdout 153 # the shell: 128 + SIGXFSZ (25)
	[ "$(stat -c %s "$w/big2")" -le 8388608 ]
}

@test "sandbox: filling /tmp and /dev/shm beyond --tmp-size 8M gets ENOSPC" {
	py --tmp-size 8M -c '
import errno
for path in ("/tmp/fill", "/dev/shm/fill"):
    n = 0
    try:
        with open(path, "wb") as f:
            for _ in range(32):
                f.write(b"x" * 1024 * 1024)
                n += 1
                f.flush()
        print(path, "wrote 32M")
    except OSError as e:
        print(path, errno.errorcode[e.errno], n <= 8)
'
	expect_status 0
	expect_stdout "/tmp/fill ENOSPC True
/dev/shm/fill ENOSPC True"
	# the result names the limit, and a run that used a little of /tmp does not
	result_is '.limits_hit == ["tmp_size"]'
	py --tmp-size 8M -c 'open("/tmp/small", "wb").write(b"x" * 4096 * 1024)'
	expect_status 0
	result_is '.limits_hit == []'
}

@test "sandbox: EMFILE at --nofile that the program reports is in limits_hit, one it keeps quiet about is not" {
	py --nofile 64 -c '
files = []
while True:
    files.append(open("/dev/null"))
'
	expect_status 1
	has "$stderr" "Too many open files"
	result_is '.limits_hit == ["nofile"] and .limits.nofile == 64'
	# a shell's error, caught by the program; then the words split across two writes
	py --nofile 64 -c '
import os, subprocess, time
subprocess.run(["/bin/bash", "-c", "for i in $(seq 3 80); do exec {fd}</dev/null || exit 1; done"], stderr=subprocess.DEVNULL)
os.write(2, b"x" * 70000 + b"Too many ")
time.sleep(0.3)
os.write(2, b"open files\n")
'
	expect_status 0
	result_is '.limits_hit == ["nofile"]'
	py --nofile 64 -c '
import subprocess
print(subprocess.run(["/bin/bash", "-c", "for i in $(seq 3 80); do exec {fd}</dev/null || exit 1; done"]).returncode)
'
	expect_status 0
	expect_stdout 1
	result_is '.limits_hit == ["nofile"]'
	# caught and handled silently: the kernel counts nothing, so nothing is claimed
	py --nofile 64 -c '
files = []
try:
    while True:
        files.append(open("/dev/null"))
except OSError:
    pass
print(len(files) > 50)
'
	expect_status 0
	expect_stdout True
	result_is '.limits_hit == []'
}

@test "sandbox: a CPU spin under --timeout 1 is killed with everything it started: 137, timed_out" {
	py --timeout 1 -c '
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
while True:
    pass
'
	expect_status 137
	has "$stderr" "timed out"
	result_is '.exit_code == 137 and .signal == "SIGKILL" and .timed_out == true and .oom_killed == false'
	result_is '.cpu_time_exceeded == false and .limits.timeout_s == 1 and .wall_ms >= 900'
	result_is '.limits_hit == ["timeout"]'
	expect_no_processes_of "$HOST_ID"
}

# (bubblewrap's --die-with-parent: a Jupyter server killed must not leave its kernels
# running forever under --timeout 0)
die_with_parent_run() { # die_with_parent_run ID [OPTION...]: started by a shell that then sleeps; PARENT, SBX
	local id=$1 i
	shift
	bash -c 'sbx=$1 root=$2 id=$3 dir=$4; shift 4
		"$sbx" --root "$root" python --id "$id" --timeout 0 "$@" -c "import time; time.sleep(300)" \
			</dev/null >/dev/null 2>"$dir/err" &
		echo $! >"$dir/pid"
		exec sleep 300' _ "$SBX_OCI" "$SBX_ROOT" "$id" "$BATS_TEST_TMPDIR" "$@" &
	PARENT=$!
	for i in $(seq 100); do
		[ -f "$SBX_ROOT/$id/state.json" ] && [ -s "$BATS_TEST_TMPDIR/pid" ] && break
		sleep 0.05
	done
	SBX=$(cat "$BATS_TEST_TMPDIR/pid")
	until_count 1 pgrep -u "$HOST_ID" -f 'time.sleep\(300\)'
}

running() { [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

@test "sandbox: --die-with-parent: killing the process that started the run ends the sandbox, and nothing of it is left; without it the run goes on" {
	local id=$(new_id) i
	die_with_parent_run "$id" --die-with-parent
	kill -KILL "$PARENT"
	wait "$PARENT" || true
	for i in $(seq 100); do running "$SBX" || break; sleep 0.05; done
	! running "$SBX"
	has "$(cat "$BATS_TEST_TMPDIR/err")" "the process that started this run exited"
	expect_no_processes_of "$HOST_ID"
	[ ! -e "$SBX_ROOT/$id" ]
	! ls -d /sys/fs/cgroup/*/sbx-oci/"$id" 2>/dev/null
	# the control: without the option the run outlives its parent
	id=$(new_id)
	rm -f "$BATS_TEST_TMPDIR/pid"
	die_with_parent_run "$id"
	kill -KILL "$PARENT"
	wait "$PARENT" || true
	sleep 1
	running "$SBX"
	until_count 1 pgrep -u "$HOST_ID" -f 'time.sleep\(300\)'
	kill -TERM "$SBX"
	for i in $(seq 100); do running "$SBX" || break; sleep 0.05; done
	expect_no_processes_of "$HOST_ID"
}

@test "sandbox: a deadline that passes before the program starts is a timeout too, not a setup error" {
	# 10 µs: the sandbox's own setup takes longer than that (a standby's adopting its
	# request too)
	py --timeout 0.00001 -c 'print("never")'
	expect_status 137
	has "$stderr" "timed out"
	result_is '.exit_code == 137 and .signal == "SIGKILL" and .timed_out == true and .error == null'
	expect_no_processes_of "$HOST_ID"
}

@test "sandbox: a CPU spin under --cpu-time 1 gets SIGXCPU at the limit: cpu_time_exceeded, 152" {
	# three times: the signal lands at slightly different splits of user and system time
	for _ in 1 2 3; do
		py --cpu-time 1 --timeout 30 -c 'while True: pass'
		expect_status 152
		result_is '.timed_out == false and .oom_killed == false and .limits.cpu_time_s == 1'
		# the interpreter is not pid 1 (the sandbox's own init is): SIGXCPU reaches it
		result_is '.signal == "SIGXCPU" and .exit_code == 152'
		result_is '.cpu_user_ms + .cpu_sys_ms >= 900 and .cpu_user_ms + .cpu_sys_ms < 1900'
		result_is '.cpu_time_exceeded == true'
		result_is '.limits_hit == ["cpu_time"]'
		has "$stderr" "reached --cpu-time"
	done
}

@test "sandbox: a program that ignores SIGXCPU is killed a second after --cpu-time" {
	py --cpu-time 1 --timeout 30 -c 'import signal
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
while True: pass'
	expect_status 137
	result_is '.signal == "SIGKILL" and .timed_out == false and .cpu_time_exceeded == true'
	result_is '.cpu_user_ms + .cpu_sys_ms >= 1900 and .cpu_user_ms + .cpu_sys_ms < 3000'
}

@test "sandbox: the interpreter is pid 2 under the sandbox's own init, whose command line says nothing" {
	py -c 'import os; print(os.getpid(), os.getppid(), open("/proc/1/cmdline").read().rstrip("\0"))'
	expect_status 0
	# through --connect the program's parent is the warm fork that waits for it, outside
	# the sandbox's pid namespace: its parent's pid reads 0 there
	expect_stdout "2 $([ -n "${SBX_VIA_CONNECT:-}" ] && echo 0 || echo 1) sbx-init"
	py -c 'open("/proc/1/environ").read()'
	expect_status 1
	has "$stderr" "PermissionError"
}

@test "sandbox: --cpu-time 1 stops a spinning child process too" {
	py --cpu-time 1 --timeout 30 -c '
import subprocess, sys
print(subprocess.run([sys.executable, "-c", "while True: pass"]).returncode in (-9, -24))
'
	expect_status 0
	expect_stdout True
	result_is '.exit_code == 0 and .cpu_user_ms + .cpu_sys_ms >= 900'
}

@test "sandbox: a signal the program sends itself ends it with 128+N (SIGTERM 143, os.abort SIGABRT 134)" {
	py -c 'import os, signal, time; os.kill(os.getpid(), signal.SIGTERM); time.sleep(0.2); print("survived SIGTERM")'
	result_is '.signal == "SIGTERM" and .exit_code == 143'
	expect_status 143
	py -c 'import os; os.abort()'
	result_is '.signal == "SIGABRT" and .exit_code == 134'
	expect_status 134
	# real-time signals are named from 34, Python's (and glibc's) SIGRTMIN
	py -c 'import os, signal; os.kill(os.getpid(), signal.SIGRTMIN + 3)'
	result_is '.signal == "SIGRT3" and .exit_code == 165'
	expect_status 165
}

@test "sandbox: SIGTERM to sbx-oci python ends the run: the program is stopped, everything cleaned up" {
	local tmp=$BATS_TEST_TMPDIR/tmpdir out=$BATS_TEST_TMPDIR/term.out pid alive=1
	mkdir "$tmp"
	RESULT=$BATS_TEST_TMPDIR/result.json
	TMPDIR=$tmp "$SBX_OCI" --root "$SBX_ROOT" python --id "$(new_id)" --result "$RESULT" \
		-c 'import time; print("started", flush=True); time.sleep(60); print("not stopped")' \
		</dev/null >"$out" 2>"$BATS_TEST_TMPDIR/term.err" 3>&- &
	pid=$!
	for _ in $(seq 200); do
		grep -q started "$out" && break
		sleep 0.02
	done
	grep -q started "$out"
	kill -TERM "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || { alive=0; break; }
		sleep 0.05
	done
	if [ "$alive" = 1 ]; then
		kill -KILL "$pid" # our own runtime process; teardown deletes what it left
		wait "$pid" || true
		echo "sbx-oci python was still running 5 s after SIGTERM" >&2
		return 1
	fi
	set +e
	wait "$pid"
	status=$?
	set -e
	[ "$status" -eq 143 ] || [ "$status" -eq 137 ] || { echo "status $status: $(cat "$BATS_TEST_TMPDIR/term.err")" >&2; return 1; }
	result_is '.exit_code == 143 or .exit_code == 137'
	refute grep -q "not stopped" "$out"
	[ -z "$(ls -A "$tmp")" ] || { echo "temporary workdir left: $(ls -A "$tmp")" >&2; return 1; }
	expect_no_processes_of "$HOST_ID"
}

# ---------------------------------------------------------------- root: output

@test "sandbox: print('x'*10**8) is capped at --max-output; stdout_bytes counts it all" {
	local out=$BATS_TEST_TMPDIR/big.out
	set +e
	timeout -k 5 60 "$SBX_OCI" --root "$SBX_ROOT" python --id "$(new_id)" --max-output 64k --result "$BATS_TEST_TMPDIR/result.json" \
		-c "import sys; print('x' * 10**8); sys.stderr.write('Z' * 100000)" </dev/null >"$out" 2>"$BATS_TEST_TMPDIR/big.err"
	status=$?
	set -e
	RESULT=$BATS_TEST_TMPDIR/result.json
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$out")" -le 65536 ]
	[ "$(stat -c %s "$out")" -gt 0 ]
	result_is '.stdout_truncated == true and .stdout_bytes == 100000001'
	result_is '.stderr_truncated == true and .stderr_bytes == 100000'
	result_is '.limits_hit == ["output"]'
	grep -q "stdout truncated" "$BATS_TEST_TMPDIR/big.err"
	# stderr carries at most the cap of the program's bytes, plus the runtime's notes
	[ "$(tr -cd Z <"$BATS_TEST_TMPDIR/big.err" | wc -c)" -le 65536 ]
}

@test "sandbox: --result - puts only the JSON on stdout, with the capped output in it" {
	local out=$BATS_TEST_TMPDIR/res.out
	set +e
	timeout -k 5 60 "$SBX_OCI" --root "$SBX_ROOT" python --id "$(new_id)" --max-output 1000 --result - \
		-c "import sys; print('x' * 10**8); print('to stderr', file=sys.stderr)" </dev/null >"$out" 2>/dev/null
	status=$?
	set -e
	[ "$status" -eq 0 ]
	jq -e -s 'length == 1' "$out"
	RESULT=$out
	result_is '.stdout_truncated == true and .stdout_bytes == 100000001 and (.stdout | length) <= 1000 and (.stdout | test("^x+$"))'
	result_is '.stderr == "to stderr\n" and .stderr_truncated == false and .exit_code == 0'
}

# ---------------------------------------------------------------- root: processes

@test "sandbox: daemons started by the program do not survive the run" {
	py -c "$DAEMONS"
	expect_status 0
	expect_stdout "daemons started True"
	expect_no_processes_of "$HOST_ID"
	# nothing else of the run either
	refute grep -F -- "$PY_ID" <<<"$(ps -eo args=)"
}

@test "sandbox: numpy and pandas work" {
	py -c "$NUMPY_PANDAS"
	expect_status 0
	expect_stdout "[[5, 14], [14, 50]]
{'a': 4, 'b': 2}"
}

@test "sandbox: at the defaults, a Pool of 128 processes (a 128-CPU host's os.cpu_count()) and a default ThreadPoolExecutor work; numeric libraries get 4 threads at most" {
	py -c '
import multiprocessing, os
from concurrent.futures import ThreadPoolExecutor
with multiprocessing.get_context("fork").Pool(128) as pool:
    print(sum(pool.map(abs, range(-1000, 0), chunksize=4)))
with ThreadPoolExecutor() as ex:
    print(sum(ex.map(abs, range(-100, 0))))
print(sorted(k for k, v in os.environ.items() if k.endswith("_NUM_THREADS") and 1 <= int(v) <= 4))'
	expect_status 0
	expect_stdout "500500
5050
['MKL_NUM_THREADS', 'NUMEXPR_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS']"
	# --env wins
	py --env OMP_NUM_THREADS=7 -c 'import os; print(os.environ["OMP_NUM_THREADS"])'
	expect_stdout 7
}

@test "sandbox: threads, multiprocessing (fork and spawn) and subprocess work" {
	# a script, not -c: spawn's workers import the parent's __main__ from its file
	local script=$BATS_TEST_TMPDIR/mp.py
	cat >"$script" <<'EOF'

import multiprocessing as mp, os, subprocess, sys, threading
def sq(x):
    return x * x, os.getpid()
if __name__ == "__main__":
    ids = []
    barrier = threading.Barrier(4, timeout=30)
    def task():
        barrier.wait()
        ids.append(threading.get_native_id())
    ts = [threading.Thread(target=task) for _ in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("threads", len(set(ids)))
    for method in ("fork", "spawn"):
        with mp.get_context(method).Pool(2) as pool:
            res = pool.map(sq, range(5))
        print(method, [r for r, _ in res], os.getpid() not in {p for _, p in res})
    print(subprocess.run(["/bin/sh", "-c", "echo sh $((6 * 7))"], capture_output=True, text=True).stdout.strip())
    print(subprocess.run([sys.executable, "-c", "print(\"child\", 7 * 6)"], capture_output=True, text=True).stdout.strip())
EOF
	py --timeout 30 "$script"
	expect_status 0
	expect_stdout "threads 4
fork [0, 1, 4, 9, 16] True
spawn [0, 1, 4, 9, 16] True
sh 42
child 42"
}

@test "sandbox: a script, -m MODULE and - (stdin) run, with their arguments" {
	local d=$BATS_TEST_TMPDIR/scripts
	mkdir "$d"
	echo 'import sys; print("script", sys.argv[1:])' >"$d/s.py"
	py "$d/s.py" a --network none
	expect_status 0
	expect_stdout "script ['a', '--network', 'none']"
	PY_STDIN=$d/in.json
	echo '{"b": 1, "a": 2}' >"$PY_STDIN"
	py -m json.tool --sort-keys --compact
	expect_status 0
	expect_stdout '{"a":2,"b":1}'
	echo 'import sys; print("stdin", sys.argv)' >"$PY_STDIN"
	py - x y
	expect_status 0
	expect_stdout "stdin ['-', 'x', 'y']"
}

# ---------------------------------------------------------------- root: result and status

@test "sandbox: the result of a normal run" {
	py -c 'import sys; print("hello"); print("warn", file=sys.stderr)'
	expect_status 0
	expect_stdout hello
	[ "$stderr" = warn ]
	result_is --arg id "$PY_ID" '.id == $id and .error == null and .exit_code == 0 and .signal == null'
	result_is '.oom_killed == false and .timed_out == false and .cpu_time_exceeded == false'
	result_is '.wall_ms > 0 and .peak_memory_bytes > 0 and .cpu_user_ms + .cpu_sys_ms > 0'
	result_is '.cpu_scope == "cgroup" and .peak_memory_scope == "cgroup"'
	result_is '.stdout_bytes == 6 and .stderr_bytes == 5 and .stdout_truncated == false and .stderr_truncated == false'
	result_is 'has("stdout") | not'
	result_is '.files == [] and .files_truncated == false and .workdir == null and .network == "loopback" and .degraded == []'
	local cpus pids
	cpus=$(getconf _NPROCESSORS_ONLN)
	pids=$((cpus * 8 > 1024 ? cpus * 8 : 1024))
	result_is --argjson pids "$pids" '.limits == {"memory_bytes": 2147483648, "cpu_time_s": 300, "pids": $pids, "nofile": 1024, "fsize_bytes": 268435456, "timeout_s": 300}'
	result_is '.landlock_abi | type == "number"'
	result_is '.limits_hit == []'
}

@test "sandbox: the program's exit status passes through" {
	py -c 'import sys; sys.exit(3)'
	expect_status 3
	result_is '.exit_code == 3 and .signal == null and .error == null'
	py -c 'raise ValueError("boom")'
	expect_status 1
	has "$stderr" "ValueError: boom"
	result_is '.exit_code == 1'
}

@test "sandbox: a setup error: exit 125, one line, a result with error set and exit_code null" {
	local arg
	for arg in "--python /nonexistent" "--workdir /nonexistent" "--ro /nonexistent:/data"; do
		# shellcheck disable=SC2086
		py $arg -c 'print("ran")'
		expect_status 125
		assert_one_line_error "${arg%% *}"
		[ -z "$stdout" ]
		result_is '(.error | type == "string" and length > 0) and .exit_code == null and .signal == null'
	done
	# with --result -, the JSON is still all there is on stdout
	py_exec "$SBX_OCI" --root "$SBX_ROOT" python --python /nonexistent --result - -c 'print("ran")'
	expect_status 125
	jq -e '.error != null and .exit_code == null' <<<"$stdout"
}

@test "sandbox: a setup error's result carries the --id given" {
	py --python /nonexistent -c 'print("ran")'
	expect_status 125
	result_is --arg id "$PY_ID" '.id == $id'
}

@test "sandbox: bad command lines: exit 2 and one line naming the option" {
	local args needle
	while IFS='|' read -r args needle; do
		# shellcheck disable=SC2086
		py_exec "$SBX_OCI" --root "$SBX_ROOT" python $args
		expect_status 2
		assert_one_line_error "$needle"
		[ -z "$stdout" ]
	done <<'EOF'
--bogus -c pass|--bogus
--network bogus -c pass|--network
--memory 1k -c pass|--memory
--timeout -1 -c pass|--timeout
--pids 0 -c pass|--pids
--max-output lots -c pass|--max-output
--env NOEQUALS -c pass|--env
--id ../escape -c pass|--id
|nothing to run
--memory 64M|nothing to run
EOF
	# nothing was set up
	[ -z "$(ls -A "$SBX_ROOT" 2>/dev/null | grep -v '^@')" ]
}

# ---------------------------------------------------------------- root: check, bundle, parallel

@test "sandbox: sbx-oci check passes every layer and canary as root" {
	sbx_split check
	expect_status 0
	local canaries
	canaries=$(grep -c '^canary:' <<<"$stdout")
	[ "$canaries" -ge 6 ] || { echo "only $canaries canaries:" >&2; echo "$stdout" >&2; return 1; }
	[ "$(grep '^canary:' <<<"$stdout" | grep -c ' PASS ')" -eq "$canaries" ] || { echo "$stdout" >&2; return 1; }
	refute grep -E ' (FAIL|WARN) ' <<<"$stdout"
	expect_no_processes_of "$HOST_ID"
}

@test "sandbox: --rootfs runs an image's root instead of the host's system paths" {
	[ -z "${SBX_VIA_CONNECT:-}" ] || skip "--rootfs is refused through --connect (serve.bats): the warm interpreter is the host's"
	local img=$BATS_TEST_TMPDIR/image d
	mkdir -p "$img/etc"
	# an "image" whose only file is its passwd; its interpreter comes from --ro /usr
	for d in bin lib lib64; do [ -L "/$d" ] && ln -s "usr/$d" "$img/$d"; done
	printf 'root:x:0:0::/:/bin/sh\nsandbox:x:1000:1000:from the image:/work:/bin/sh\n' >"$img/etc/passwd"
	py --rootfs "$img" --ro /usr -c '
import os, pwd
print(pwd.getpwuid(os.getuid()).pw_gecos, sorted(os.listdir("/etc")))
try:
    open("/etc/x", "w")
except OSError as e:
    print(e.strerror)
'
	expect_status 0
	expect_stdout "from the image ['passwd']
Read-only file system"
	# the image got its mount points, nothing else
	[ -d "$img/proc" ] && [ -d "$img/work" ] && [ "$(ls "$img/etc")" = passwd ]
}

@test "sandbox: sbx-oci bundle --python DIR, then sbx-oci run -b DIR prints 42" {
	local b=$BATS_TEST_TMPDIR/pybundle
	run "$SBX_OCI" bundle --python "$b" -- -c 'import os; print(6*7, os.getuid(), os.getpid())'
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	[ -f "$b/config.json" ] && [ -d "$b/rootfs" ]
	jq -e '.linux.seccomp != null and ([.linux.namespaces[].type] | index("user") != null) and .process.noNewPrivileges == true' "$b/config.json"
	sbx_split run -b "$b" "$ID"
	expect_status 0
	expect_stdout "42 1000 2" # pid 2: the bundle keeps the sandbox's own init as pid 1
	assert_no_state "$ID"
}

@test "sandbox: 8 runs at once, each with its own workdir and output" {
	local i pids=() w=$BATS_TEST_TMPDIR/par
	for i in $(seq 8); do
		mkdir -p "$w/$i"
		"$SBX_OCI" --root "$SBX_ROOT" python --id "$(new_id)-$i" --workdir "$w/$i" --result "$w/$i.json" -c '
import os, sys
n = int(sys.argv[1])
open("/work/mine", "w").write("run %d" % n)
print("run", n, n * n, sorted(os.listdir("/work")))
' "$i" </dev/null >"$w/$i.out" 2>"$w/$i.err" 3>&- &
		pids+=($!)
	done
	for i in $(seq 8); do
		wait "${pids[$((i - 1))]}" || { echo "run $i failed: $(cat "$w/$i.err")" >&2; return 1; }
	done
	for i in $(seq 8); do
		[ "$(cat "$w/$i.out")" = "run $i $((i * i)) ['mine']" ] || { echo "run $i: $(cat "$w/$i.out") $(cat "$w/$i.err")" >&2; return 1; }
		[ "$(cat "$w/$i/mine")" = "run $i" ]
		jq -e '.exit_code == 0 and .files == [{"path": "mine", "change": "created", "type": "file", "size": ('"${#i}"' + 4)}]' "$w/$i.json" >/dev/null
	done
	expect_no_processes_of "$HOST_ID"
}

# ---------------------------------------------------------------- unprivileged user
# The same attacks from an ordinary user (rootless_setup, rl_py: helpers/sandbox.bash).

@test "sandbox (rootless): without --allow-degraded the run is refused: 125, naming --memory" {
	rootless_setup
	rl_py -c 'print("ran")'
	expect_status 125
	assert_one_line_error "--memory"
	[ -z "$stdout" ]
	result_is '.error != null and .exit_code == null'
}

@test "sandbox (rootless): secrets are not in the environment; --env works" {
	rootless_setup
	export SECRET_API_KEY=sk-sbx-secret-1 AWS_SECRET_ACCESS_KEY=sbx-aws-secret-2 OPENAI_API_KEY=sbx-openai-secret-3
	# the user's runtime does get them (runuser passes the environment on)
	runuser -u "$RL_USER" -- env | grep -qx SECRET_API_KEY=sk-sbx-secret-1
	rl_py --allow-degraded --env FOO=bar -c '
import os
blob = open("/proc/self/environ", "rb").read()
try:
    blob += open("/proc/1/environ", "rb").read()  # the sandbox init: must be unreadable
except PermissionError:
    pass
print([k for k in ("SECRET_API_KEY", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY") if k in os.environ])
print(b"secret" in blob, os.environ["FOO"], os.environ["HOME"], os.environ["PATH"], os.getuid())
'
	expect_status 0
	expect_stdout "[]
False bar /work /usr/local/bin:/usr/bin:/bin 1000"
	has "$stderr" degraded
	result_is '.degraded | length > 0'
}

@test "sandbox (rootless): writes outside the workdir fail, the workdir is the user's" {
	rootless_setup
	rl_py --allow-degraded --workdir "$RL_DIR/work" -c "$FS_ATTACK"
	expect_status 0
	expect_fs_attack_refused
	[ "$(cat "$RL_DIR/work/new.txt")" = x ]
	[ "$(stat -c %u "$RL_DIR/work/new.txt")" = "$RL_UID" ]
	result_is '[.files[] | select(.path == "new.txt" and .change == "created")] | length == 1'
}

@test "sandbox (rootless): --network none and loopback keep the host port unreachable" {
	rootless_setup
	start_listener
	rl_py --allow-degraded --network none -c "$NET_ATTACK" "$LISTEN_PORT" rl-none
	expect_status 0
	expect_stdout "$NET_NONE_SEES"
	rl_py --allow-degraded --network loopback -c "$NET_ATTACK" "$LISTEN_PORT" rl-loopback
	expect_status 0
	expect_stdout "$NET_LOOPBACK_SEES"
	refute grep -q rl- "$LISTEN_LOG"
}

@test "sandbox (rootless): a fork bomb under --pids 16 gets EAGAIN and the user can still fork" {
	rootless_setup
	rl_py --allow-degraded --pids 16 -c "$FORK_BOMB"
	expect_status 0
	[[ "$stdout" == "forked "*" EAGAIN" ]] || { echo "$stdout" >&2; return 1; }
	local n=${stdout#forked }
	n=${n%% *}
	[ "$n" -ge 8 ] && [ "$n" -le 15 ] || { echo "forked $n children under --pids 16" >&2; return 1; }
	runuser -u "$RL_USER" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done'
	expect_no_processes_of "$RL_UID"
}

@test "sandbox (rootless): /proc/meminfo shows the memory limit" {
	rootless_setup
	rl_py --allow-degraded --memory 96M -c 'print(open("/proc/meminfo").readline().split()[1])'
	expect_status 0
	expect_stdout 98304
}

@test "sandbox (rootless): a 512M memory bomb under --memory 64M gets MemoryError, reported as degraded" {
	rootless_setup
	rl_py --allow-degraded --memory 64M -c '
try:
    b = bytearray(512 * 1024 * 1024)
    print("allocated", len(b))
except MemoryError:
    print("MemoryError")
    raise
'
	expect_status 1
	expect_stdout MemoryError
	has "$stderr" MemoryError
	result_is '.exit_code == 1 and .oom_killed == false and .limits.memory_bytes == 67108864'
	result_is '[.degraded[] | select(test("memory"))] | length >= 1'
}

@test "sandbox (rootless): a CPU spin under --timeout 1 is killed: 137, timed_out" {
	rootless_setup
	rl_py --allow-degraded --timeout 1 -c '
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
while True:
    pass
'
	expect_status 137
	result_is '.exit_code == 137 and .timed_out == true and .signal == "SIGKILL"'
	expect_no_processes_of "$RL_UID"
}

@test "sandbox (rootless): output is capped at --max-output" {
	rootless_setup
	rl_py --allow-degraded --max-output 64k -c "print('x' * 10**8)"
	expect_status 0
	[ "${#stdout}" -le 65536 ] && [ "${#stdout}" -gt 0 ]
	result_is '.stdout_truncated == true and .stdout_bytes == 100000001'
}

@test "sandbox (rootless): daemons started by the program do not survive the run" {
	rootless_setup
	rl_py --allow-degraded -c "$DAEMONS"
	expect_status 0
	expect_stdout "daemons started True"
	expect_no_processes_of "$RL_UID"
}

@test "sandbox (rootless): numpy and pandas work" {
	rootless_setup
	rl_py --allow-degraded -c "$NUMPY_PANDAS"
	expect_status 0
	expect_stdout "[[5, 14], [14, 50]]
{'a': 4, 'b': 2}"
}

@test "sandbox (rootless): sbx-oci check fails without --allow-degraded and passes with it" {
	rootless_setup
	py_exec runuser -u "$RL_USER" -- env HOME="$RL_DIR" TMPDIR="$RL_DIR/tmp" XDG_RUNTIME_DIR="$RL_DIR/run" "$RL_SBX" --root "$SBX_ROOT" check
	expect_status 1
	grep -E '^cgroups +FAIL' <<<"$stdout"
	py_exec runuser -u "$RL_USER" -- env HOME="$RL_DIR" TMPDIR="$RL_DIR/tmp" XDG_RUNTIME_DIR="$RL_DIR/run" "$RL_SBX" --root "$SBX_ROOT" check --allow-degraded
	expect_status 0
	refute grep -E ' FAIL ' <<<"$stdout"
	grep -E '^canary: network +PASS' <<<"$stdout"
	expect_no_processes_of "$RL_UID"
}

@test "sandbox: --ro/--rw destinations that are the sandbox's own or not plain paths are refused" {
	local d
	for d in / //proc/ /dev/shm /work /tmp /a/../proc relative; do
		sbx_split python --ro /usr/share:"$d" -c 'print(1)'
		[ "$status" -eq 2 ] || { echo "$d: status $status" >&2; return 1; }
		assert_one_line_error "--ro"
	done
}

@test "sandbox: a temporary workdir is removed whatever the program left in it (3000 nested dirs, a symlink to /, a mode-0 dir)" {
	local before after
	before=$(find /tmp -maxdepth 1 -name 'sbx-python-*' | wc -l)
	py -c '
import os
os.chdir("/work")
os.mkdir("locked"); open("locked/f", "w").write("x"); os.chmod("locked", 0)
os.symlink("/", "root-link")
for _ in range(3000):
    os.mkdir("d"); os.chdir("d")
print("deep")'
	expect_status 0
	expect_stdout deep
	result_is '.workdir == null'
	# (through a server, once the run is torn down and its standby made again)
	for _ in $(seq 50); do
		after=$(find /tmp -maxdepth 1 -name 'sbx-python-*' | wc -l)
		[ "$after" -le $((before + $(standbys))) ] && break
		sleep 0.1
	done
	[ "$after" -le $((before + $(standbys))) ]
	[ -d /etc ] && [ -f /etc/passwd ] # the symlink to / was not followed
}

@test "sandbox: the next run sweeps what a killed create or delete left (no state.json, a @deleting. dir), not a create in progress (its lock is held)" {
	[ -z "${SBX_VIA_CONNECT:-}" ] || skip "one-shot runs sweep; a server sweeps when it starts"
	local abandoned=$SBX_ROOT/py-0123456789abcdef deleting=$SBX_ROOT/@deleting.py-fedcba9876543210
	local creating=$SBX_ROOT/py-00000000000000aa given=$SBX_ROOT/mine
	mkdir -p "$abandoned" "$deleting" "$creating" "$given"
	echo '{}' >"$deleting/state.json"
	# a create in progress holds its dir's lock from the first moment (statedir.c)
	exec 9<"$creating"
	flock -x 9
	py -c 'print("next")'
	expect_stdout next
	[ ! -e "$abandoned" ] && [ ! -e "$deleting" ]
	[ -d "$creating" ]
	# an id a user gave is the user's (delete removes it), not the sweep's
	[ -d "$given" ]
	exec 9<&-
	rmdir "$creating" "$given"
}

@test "sandbox: what a run killed with SIGKILL leaves (state dir, cgroups, temp workdir) is swept by the next run" {
	local pid id=$(new_id) i state
	TMPDIR=$BATS_TEST_TMPDIR "$SBX_OCI" --root "$SBX_ROOT" python --id "$id" -c 'import time; time.sleep(30)' \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 100); do
		[ -f "$SBX_ROOT/$id/state.json" ] && break
		sleep 0.05
	done
	sleep 0.3
	kill -KILL "$pid"
	wait "$pid" || true
	# the sandbox died with its runtime (parent-death signal), its traces stayed
	for i in $(seq 100); do
		state=$("$SBX_OCI" --root "$SBX_ROOT" state "$id" | jq -r .status)
		[ "$state" = stopped ] && break
		sleep 0.05
	done
	[ "$state" = stopped ]
	[ -n "$(find "$BATS_TEST_TMPDIR" -maxdepth 1 -name 'sbx-python-*')" ]
	# the next run sweeps them
	py -c 'print("next")'
	expect_stdout next
	[ ! -e "$SBX_ROOT/$id" ]
	[ -z "$(find "$BATS_TEST_TMPDIR" -maxdepth 1 -name 'sbx-python-*')" ]
	! ls -d /sys/fs/cgroup/*/sbx-oci/"$id" 2>/dev/null
}
