#!/usr/bin/env bats
# The host side of `sbx-oci python` (issue 22): the runtime runs as root on behalf of
# untrusted code, so what the user named (--workdir, --rw) keeps its owner and mode,
# what the sandbox writes there carries no privilege on the host by any route, and
# every host-side action on a path the sandbox could have written is checked by
# planting the link, fifo or huge file from inside. Each check looks at the host.

load helpers
load helpers/sandbox

setup() {
	requires root userns python-stack
	setup_state
	RL_DIR=
}

teardown() {
	local rc=0
	helpers_teardown || rc=1
	[ -z "$RL_DIR" ] || rm -rf "$RL_DIR"
	return $rc
}

# Every route to a privileged file, tried from inside on /work/f: each line is the
# route and the errno name it got ("ok" if it went through).
PRIVILEGE_ROUTES='
import ctypes, errno, os, stat
libc = ctypes.CDLL(None, use_errno=True)
os.chdir("/work")
open("f", "w").write("x")
def attempt(name, call):
    try:
        r = call()
        if isinstance(r, int) and r < 0:
            raise OSError(ctypes.get_errno(), "")
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def sys(nr, *args):
    return libc.syscall(nr, *args)
attempt("chmod-setuid", lambda: os.chmod("f", 0o4755))
attempt("chmod-setgid", lambda: os.chmod("f", 0o2755))
fd = os.open("f", os.O_RDONLY)
attempt("fchmod-setuid", lambda: os.fchmod(fd, 0o4755))
dfd = os.open(".", os.O_RDONLY)
attempt("fchmodat-setuid", lambda: os.chmod("f", 0o6755, dir_fd=dfd))
attempt("fchmodat2-setuid", lambda: sys(452, -100, b"f", 0o4755, 0))
attempt("open-creat-setuid", lambda: sys(2, b"o", os.O_CREAT | os.O_WRONLY, 0o4755))
attempt("openat-creat-setgid", lambda: os.open("g", os.O_CREAT | os.O_WRONLY, 0o2755))
attempt("creat-setuid", lambda: libc.creat(b"c", 0o4755))
attempt("openat2", lambda: sys(437, -100, b"h", ctypes.c_char_p(bytes(24)), 24))
attempt("mknod-setuid-file", lambda: os.mknod("n", stat.S_IFREG | 0o4755))
attempt("mknod-char-device", lambda: os.mknod("null", stat.S_IFCHR | 0o666, os.makedev(1, 3)))
attempt("mknod-block-device", lambda: os.mknod("sda", stat.S_IFBLK | 0o666, os.makedev(8, 0)))
attempt("setxattr-capability", lambda: os.setxattr("f", "security.capability",
        bytes.fromhex("0100000200200000000000000000000000000000")))
attempt("setxattr-user", lambda: os.setxattr("f", "user.x", b"1"))
os.mkdir("sub", 0o6777)  # the kernel keeps no set-id bit of mkdir mode; a set-gid parent passes its own
open("sub/in-setgid-dir", "w").write("x")
attempt("chmod-plain", lambda: os.chmod("f", 0o640))
attempt("chmod-workdir-777", lambda: os.chmod("/work", 0o777))
'
PRIVILEGE_ROUTES_SEE='chmod-setuid EPERM
chmod-setgid EPERM
fchmod-setuid EPERM
fchmodat-setuid EPERM
fchmodat2-setuid ENOSYS
open-creat-setuid EPERM
openat-creat-setgid EPERM
creat-setuid EPERM
openat2 ENOSYS
mknod-setuid-file EPERM
mknod-char-device EPERM
mknod-block-device EPERM
setxattr-capability EPERM
setxattr-user EPERM
chmod-plain ok
chmod-workdir-777 ok'

# No file under $1 is setuid or setgid, a device, or has a file capability.
expect_no_privileged_files() {
	local bad
	bad=$(find "$1" \( -type f -perm /6000 \) -o -type b -o -type c)
	[ -z "$bad" ] || { echo "privileged files left: $bad" >&2; return 1; }
	"$PYTHON" - "$1" <<-'EOF'
		import os, sys
		for top, dirs, files in os.walk(sys.argv[1]):
		    for name in dirs + files:
		        path = os.path.join(top, name)
		        if any(x.startswith("security.") for x in os.listxattr(path, follow_symlinks=False)):
		            sys.exit("security xattr on " + path)
	EOF
}

# $1 is owned by $2 (uid:gid) with mode $3 (octal as stat %a prints it).
expect_owner_mode() {
	local got
	got=$(stat -c %u:%g:%a "$1")
	[ "$got" = "$2:$3" ] || { echo "$1 is $got, expected $2:$3" >&2; return 1; }
}

@test "sandbox-host: a root-owned --workdir keeps owner and mode; what the sandbox wrote is root's and no route made it privileged" {
	local w=$BATS_TEST_TMPDIR/rootwork
	mkdir "$w"
	chmod 2775 "$w" # set-gid: what is made inside inherits its group, never a set-id bit
	py --workdir "$w" -c "$PRIVILEGE_ROUTES"
	expect_status 0
	expect_stdout "$PRIVILEGE_ROUTES_SEE"
	expect_owner_mode "$w" 0:0 2775
	expect_owner_mode "$w/f" 0:0 640
	[ "$(stat -c %u:%g "$w/sub/in-setgid-dir")" = 0:0 ]
	expect_no_privileged_files "$w"
}

@test "sandbox-host: a workdir reached through a symlink: the directory, not the link, keeps owner and mode" {
	local w=$BATS_TEST_TMPDIR/real link=$BATS_TEST_TMPDIR/link
	mkdir "$w"
	chmod 750 "$w"
	ln -s "$w" "$link"
	py --workdir "$link" -c "$PRIVILEGE_ROUTES"
	expect_status 0
	expect_stdout "$PRIVILEGE_ROUTES_SEE"
	[ -L "$link" ] && [ "$(readlink "$link")" = "$w" ]
	expect_owner_mode "$w" 0:0 750
	expect_no_privileged_files "$w"
	result_is --arg w "$w" '.workdir == $w'
}

@test "sandbox-host: a root-owned directory made for the job (/srv/job1, in a private mount namespace) as the workdir keeps owner and mode" {
	local d=$BATS_TEST_TMPDIR/srv out=$BATS_TEST_TMPDIR/out
	mkdir "$d"
	chmod 755 "$d"
	# /srv/job1 is the test's directory only inside this mount namespace; the host's
	# /srv is untouched (and /srv itself is refused: sandbox-syspaths.bats)
	unshare -m --propagation private bash -c '
		mount -t tmpfs sbx-test-srv /srv && mkdir /srv/job1 && mount --bind "$1" /srv/job1 || exit 99
		"$2" --root "$3" python --python "$4" --workdir /srv/job1 -c "open(\"/work/note\", \"w\").write(\"x\"); import os; os.chmod(\"/work\", 0o777); print(\"wrote\")"
	' _ "$d" "$SBX_OCI" "$SBX_ROOT" "$PYTHON" >"$out" 2>&1 || { cat "$out" >&2; return 1; }
	[ "$(cat "$out")" = wrote ]
	expect_owner_mode "$d" 0:0 755
	expect_owner_mode "$d/note" 0:0 644
}

@test "sandbox-host: another user's --workdir: files are written as that user, the directory keeps its mode" {
	local w=$BATS_TEST_TMPDIR/theirs
	mkdir "$w"
	chown 4242:4343 "$w"
	chmod 700 "$w"
	py --workdir "$w" -c 'import os; open("/work/n", "w").write("x"); os.chmod("/work", 0o777); print(os.stat("/work/n").st_uid)'
	expect_status 0
	expect_stdout 1000
	expect_owner_mode "$w" 4242:4343 700
	[ "$(stat -c %u:%g "$w/n")" = 4242:4343 ]
}

@test "sandbox-host: a root-owned --rw directory is written through an idmap and keeps owner and mode" {
	local rw=$BATS_TEST_TMPDIR/rw
	mkdir "$rw"
	chmod 755 "$rw"
	py --rw "$rw:/out" -c '
import os
open("/out/x", "w").write("x")
os.chmod("/out", 0o777)
try:
    os.chmod("/out/x", 0o4755)
except PermissionError:
    print("setuid refused")'
	expect_status 0
	expect_stdout "setuid refused"
	expect_owner_mode "$rw" 0:0 755
	[ "$(stat -c %u:%g "$rw/x")" = 0:0 ]
	expect_no_privileged_files "$rw"
}

@test "sandbox-host: a --workdir on a file system without idmapped mounts is refused and left as it was (no chown)" {
	local d=$BATS_TEST_TMPDIR/ramfs out=$BATS_TEST_TMPDIR/out rc=0
	mkdir "$d"
	unshare -m --propagation private bash -c '
		mount -t ramfs ramfs "$1" && chmod 755 "$1" || exit 99
		"$2" --root "$3" python --python "$4" --workdir "$1" -c "print(1)"
		rc=$?
		stat -c %u:%g:%a "$1"
		exit $rc
	' _ "$d" "$SBX_OCI" "$SBX_ROOT" "$PYTHON" >"$out" 2>&1 || rc=$?
	[ "$rc" -eq 125 ] || { cat "$out" >&2; return 1; }
	grep -q '^0:0:755$' "$out"
	grep -q -- "--workdir $d is owned by uid 0" "$out"
}

@test "sandbox-host: a fifo or a device as --workdir or --rw is refused at once, naming the option" {
	local fifo=$BATS_TEST_TMPDIR/fifo
	mkfifo "$fifo"
	py --workdir "$fifo" -c 'print(1)'
	expect_status 125
	assert_one_line_error "--workdir"
	py --rw "$fifo:/x" -c 'print(1)'
	expect_status 125
	assert_one_line_error "--rw"
	py --rw /dev/null:/x -c 'print(1)'
	expect_status 125
	assert_one_line_error "--rw"
}

@test "sandbox-host (rootless): the user's own workdir; set-id modes and device nodes are refused there too" {
	rootless_setup
	chmod 2775 "$RL_DIR/work"
	rl_py --allow-degraded --workdir "$RL_DIR/work" -c "$PRIVILEGE_ROUTES"
	expect_status 0
	expect_stdout "$PRIVILEGE_ROUTES_SEE"
	expect_owner_mode "$RL_DIR/work" "$RL_UID:$(id -g "$RL_USER")" 2775
	expect_no_privileged_files "$RL_DIR/work"
}

# ---------------------------------------------------------------- --no-subprocess

# Every way of starting a program, then what must keep working; one line each.
NO_SUBPROCESS_PROBE='
import ctypes, multiprocessing, os, subprocess, sys, threading
from concurrent.futures import ThreadPoolExecutor
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, start):
    try:
        start()
        print(name, "started")
    except PermissionError:
        print(name, "PermissionError")
attempt("subprocess.run", lambda: subprocess.run(["/bin/true"]))
attempt("subprocess.run-interpreter", lambda: subprocess.run([sys.executable, "-c", "pass"]))
attempt("subprocess.Popen-shell", lambda: subprocess.Popen("true", shell=True).wait())
attempt("posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))
attempt("posix_spawnp", lambda: os.posix_spawnp("true", ["true"], {}))
def exec_in_child(call):
    pid = os.fork()
    if pid == 0:
        try:
            call()
        except PermissionError:
            os._exit(13)
        os._exit(0)
    return os.waitpid(pid, 0)[1] >> 8
print("os.execv", exec_in_child(lambda: os.execv("/bin/true", ["true"])))
print("os.execve-interpreter", exec_in_child(lambda: os.execve(sys.executable, [sys.executable], {})))
def raw_execveat():
    if libc.syscall(322, -100, b"/bin/true", None, None, 0) < 0:
        raise OSError(ctypes.get_errno(), "execveat")
attempt("execveat", lambda: exec_in_child(raw_execveat) == 13 and (_ for _ in ()).throw(PermissionError()))
print("os.system", os.system("true") != 0)
print("fork", exec_in_child(lambda: None))
t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()
with ThreadPoolExecutor() as ex:
    print("threadpool", sum(ex.map(abs, range(-8, 0))))
with multiprocessing.get_context("fork").Pool(2) as pool:
    print("pool-fork", pool.map(abs, [-1, -2]))
'
NO_SUBPROCESS_SEES='subprocess.run PermissionError
subprocess.run-interpreter PermissionError
subprocess.Popen-shell PermissionError
posix_spawn PermissionError
posix_spawnp PermissionError
os.execv 13
os.execve-interpreter 13
execveat PermissionError
os.system True
fork 0
thread
threadpool 36
pool-fork [1, 2]'

@test "sandbox-host: --no-subprocess: every way of starting a program fails with PermissionError; fork, threads and a fork Pool work" {
	py --no-subprocess -c "$NO_SUBPROCESS_PROBE"
	expect_status 0
	expect_stdout "$NO_SUBPROCESS_SEES"
	result_is '.no_subprocess == true and .exec_refused >= 9'
	result_is '.exec_refused_paths | index("/bin/true") != null and index("/bin/sh") != null'
	has "$stderr" "refused (--no-subprocess)"
	# the supervisor and its socket are gone
	[ -z "$(find "$SBX_ROOT" -maxdepth 1 -name '.exec-guard-*')" ]
}

@test "sandbox-host: --no-subprocess with --network none, and a program that never execs: nothing refused" {
	py --no-subprocess --network none -c 'import os; print(os.fork() and "parent" or os._exit(0))'
	expect_status 0
	expect_stdout parent
	result_is '.no_subprocess == true and .exec_refused == 0 and .exec_refused_paths == []'
}

@test "sandbox-host: without --no-subprocess programs start (the default) and the result says so" {
	py -c 'import subprocess; print(subprocess.run(["/bin/echo", "started"], capture_output=True, text=True).stdout.strip())'
	expect_status 0
	expect_stdout started
	result_is '.no_subprocess == false and (has("exec_refused") | not)'
}

@test "sandbox-host: sbx-oci check --no-subprocess proves it with a canary" {
	run "$SBX_OCI" --root "$SBX_ROOT" check --no-subprocess
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	has "$output" "canary: no subprocess"
	[[ "$output" == *"canary: no subprocess"*PASS* ]]
}

@test "sandbox-host (rootless): --no-subprocess refuses exec and keeps fork" {
	rootless_setup
	rl_py --allow-degraded --no-subprocess -c "$NO_SUBPROCESS_PROBE"
	expect_status 0
	expect_stdout "$NO_SUBPROCESS_SEES"
	result_is '.no_subprocess == true and .exec_refused >= 9'
}

# ---------------------------------------------------------------- host-side actions on what the sandbox wrote

@test "sandbox-host: --result FILE in the workdir: a link the sandbox left there is replaced, its target untouched" {
	local w=$BATS_TEST_TMPDIR/w target=$BATS_TEST_TMPDIR/host-file
	mkdir "$w"
	echo precious >"$target"
	py --workdir "$w" -c "import os; os.symlink('$target', '/work/result.json'); os.mkdir('/work/sub')"
	expect_status 0
	# the next run writes its result where the link is
	RESULT_FILE=$w/result.json
	py_exec "$SBX_OCI" --root "$SBX_ROOT" python --python "$PYTHON" --workdir "$w" --result "$RESULT_FILE" -c 'print("second")'
	expect_status 0
	[ "$(cat "$target")" = precious ]
	[ -f "$RESULT_FILE" ] && [ ! -L "$RESULT_FILE" ]
	jq -e '.exit_code == 0' "$RESULT_FILE" >/dev/null
	[ -z "$(find "$w" -name '.sbx-result-*')" ]
}

@test "sandbox-host: --result FILE where the sandbox left a fifo fails at once instead of hanging" {
	local w=$BATS_TEST_TMPDIR/w
	mkdir "$w"
	py --workdir "$w" -c 'import os; os.mkfifo("/work/result.json")'
	expect_status 0
	py_exec "$SBX_OCI" --root "$SBX_ROOT" python --python "$PYTHON" --workdir "$w" --result "$w/result.json" -c 'print(1)'
	[ "$status" -ne 124 ] # not the test's timeout
	[ "$status" -ne 0 ]
	has "$stderr" "--result"
	[ -p "$w/result.json" ]
}

@test "sandbox-host: a SCRIPT in the workdir that the sandbox turned into a link to a host file is resolved inside, never bound" {
	local w=$BATS_TEST_TMPDIR/w secret=$BATS_TEST_TMPDIR/private/secret.py
	mkdir "$w" "$BATS_TEST_TMPDIR/private"
	chmod 700 "$BATS_TEST_TMPDIR/private"
	echo 'print("HOST-SECRET-LINE")' >"$secret"
	chmod 644 "$secret"
	py --workdir "$w" -c "import os; os.symlink('$secret', '/work/main.py')"
	expect_status 0
	py --workdir "$w" "$w/main.py"
	[ "$status" -ne 0 ]
	lacks "$stdout$stderr" HOST-SECRET-LINE
}

@test "sandbox-host: a SCRIPT that is a link inside a --rw path is refused; a caller's link elsewhere is followed" {
	local rw=$BATS_TEST_TMPDIR/rw real=$BATS_TEST_TMPDIR/real.py
	mkdir "$rw"
	echo 'print("ran")' >"$real"
	ln -s "$real" "$rw/planted.py"
	py --rw "$rw:/out" "$rw/planted.py"
	expect_status 125
	assert_one_line_error "script"
	ln -s "$real" "$BATS_TEST_TMPDIR/mine.py"
	py "$BATS_TEST_TMPDIR/mine.py"
	expect_status 0
	expect_stdout ran
}

@test "sandbox-host: a rewrite that keeps size and puts the mtime back is still reported modified (ctime)" {
	local w=$BATS_TEST_TMPDIR/w
	mkdir "$w"
	echo aaaa >"$w/data"
	py --workdir "$w" -c '
import os
st = os.stat("/work/data")
open("/work/data", "r+").write("bbbb")
os.utime("/work/data", ns=(st.st_atime_ns, st.st_mtime_ns))'
	expect_status 0
	[ "$(cat "$w/data")" = bbbb ]
	result_is '[.files[] | select(.path == "data" and .change == "modified")] | length == 1'
}

@test "sandbox-host: the sweep of killed runs removes no directory an annotation names unless it is a temporary workdir of ours" {
	local keep=$BATS_TEST_TMPDIR/sbx-python-AbCdEf other=$BATS_TEST_TMPDIR/data/sbx-python-tools id
	mkdir -p "$keep" "$other" "$BATS_TEST_TMPDIR/data/x"
	echo keep >"$keep/f"
	echo keep >"$other/f"
	setup_bundle
	# a config that claims to be a killed sandbox run: dead owner, "temporary" workdirs
	for path in "$keep" "$BATS_TEST_TMPDIR/data/x/../sbx-python-tools" "$other"; do
		id=$(new_id)
		update_config --arg w "$path" '.process.terminal = false | .annotations = {"run.sbx-oci.sandbox": "python",
			"run.sbx-oci.sandbox.owner": "999999 1", "run.sbx-oci.sandbox.workdir": $w}'
		(cd "$BUNDLE" && "$SBX_OCI" --root "$SBX_ROOT" run -d "$id" </dev/null >/dev/null)
		wait_stopped "$id"
	done
	py -c 'print("swept")'
	expect_stdout swept
	[ "$(cat "$keep/f")" = keep ]   # root's: not one of ours
	[ "$(cat "$other/f")" = keep ]  # a .. component, and a name that is not sbx-python-XXXXXX
}

# ---------------------------------------------------------------- nothing of one run in the next

@test "sandbox-host: a script's name, and --ro/--rw destinations, are seen by no later run" {
	local dir=$BATS_TEST_TMPDIR/scripts data=$BATS_TEST_TMPDIR/data
	mkdir "$dir" "$data"
	echo 'print("first")' >"$dir/tenant-a-secret-task.py"
	py "$dir/tenant-a-secret-task.py"
	expect_stdout first
	py --ro "$data:/opt/tenant-a-dataset" -c 'import os; print(os.path.isdir("/opt/tenant-a-dataset"))'
	expect_stdout True
	# a later run of anyone: no trace of either name anywhere in its root
	py -c '
import os
seen = []
for top in ("/", "/sbx", "/opt", "/etc", "/work", "/tmp"):
    try:
        seen += os.listdir(top)
    except OSError:
        pass
print([n for n in seen if "tenant-a" in n])
print(os.path.exists("/opt/tenant-a-dataset"))'
	expect_status 0
	expect_stdout "[]
False"
	# nor on the host: the script's name nowhere, the destination only in the variant
	# skeleton of runs that ask for it (KEY-HASH), not in the shared one (KEY)
	[ -z "$(find "$SBX_ROOT/@python" -name 'tenant-a-secret-task.py')" ]
	local base
	base=$(find "$SBX_ROOT/@python" -mindepth 1 -maxdepth 1 -type d ! -name '*-*')
	[ -n "$base" ]
	[ -z "$(find $base -name '*tenant-a*')" ]
	[ -n "$(find "$SBX_ROOT/@python" -path '*-*/rootfs/opt/tenant-a-dataset')" ]
}

# ---------------------------------------------------------------- the same, as an unprivileged user

# rl_run ARGS...: sbx-oci as $RL_USER (rootless_setup), with its state root and TMPDIR.
rl_run() {
	py_exec runuser -u "$RL_USER" -- env HOME="$RL_DIR" TMPDIR="$RL_DIR/tmp" XDG_RUNTIME_DIR="$RL_DIR/run" \
		"$RL_SBX" --root "$SBX_ROOT" python --python "$PYTHON" --allow-degraded "$@"
}

@test "sandbox-host (rootless): --result in the workdir replaces a planted link, and a planted fifo fails at once" {
	rootless_setup
	local w=$RL_DIR/work target=$RL_DIR/precious
	echo precious >"$target"
	chown "$RL_USER:" "$target"
	rl_run --workdir "$w" -c "import os; os.symlink('$target', '/work/result.json'); os.mkfifo('/work/fifo.json')"
	expect_status 0
	rl_run --workdir "$w" --result "$w/result.json" -c 'print("second")'
	expect_status 0
	[ "$(cat "$target")" = precious ]
	[ -f "$w/result.json" ] && [ ! -L "$w/result.json" ]
	jq -e '.exit_code == 0' "$w/result.json" >/dev/null
	rl_run --workdir "$w" --result "$w/fifo.json" -c 'print(1)'
	[ "$status" -ne 124 ] && [ "$status" -ne 0 ]
	has "$stderr" "--result"
}

@test "sandbox-host (rootless): a planted script link is resolved inside; a script's name is seen by no later run" {
	rootless_setup
	local w=$RL_DIR/work
	mkdir -m 700 "$RL_DIR/private"
	echo 'print("HOST-SECRET-LINE")' >"$RL_DIR/private/s.py"
	chown -R "$RL_USER:" "$RL_DIR/private"
	chmod 700 "$RL_DIR/private"
	rl_run --workdir "$w" -c "import os; os.symlink('$RL_DIR/private/s.py', '/work/main.py')"
	expect_status 0
	rl_run --workdir "$w" "$w/main.py"
	[ "$status" -ne 0 ]
	lacks "$stdout$stderr" HOST-SECRET-LINE
	echo 'print("mine")' >"$RL_DIR/tenant-b-task.py"
	chown "$RL_USER:" "$RL_DIR/tenant-b-task.py"
	rl_run "$RL_DIR/tenant-b-task.py"
	expect_stdout mine
	rl_run -c 'import os; print(os.listdir("/sbx"))'
	expect_stdout "[]"
}
