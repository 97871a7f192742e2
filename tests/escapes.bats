#!/usr/bin/env bats
# Known container escapes, replayed against sbx-oci: one test per row of
# ../shared/security/THREATS.md section 1a (runtime CVEs and advisories) and 1b
# (classic sandbox-escape primitives), named after the CVE or the primitive. Each
# runs the attack for real and asserts what the host (or the runtime's own
# processes) would show if it had worked: a host file, mount or value unchanged,
# the errno the attack got. Where another suite already has the straightforward
# version, the test here takes another angle and says which test that is.
#
# Rows that need `sbx-oci exec` are at the end, under "rows that need exec".

load helpers

PROFILES=$BATS_TEST_DIRNAME/../config/seccomp
# The probe also runs on the host: as a listener, a racer, a pty for TIOCSTI.
HOST_PROBE=$SBX_FIXTURES/rootfs/bin/probe

# Background helpers started on the host; teardown kills them (by pid) before the
# leak checks of helpers.bash, kept here as sbx_teardown.
BG_PIDS=()
eval "sbx_$(declare -f teardown)"
teardown() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	# host scratch directories of a test that failed half-way (host_scratch)
	rm -rf /tmp/sbx-esc-*-"$$"-*
	sbx_teardown
}

# bg LOG CMD...: run CMD on the host in the background (output to LOG).
bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 3>&- </dev/null &
	BG_PIDS+=($!)
	BG_LAST=$!
}

# stop_bg PID: kill one background helper now.
stop_bg() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 20; i++)); do
		"$@" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "timed out after ${t}s waiting for: $*" >&2
	return 1
}

# process.args = sh -c SCRIPT
set_script() {
	update_config --arg s "$1" '.process.args = ["sh", "-c", $s]'
}

use_profile() {
	update_config --slurpfile s "$PROFILES/$1.json" '.linux.seccomp = $s[0]'
}

# add_mount DEST TYPE SOURCE OPT...
add_mount() {
	local dest=$1 type=$2 src=$3 opts
	shift 3
	opts=$(printf '%s\n' "$@" | jq -R . | jq -s 'map(select(. != ""))')
	update_config --arg d "$dest" --arg t "$type" --arg s "$src" --argjson o "$opts" \
		'.mounts += [{"destination":$d,"type":$t,"source":$s,"options":$o}]'
}

# Drop the /dev tmpfs so the rootfs's own /dev is what the runtime works in.
no_dev_tmpfs() {
	update_config '.mounts |= map(select(.destination != "/dev"))'
}

# The sbx-oci default THREATS.md section 1b assumes: a user namespace, no
# capabilities, no_new_privs, the default seccomp profile, a read-only root and a
# writable work directory.
harden() {
	requires userns
	use_userns
	use_profile default
	update_config 'del(.process.capabilities) | .process.noNewPrivileges = true | .root.readonly = true'
	add_mount /work tmpfs tmpfs nosuid nodev size=4m mode=1777
}

# The pid of a container's init on the host.
container_pid() {
	"$SBX_OCI" --root "$SBX_ROOT" state "$1" | jq -r .pid
}

container_status() {
	"$SBX_OCI" --root "$SBX_ROOT" state "$1" 2>/dev/null | jq -r .status
}

is_stopped() {
	[ "$(container_status "$1")" = stopped ]
}

# A listing of a host directory that changes if anything in it does: names, types,
# modes, sizes, link targets, contents, and the directory's own inode and mtime.
dir_fingerprint() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
	stat -c '%i %Y %a' "$1"
}

# A fresh host directory outside every bundle, removed by the test itself (and by
# teardown when the test fails before it could).
host_scratch() {
	local d=/tmp/sbx-esc-$1-$$-$RANDOM
	mkdir "$d"
	echo "$d"
}

# Mount points the container may legitimately have: its root, the config's mounts,
# masked and readonly paths, and the device nodes the runtime binds.
expected_mount_points() {
	{
		echo /
		jq -r '.mounts[].destination, (.linux.maskedPaths // [])[], (.linux.readonlyPaths // [])[]' "$BUNDLE/config.json"
		printf '/dev/%s\n' null zero full random urandom tty console ptmx
	} | sort -u
}

# Every mount point in $1 (one per line) is an expected one (a cgroup mount on
# cgroup v1 is one mount per controller below its destination).
assert_only_expected_mounts() {
	local expected bad cg
	expected=$(expected_mount_points)
	cg=$(jq -r '.mounts[] | select(.type == "cgroup") | .destination' "$BUNDLE/config.json")
	bad=$(grep -vxF -f <(printf '%s\n' "$expected") <<<"$1" || true)
	[ -z "$cg" ] || bad=$(grep -v "^$cg/" <<<"$bad" || true)
	[ -z "$bad" ] || { echo "unexpected mounts in the container: $bad" >&2; return 1; }
}

# refute CMD...: fail when CMD succeeds (a bare "! CMD" never fails a bats test).
refute() {
	if "$@"; then return 1; fi
}

# The errno a syscall got is one of the words given.
assert_errno_in() {
	local got=$1 what=$2
	shift 2
	local e
	for e in "$@"; do [ "$got" = "$e" ] && return 0; done
	echo "$what: got '$got', expected one of: $*" >&2
	return 1
}

# ---------------------------------------------------------------------------------
# The container-side attacker of CVE-2019-5736 / CVE-2016-9962: `probe hunt` runs in
# container "$ID-hunter" (own pid namespace) and watches every process that enters
# that namespace; /shared is a host directory both it and the victims see.

start_hunter() {
	SHARED=$BATS_TEST_TMPDIR/shared
	mkdir -p "$SHARED"
	chmod 0777 "$SHARED"
	add_mount /shared bind "$SHARED" rbind rw
	set_script '/bin/probe hunt /shared >/shared/report 2>&1'
	sbx_detached run -d --bundle "$BUNDLE" "$ID-hunter"
	wait_for 10 grep -qx ready "$SHARED/report"
	HUNTER_PID=$(container_pid "$ID-hunter")
}

stop_hunter() {
	touch "$SHARED/stop"
	wait_for 70 grep -q '^done' "$SHARED/report"
	REPORT=$(cat "$SHARED/report")
	# the fds it listed and could not open are most of it, and the same every time
	local denied_fd='^fd [0-9]+ [0-9]+ ->  open=E[A-Z]+$'
	echo "hunter report, less $(grep -cE "$denied_fd" <<<"$REPORT") fds it listed and could not open:" >&2
	grep -vE "$denied_fd" <<<"$REPORT" >&2 || true
}

# What the hunter must never have managed, whatever the runtime did.
assert_hunter_got_nothing() {
	# the runtime binary was never open for writing
	refute grep -q '^WRITABLE' <<<"$REPORT"
	refute grep -q '^write [0-9]* ok$' <<<"$REPORT"
	# a process whose /proc/PID/exe it could not open (a runtime process, not dumpable)
	# could not be ptraced or read either, and none of its fds could be read or opened
	# (their numbers may be listed: that is the directory's mode, not ptrace access)
	# (what was seen of a process that exec'd the program or exited while it was being
	# looked at, its attach and fds, was the program's or a gone process's: probe hunt
	# says so, and they do not count)
	local bad
	bad=$(awk '
		/^pid .* (exec.d|exited) during the check$/ { execd[$2] = 1; next }
		/^pid / { pid = $2; denied = ($3 !~ /^exe=ok$/)
			if (denied && ($4 != "attach=EPERM" || ($5 != "vmread=EPERM" && $5 != "vmread=ESRCH")))
				bad[pid] = bad[pid] $0 "\n"
			next }
		/^fd / { if (denied && !(NF == 5 && $5 ~ /^open=E/)) bad[pid] = bad[pid] $0 "\n" }
		END { for (p in bad) if (!execd[p]) printf "%s", bad[p] }' <<<"$REPORT")
	[ -z "$bad" ] || { echo "the hunter reached a runtime process: $bad" >&2; return 1; }
}

# The pid of host process $1 inside the (innermost) pid namespace it is in.
ns_pid() {
	awk '/^NSpid:/ {print $NF}' "/proc/$1/status"
}

# A second bundle, sharing $BUNDLE's rootfs and config, whose container joins the
# pid namespace of host process $1 (containers of one pod sharing a pid namespace).
joining_bundle() {
	BUNDLE_B=$BATS_TEST_TMPDIR/bundle-b
	mkdir -p "$BUNDLE_B"
	jq --arg r "$BUNDLE/rootfs" --arg p "/proc/$1/ns/pid" \
		'.root.path = $r | .linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
		"$BUNDLE/config.json" >"$BUNDLE_B/config.json"
}

# =================================================================================
# 1a. Runtime CVEs and advisories
# =================================================================================

# tests/process.bats "init: non-dumpable until exec" opens /proc/<init>/exe from the
# host; here the attacker is a process inside the pid namespace the runtime's init
# enters, and the runtime binary is also made the container's program, the way the
# original exploit did it (entrypoint /proc/self/exe, or a #!/proc/self/exe script).
@test "CVE-2019-5736: a container process cannot open the runtime binary for writing through /proc/PID/exe" {
	local sum
	sum=$(sha256sum <"$SBX_OCI")
	start_hunter
	mkfifo -m 0666 "$SHARED/hold1" "$SHARED/hold2"
	# the #! line takes one argument: the runtime then blocks opening its log FIFO
	printf '#!/proc/self/exe --log=/shared/hold2\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 0755 "$BUNDLE/rootfs/bin/evil"
	joining_bundle "$HUNTER_PID"
	local v args pid seen_init=0
	for v in 1 2; do
		case $v in
		1) args='["/proc/self/exe", "--log", "/shared/hold1", "state", "x"]' ;;
		2) args='["/bin/evil"]' ;;
		esac
		jq --argjson a "$args" '.process.args = $a' "$BUNDLE_B/config.json" >"$BUNDLE_B/c" && mv "$BUNDLE_B/c" "$BUNDLE_B/config.json"
		sbx_split create --bundle "$BUNDLE_B" "$ID-b$v"
		if [ "$status" -ne 0 ]; then
			# refusing the program is a pass for this variant, with one clear error
			assert_one_line_error ""
			continue
		fi
		# between create and start the waiting init (the runtime binary) is in the
		# hunter's pid namespace: the hunter must see it and be denied
		pid=$(ns_pid "$(container_pid "$ID-b$v")")
		if wait_for 5 grep -q "^pid $pid exe=E" "$SHARED/report"; then
			seen_init=$((seen_init + 1))
		fi
		sbx_ok start "$ID-b$v"
		# the program runs until the hunter lets it go (after grabbing its exe)
		wait_for 15 is_stopped "$ID-b$v" || true
	done
	sleep 1 # the hunter retries the write-open while nothing executes the binary
	stop_hunter
	[ "$(sha256sum <"$SBX_OCI")" = "$sum" ]
	assert_hunter_got_nothing
	[ "$seen_init" -ge 1 ] || { echo "the hunter never saw a waiting init" >&2; false; }
}

# The same attack on a foreground `run` in a new pid namespace, the path that execs
# through the sealed trampoline instead of re-executing the runtime
# (runtime/container/exec_trampoline.h): whatever /proc/self/exe resolved to either ended at once
# (it was not the runtime) or, if it blocks opening its --log FIFO, its exe cannot be
# reopened for writing once it is gone. Exec'ing the host's binary directly fails here.
@test "CVE-2019-5736 (run): /proc/self/exe or #!/proc/self/exe as the program never gets a writable runtime binary" {
	local sum v pid runner h f
	sum=$(sha256sum <"$SBX_OCI")
	SHARED=$BATS_TEST_TMPDIR/shared
	mkdir -p "$SHARED"
	chmod 0777 "$SHARED"
	mkfifo -m 0666 "$SHARED/hold1" "$SHARED/hold2"
	add_mount /shared bind "$SHARED" rbind rw
	printf '#!/proc/self/exe --log=/shared/hold2\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 0755 "$BUNDLE/rootfs/bin/evil"
	for v in 1 2; do
		case $v in
		1) set_args /proc/self/exe --log /shared/hold1 state x ;;
		2) set_args /bin/evil ;;
		esac
		"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-$v" </dev/null >"$BATS_TEST_TMPDIR/run$v.log" 2>&1 &
		runner=$!
		# anything but the runtime ends at once; the runtime blocks opening its log
		for _ in $(seq 200); do
			kill -0 "$runner" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$runner" 2>/dev/null; then
			pid=$(container_pid "$ID-$v")
			exec {h}<"/proc/$pid/exe"
			exec {f}<>"$SHARED/hold$v" # lets it go (a reader and a writer at once)
			wait "$runner" || true
			exec {f}<&-
			# nothing runs the file now: only its mount or seals can refuse the write
			run python3 -c 'import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND))
    print("WRITABLE")
except OSError as e:
    print(errno.errorcode[e.errno])' "/proc/$$/fd/$h"
			exec {h}<&-
			echo "run $v: the program's exe reopened for writing: $output" >&2
			[[ "$output" == EROFS || "$output" == EPERM ]]
		else
			wait "$runner" || true
			echo "run $v ended: $(cat "$BATS_TEST_TMPDIR/run$v.log")" >&2
		fi
	done
	[ "$(sha256sum <"$SBX_OCI")" = "$sum" ]
}

# tests/namespaces.bats "mounts: CVE-2019-16884 ..." refuses a tmpfs on /proc/self;
# here /proc itself is replaced (tmpfs, or a host directory of fake files, as an
# image volume would), and the outcome is checked from the host: the protections
# that the runtime sets up must all be in force on the running process.
@test "CVE-2019-16884: a fake /proc cannot switch off seccomp, no_new_privs or oom_score_adj" {
	local fake=$BATS_TEST_TMPDIR/fakeproc
	mkdir -p "$fake/self/attr" "$fake/sys/kernel"
	echo unconfined >"$fake/self/attr/exec"
	echo 0 >"$fake/self/oom_score_adj"
	use_profile default
	update_config '.process.noNewPrivileges = true | .process.oomScoreAdj = 321'
	set_args sleep 100
	local base
	base=$(cat "$BUNDLE/config.json")
	local variant n=0
	for variant in tmpfs-proc bind-proc bind-proc-self-attr; do
		n=$((n + 1))
		echo "$base" >"$BUNDLE/config.json"
		case $variant in
		tmpfs-proc) update_config '.mounts |= map(if .destination == "/proc" then {"destination":"/proc","type":"tmpfs","source":"tmpfs","options":["rw"]} else . end)' ;;
		bind-proc) update_config --arg s "$fake" '.mounts |= map(if .destination == "/proc" then {"destination":"/proc","type":"bind","source":$s,"options":["rbind","rw"]} else . end)' ;;
		bind-proc-self-attr) add_mount /proc/self/attr bind "$fake/self/attr" rbind rw ;;
		esac
		sbx_split run -d --bundle "$BUNDLE" "$ID-$n"
		echo "$variant: status $status $stderr" >&2
		if [ "$status" -ne 0 ]; then
			assert_one_line_error "/proc"
			assert_no_state "$ID-$n"
			continue
		fi
		local pid
		pid=$(container_pid "$ID-$n")
		grep -qE '^Seccomp:[[:space:]]+2$' "/proc/$pid/status" || { echo "$variant: $(grep Seccomp: "/proc/$pid/status")" >&2; false; }
		grep -qE '^NoNewPrivs:[[:space:]]+1$' "/proc/$pid/status" || { echo "$variant: no_new_privs off" >&2; false; }
		[ "$(cat "/proc/$pid/oom_score_adj")" = 321 ] || { echo "$variant: oom_score_adj $(cat "/proc/$pid/oom_score_adj")" >&2; false; }
		sbx_ok delete --force "$ID-$n"
	done
	# the fake files were only ever data
	[ "$(cat "$fake/self/attr/exec")" = unconfined ]
	[ "$(cat "$fake/self/oom_score_adj")" = 0 ]
}

# The static refusal is also what the commit adding it tests; this one adds host
# targets (absolute and climbing) and the race the CVE turned into with a shared
# volume: a host loop swaps rootfs/proc between a directory and a symlink.
@test "CVE-2019-19921 / CVE-2023-27561 / CVE-2023-28642: a symlinked /proc or /sys is refused; nothing is mounted where it points" {
	local host
	host=$(host_scratch proc)
	local before
	before=$(dir_fingerprint "$host")
	mkdir -p "$BUNDLE/rootfs/bad-proc" "$BUNDLE/rootfs/bad-sys"
	local dir target
	for dir in proc sys; do
		for target in "/bad-$dir" "$host" "../../../../../../../../..$host"; do
			mv "$BUNDLE/rootfs/$dir" "$BUNDLE/rootfs/$dir.real"
			ln -s "$target" "$BUNDLE/rootfs/$dir"
			set_args /bin/true
			sbx_split run --bundle "$BUNDLE" "$ID"
			rm "$BUNDLE/rootfs/$dir"
			mv "$BUNDLE/rootfs/$dir.real" "$BUNDLE/rootfs/$dir"
			assert_one_line_error "/$dir" || { echo "(/$dir -> $target)" >&2; false; }
			assert_no_state "$ID"
			[ -z "$(ls -A "$BUNDLE/rootfs/bad-$dir")" ]
			[ "$(dir_fingerprint "$host")" = "$before" ]
		done
	done
	# the race: /proc flips between the real directory and a symlink to /bad-proc
	ln -s /bad-proc "$BUNDLE/rootfs/proc-link"
	bg "$BATS_TEST_TMPDIR/racer.log" "$HOST_PROBE" swap "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/proc-link"
	local racer=$BG_LAST i ok=0
	# (the racer keeps going while the container runs: its /proc may be renamed away
	# under it, then the files are simply not found)
	set_script 'for f in /proc/keys /proc/timer_list; do echo "$f $(/bin/probe stat $f) $(/bin/probe read $f)"; done
		echo "core_pattern $(/bin/probe write /proc/sys/kernel/core_pattern)"
		awk "\$9 == \"proc\" {print \"procfs at \" \$5}" /proc/self/mountinfo'
	for i in $(seq 100); do
		sbx_split run --bundle "$BUNDLE" "$ID-r$i"
		if [ "$status" -eq 0 ]; then
			ok=$((ok + 1))
			[ -z "$(grep -vE '^/proc/(keys|timer_list) (char 1:3 [0-7]+ [0-9]+:[0-9]+|ENOENT) (0|ENOENT)$|^core_pattern (EROFS|ENOENT)$|^procfs at ' <<<"$stdout")" ] ||
				{ echo "run $i: masks missed: $stdout" >&2; stop_bg "$racer"; false; }
		else
			assert_one_line_error "/proc" || { stop_bg "$racer"; false; }
		fi
		assert_no_state "$ID-r$i"
	done
	stop_bg "$racer"
	echo "race: $ok of 100 runs went ahead" >&2
	[ -z "$(ls -A "$BUNDLE/rootfs/bad-proc")" ]
	[ "$(dir_fingerprint "$host")" = "$before" ]
	rm -rf "$host"
}

# tests/mounts.bats "destination through an absolute symlink in the rootfs ..." is
# the static case; this is the race: a host loop swaps the destination's parent
# between a directory and a symlink to a host directory while containers start.
@test "CVE-2021-30465: a mount destination swapped for a symlink mid-setup never lands outside the rootfs" {
	local host
	host=$(host_scratch 30465)
	echo marker >"$host/file"
	local before
	before=$(dir_fingerprint "$host")
	mkdir -p "$BUNDLE/rootfs/work/a/x"
	ln -s "$host" "$BUNDLE/rootfs/work/b"
	add_mount /work/a/x tmpfs tmpfs size=1m
	set_args /bin/true
	bg "$BATS_TEST_TMPDIR/racer.log" "$HOST_PROBE" swap "$BUNDLE/rootfs/work/a" "$BUNDLE/rootfs/work/b"
	local racer=$BG_LAST i ok=0 mounts
	mounts=$(host_mount_count)
	for i in $(seq "${SBX_ROUNDS:-200}"); do
		sbx_split run --bundle "$BUNDLE" "$ID-$i"
		[ "$status" -eq 0 ] && ok=$((ok + 1))
		[ "$(dir_fingerprint "$host")" = "$before" ] || { echo "run $i: the host directory changed" >&2; stop_bg "$racer"; false; }
		[ "$status" -eq 0 ] || [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || { echo "run $i: $stderr" >&2; stop_bg "$racer"; false; }
		[ "$(host_mount_count)" = "$mounts" ] || { echo "run $i: host mount count changed" >&2; stop_bg "$racer"; false; }
		assert_no_state "$ID-$i"
	done
	stop_bg "$racer"
	echo "race: $ok of ${SBX_ROUNDS:-200} runs went ahead" >&2
	local after
	after=$(dir_fingerprint "$host")
	rm -rf "$host"
	[ "$after" = "$before" ]
}

# tests/mounts.bats has the two CVE-2024-45310 directory cases (a missing host path
# below a symlinked parent). Here the last component itself is a dangling symlink
# to a host path: creating the mount target (a file for a file bind, a directory for
# a tmpfs) with O_CREAT or mkdir would follow it onto the host.
@test "CVE-2024-45310: a mount target that is a dangling symlink to a host path does not create that path" {
	local name=sbx-esc-45310-$$-$RANDOM
	echo content >"$BATS_TEST_TMPDIR/src-file"
	local base
	base=$(cat "$BUNDLE/config.json")
	set_args /bin/true
	local v
	# one at a time, so an error on one does not keep the next from being tried
	for v in file-bind dir-tmpfs relative-dir-tmpfs; do
		echo "$base" >"$BUNDLE/config.json"
		set_args /bin/true
		rm -f "$BUNDLE/rootfs/work/t"
		case $v in
		file-bind)
			ln -s "/tmp/$name-file" "$BUNDLE/rootfs/work/t"
			add_mount /work/t bind "$BATS_TEST_TMPDIR/src-file" bind ro ;;
		dir-tmpfs)
			ln -s "/tmp/$name-dir" "$BUNDLE/rootfs/work/t"
			add_mount /work/t tmpfs tmpfs size=1m ;;
		relative-dir-tmpfs)
			ln -s "../../../../../../../../tmp/$name-rel" "$BUNDLE/rootfs/work/t"
			add_mount /work/t tmpfs tmpfs size=1m ;;
		esac
		sbx_split run --bundle "$BUNDLE" "$ID-$v"
		echo "$v: status $status $stderr" >&2
		local leaked
		leaked=$(ls -d "/tmp/$name"* 2>/dev/null || true)
		rm -rf "/tmp/$name"*
		[ -z "$leaked" ] || { echo "$v: created on the host: $leaked" >&2; false; }
		[ "$status" -eq 0 ] || [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
		assert_no_state "$ID-$v"
	done
}

# The file-capability half of the CVE: a binary with *inheritable-only* file caps
# gains a capability exactly when the process's inheritable set holds it.
@test "CVE-2022-29162 / CVE-2022-27650: no inheritable capabilities unless asked, so an inheritable file cap gives nothing" {
	command -v setcap >/dev/null || skip "setcap is not installed"
	cp "$BUNDLE/rootfs/bin/probe" "$BUNDLE/rootfs/bin/probe-inh"
	setcap cap_net_raw+ei "$BUNDLE/rootfs/bin/probe-inh"
	update_config '.process.user = {"uid": 1000, "gid": 1000} | .process.noNewPrivileges = false'
	set_script 'grep ^CapInh: /proc/self/status; /bin/probe-inh syscall socket 2 3 1; /bin/probe-inh cat /proc/self/status | grep -E "^Cap(Prm|Eff):"'
	# 1. bounding/permitted/effective hold CAP_NET_RAW, inheritable is not given
	update_config '.process.capabilities = {"bounding":["CAP_NET_RAW","CAP_KILL"],"permitted":["CAP_NET_RAW","CAP_KILL"],"effective":["CAP_NET_RAW","CAP_KILL"]}'
	sbx run --bundle "$BUNDLE" "$ID-1"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^CapInh:[[:space:]]+0+$ ]]
	[ "${lines[1]}" = EPERM ]
	[[ "${lines[2]}" =~ ^CapPrm:[[:space:]]+0+$ ]]
	[[ "${lines[3]}" =~ ^CapEff:[[:space:]]+0+$ ]]
	# 2. inheritable asks for a capability the bounding set does not have: refused,
	# or the capability is not inheritable
	update_config '.process.capabilities = {"bounding":["CAP_KILL"],"permitted":["CAP_KILL"],"effective":["CAP_KILL"],"inheritable":["CAP_NET_RAW"]}'
	sbx_split run --bundle "$BUNDLE" "$ID-2"
	if [ "$status" -eq 0 ]; then
		[ "$(sed -n 2p <<<"$stdout")" = EPERM ] || { echo "gained CAP_NET_RAW outside the bounding set: $stdout" >&2; false; }
		local inh
		inh=$(awk '/^CapInh:/ {print $2}' <<<"$stdout")
		[ $((0x$inh & (1 << 13))) -eq 0 ]
	else
		assert_one_line_error "CAP_NET_RAW"
	fi
	# 3. control: asked for explicitly (inheritable and bounding), the file cap works,
	# so the EPERM above is the runtime's doing
	update_config '.process.capabilities = {"bounding":["CAP_NET_RAW"],"permitted":["CAP_NET_RAW"],"effective":["CAP_NET_RAW"],"inheritable":["CAP_NET_RAW"]}'
	sbx run --bundle "$BUNDLE" "$ID-3"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = ok ]
}

# tests/cgroups.bats checks the default config's /sys/fs/cgroup is read-only; the CVE
# is the user-namespace-without-cgroupns case, so both are attacked here, with writes
# and mkdirs, and the host's files are compared.
@test "CVE-2023-25809: /sys/fs/cgroup is read-only in the container, with or without a cgroup namespace" {
	requires userns
	local name=esc-$$-$RANDOM
	local host_files
	# a run leaves its cgroup's parent (/sbx-oci, with its files): made before the snapshot
	sbx run --bundle "$BUNDLE" "$ID-pre"
	[ "$status" -eq 0 ]
	host_files=$(find /sys/fs/cgroup -maxdepth 2 \( -name release_agent -o -name notify_on_release -o -name cgroup.subtree_control \) -exec sh -c 'echo "$1 $(cat "$1" 2>/dev/null)"' _ {} \; | sort)
	set_script "awk '\$2 ~ \"^/sys/fs/cgroup\" {print \"mount \" \$2 \" \" \$4}' /proc/self/mounts
		for f in \$(find /sys/fs/cgroup -maxdepth 2 \\( -name memory.max -o -name memory.limit_in_bytes -o -name cgroup.procs -o -name release_agent -o -name notify_on_release -o -name pids.max \\)); do
			echo \"write \$f \$(/bin/probe write \$f)\"
		done
		for d in /sys/fs/cgroup /sys/fs/cgroup/*/; do
			mkdir \"\$d/$name\" 2>/dev/null && echo \"mkdir \$d ok\" || echo \"mkdir \$d failed\"
		done"
	local base
	base=$(cat "$BUNDLE/config.json")
	local variant
	for variant in cgroupns userns-no-cgroupns; do
		echo "$base" >"$BUNDLE/config.json"
		if [ "$variant" = userns-no-cgroupns ]; then
			use_userns
			update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
		fi
		sbx run --bundle "$BUNDLE" "$ID-$variant"
		echo "$variant: $output" >&2
		local leaked
		leaked=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$name" 2>/dev/null || true)
		[ -z "$leaked" ] || { echo "$leaked" | xargs -r rmdir; echo "$variant: created host cgroups $leaked" >&2; false; }
		[ "$status" -eq 0 ]
		grep -q '^mount ' <<<"$output"
		[ -z "$(grep '^mount ' <<<"$output" | grep -vE '^mount [^ ]+ (ro|.*,ro)(,|$)')" ]
		grep -q '^write ' <<<"$output"
		[ -z "$(grep '^write ' <<<"$output" | grep -vE ' (EROFS|EACCES|EPERM)$')" ]
		refute grep -q '^mkdir .* ok$' <<<"$output"
	done
	[ "$(find /sys/fs/cgroup -maxdepth 2 \( -name release_agent -o -name notify_on_release -o -name cgroup.subtree_control \) -exec sh -c 'echo "$1 $(cat "$1" 2>/dev/null)"' _ {} \; | sort)" = "$host_files" ]
}

# tests/process.bats checks cwd=/proc/self/fd/N (3..12) by the path printed and that
# the waiting init holds no directory; here the container also tries to climb from
# that cwd to a host marker, for every fd up to 32, and every fd the waiting init
# holds must be one of the kinds the runtime needs.
@test "CVE-2024-21626: process.cwd /proc/self/fd/N never gives a host cwd; the waiting init holds only expected fds" {
	local host
	host=$(host_scratch 21626)
	echo host-secret >"$host/marker"
	local n
	for n in $(seq 3 32); do
		update_config --arg c "/proc/self/fd/$n" '.process.cwd = $c'
		set_args /bin/probe read "../../../../../../../../../..$host/marker"
		sbx_split run --bundle "$BUNDLE" "$ID-$n"
		if [ "$status" -eq 0 ]; then
			[ "$stdout" = ENOENT ] || { echo "fd $n: read the host marker through the cwd: $stdout" >&2; rm -rf "$host"; false; }
		else
			[ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
		fi
		assert_no_state "$ID-$n"
	done
	rm -rf "$host"
	update_config '.process.cwd = "/"'
	set_args sleep 100
	# the caller has a stray fd open on a host file, as a careless client would
	exec 7>>"$BATS_TEST_TMPDIR/stray"
	sbx_detached create --bundle "$BUNDLE" "$ID"
	exec 7>&-
	local pid fd target bad=""
	pid=$(container_pid "$ID")
	for fd in /proc/$pid/fd/*; do
		[ "${fd##*/}" -gt 2 ] || continue
		target=$(readlink "$fd")
		case $target in
		pipe:* | socket:* | anon_inode:* | /memfd:* | /dev/null | "$SBX_ROOT/$ID/exec.fifo") ;;
		*) bad="$bad ${fd##*/}->$target" ;;
		esac
	done
	[ -z "$bad" ] || { echo "the waiting init holds:$bad" >&2; false; }
}

# tests/devices.bats covers a rootfs /dev/null symlink without a /dev tmpfs and a
# config bind at /dev/null (static). This is the race form: /dev is a host directory
# (a shared volume) and a host loop keeps swapping dev/null with a symlink to
# /proc/sys/kernel/core_pattern while containers start; the masks must stay 1:3.
@test "CVE-2025-31133: /dev/null swapped for a symlink to core_pattern during setup never becomes a mask" {
	local before
	before=$(cat /proc/sys/kernel/core_pattern)
	local devdir=$BATS_TEST_TMPDIR/devdir
	mkdir "$devdir"
	mknod -m 0666 "$devdir/null" c 1 3
	ln -s /proc/sys/kernel/core_pattern "$devdir/null.evil"
	update_config --arg s "$devdir" '.mounts |= map(if .destination == "/dev" then {"destination":"/dev","type":"bind","source":$s,"options":["rbind","rw"]} else . end)'
	set_script '/bin/probe stat /proc/keys; /bin/probe read /proc/keys; /bin/probe stat /proc/timer_list; /bin/probe write /proc/sys/kernel/core_pattern; true'
	bg "$BATS_TEST_TMPDIR/racer.log" "$HOST_PROBE" swap "$devdir/null" "$devdir/null.evil"
	local racer=$BG_LAST i ok=0
	for i in $(seq 100); do
		sbx_split run --bundle "$BUNDLE" "$ID-$i"
		if [ "$status" -eq 0 ]; then
			ok=$((ok + 1))
			[[ "$(sed -n 1p <<<"$stdout")" == "char 1:3 "* ]] || { echo "run $i: /proc/keys is $stdout" >&2; stop_bg "$racer"; false; }
			[ "$(sed -n 2p <<<"$stdout")" = 0 ] || { echo "run $i: /proc/keys readable: $stdout" >&2; stop_bg "$racer"; false; }
			[[ "$(sed -n 3p <<<"$stdout")" == "char 1:3 "* ]] || { echo "run $i: /proc/timer_list is $stdout" >&2; stop_bg "$racer"; false; }
			assert_errno_in "$(sed -n 4p <<<"$stdout")" "run $i: core_pattern" EROFS EACCES || { stop_bg "$racer"; false; }
		else
			[ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || { echo "run $i: $stderr" >&2; stop_bg "$racer"; false; }
		fi
		assert_no_state "$ID-$i"
	done
	stop_bg "$racer"
	echo "race: $ok of 100 runs went ahead" >&2
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ]
	# the symlink was never followed for writing
	[ -L "$devdir/null" ] || [ -L "$devdir/null.evil" ]
}

start_recvtty() {
	SOCK=$BATS_TEST_TMPDIR/console.sock
	rm -f "$SOCK" # a stale socket of an earlier receiver would pass the wait below at once
	bg "$BATS_TEST_TMPDIR/tty.out" "$SBX_FIXTURES/recvtty" "$SOCK" "$1"
	RECV=$BG_LAST
	wait_for 5 test -S "$SOCK"
}

wait_recvtty() {
	wait_for 10 sh -c "! kill -0 $RECV" || true
	stop_bg "$RECV"
	cat "$BATS_TEST_TMPDIR/tty.out"
}

@test "CVE-2025-52565: a rootfs /dev/console, /dev/ptmx or /dev/pts/N symlinked into /proc does not become the console" {
	local before
	before=$(cat /proc/sys/kernel/core_pattern)
	no_dev_tmpfs
	mkdir -p "$BUNDLE/rootfs/dev/pts"
	update_config '.process.terminal = true'
	set_script 'echo "console $(/bin/probe stat /dev/console)"; echo "tty $(/bin/probe stat "$(tty)")"
		echo "core_pattern $(/bin/probe write /proc/sys/kernel/core_pattern)"
		awk "\$5 == \"/proc/sys\" {print \"procsys \" \$6}" /proc/self/mountinfo'
	local v
	for v in console ptmx pts/0 pts/ptmx; do
		rm -f "$BUNDLE/rootfs/dev/console" "$BUNDLE/rootfs/dev/ptmx" "$BUNDLE/rootfs/dev/pts/0" "$BUNDLE/rootfs/dev/pts/ptmx"
		ln -s /proc/sys/kernel/core_pattern "$BUNDLE/rootfs/dev/$v"
		start_recvtty ""
		sbx_split create --bundle "$BUNDLE" --console-socket "$SOCK" "$ID-${v/\//-}"
		echo "$v: create status $status $stderr" >&2
		if [ "$status" -ne 0 ]; then
			assert_one_line_error "/dev"
			assert_no_state "$ID-${v/\//-}"
			stop_bg "$RECV"
		else
			sbx_ok start "$ID-${v/\//-}"
			local out
			out=$(wait_recvtty)
			echo "$out" >&2
			grep -qE '^console char 136:[0-9]+ ' <<<"$out"
			grep -qE '^tty char 136:[0-9]+ ' <<<"$out"
			grep -qE '^core_pattern (EROFS|EACCES)' <<<"$out"
			grep -qE '^procsys ro(,|$)' <<<"$out"
		fi
		[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ]
		# the planted symlink is still a symlink (nothing was created through it)
		[ -L "$BUNDLE/rootfs/dev/$v" ]
	done
}

# tests/namespaces.bats refuses a tmpfs over /proc/sys/net. Here /proc as a whole is a
# host directory whose sys/net/ipv4/ip_forward is a symlink to a host file: a sysctl
# write that went through the container's /proc would land in that file.
@test "CVE-2025-52881: sysctls are written to the container's own procfs, never through a fake /proc" {
	local host
	host=$(host_scratch 52881)
	echo untouched >"$host/target"
	local fake=$BATS_TEST_TMPDIR/fakeproc
	mkdir -p "$fake/sys/net/ipv4"
	ln -s "$host/target" "$fake/sys/net/ipv4/ip_forward"
	local before want
	before=$(cat /proc/sys/net/ipv4/ip_forward)
	want=$((1 - before))
	update_config --arg v "$want" --arg s "$fake" '.linux.sysctl = {"net.ipv4.ip_forward": $v} | .process.oomScoreAdj = 222
		| .mounts |= map(if .destination == "/proc" then {"destination":"/proc","type":"bind","source":$s,"options":["rbind","rw"]} else . end)'
	set_args sleep 100
	sbx_split run -d --bundle "$BUNDLE" "$ID"
	echo "run: status $status $stderr" >&2
	if [ "$status" -eq 0 ]; then
		local pid
		pid=$(container_pid "$ID")
		[ "$(nsenter -n -t "$pid" cat /proc/sys/net/ipv4/ip_forward)" = "$want" ]
		[ "$(cat "/proc/$pid/oom_score_adj")" = 222 ]
	else
		assert_one_line_error "/proc"
		assert_no_state "$ID"
	fi
	local target
	target=$(cat "$host/target")
	rm -rf "$host"
	[ "$target" = untouched ]
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$before" ]
	[ -L "$fake/sys/net/ipv4/ip_forward" ]
}

# tests/devices.bats: rootfs /dev itself symlinked to a host directory (4 tests).
# Here /dev is a real directory, but the entries the runtime creates or mounts on
# inside it (fd, stdin, ptmx, shm, mqueue, pts, zero) are symlinks to host paths.
@test "CVE-2026-41579: symlinks inside the rootfs /dev to host paths are never written through" {
	local h1 h2
	h1=$(host_scratch 41579a)
	h2=$(host_scratch 41579b)
	echo marker >"$h1/ptmx"
	touch -d 2001-01-01 "$h1/ptmx" "$h1" "$h2"
	local b1 b2
	b1=$(dir_fingerprint "$h1")
	b2=$(dir_fingerprint "$h2")
	no_dev_tmpfs
	set_args /bin/true
	local d=$BUNDLE/rootfs/dev entry name target
	# one entry at a time, so a refusal of one does not keep the others from being tried
	for entry in "ptmx $h1/ptmx" "fd $h1" "stdin $h1/stdin" "zero $h1/zero" "null $h1/null" "shm $h2" \
		"mqueue ../../../../../../../..$h2" "pts $h2/pts" "console $h1/console"; do
		read -r name target <<<"$entry"
		rm -rf "${d:?}"/*
		mkdir -p "$d/pts" "$d/shm" "$d/mqueue"
		rm -rf "${d:?}/$name"
		ln -s "$target" "$d/$name"
		sbx_split run --bundle "$BUNDLE" "$ID-$name"
		echo "/dev/$name -> $target: status $status $stderr" >&2
		local a1 a2
		a1=$(dir_fingerprint "$h1")
		a2=$(dir_fingerprint "$h2")
		[ "$a1" = "$b1" ] && [ "$a2" = "$b2" ] || { echo "host dir changed through /dev/$name: $a1 $a2" >&2; rm -rf "$h1" "$h2"; false; }
		[ "$status" -eq 0 ] || [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
		assert_no_state "$ID-$name"
	done
	rm -rf "$h1" "$h2"
}

# tests/bad-input.bats refuses bad ids for create/run/state/kill/delete/start. Here:
# the other commands that take an id, and a valid id whose state entry is a symlink
# planted in the state root, pointing at a directory the runtime must not touch.
@test "container id as a path (crun 432a66d9, #1646): every other command refuses bad ids; a symlinked state entry is not followed" {
	mkdir -p "$SBX_ROOT"
	mkdir "$BATS_TEST_TMPDIR/canary"
	echo keep >"$BATS_TEST_TMPDIR/canary/file"
	echo keep >"$SBX_ROOT/../canary.txt"
	local before
	before=$(dir_fingerprint "$BATS_TEST_TMPDIR/canary")
	local id cmd long
	long=$(head -c 1024 /dev/zero | tr '\0' x)
	for id in .. . a/b "$BATS_TEST_TMPDIR/canary" "" -rf $'a\nb' "$long" ../canary; do
		for cmd in pause resume ps events update; do
			if [ "$cmd" = update ]; then
				sbx_split update --memory 1000000 -- "$id"
			else
				sbx_split "$cmd" -- "$id"
			fi
			assert_one_line_error "invalid container id" || { echo "($cmd '$id')" >&2; false; }
		done
	done
	[ "$(dir_fingerprint "$BATS_TEST_TMPDIR/canary")" = "$before" ]
	[ "$(cat "$SBX_ROOT/../canary.txt")" = keep ]
	# a valid id whose entry in the state root is a symlink to the canary directory
	ln -s "$BATS_TEST_TMPDIR/canary" "$SBX_ROOT/victim"
	for cmd in state "kill" "delete" "delete --force" pause resume ps events; do
		# shellcheck disable=SC2086
		sbx_split $cmd victim
		[ "$status" -ne 0 ] || [ "$cmd" = "delete --force" ] || { echo "$cmd victim succeeded" >&2; false; }
	done
	[ "$(dir_fingerprint "$BATS_TEST_TMPDIR/canary")" = "$before" ]
	rm -f "$SBX_ROOT/victim"
}

# runc's --no-pivot left the host's mounts (with a fully visible host /proc) in the
# container's mount namespace, so a nested user+mount+pid namespace could mount a
# fresh, unmasked procfs. Tried with and without --no-pivot, without seccomp, so
# only the runtime's mount hygiene stands in the way.
@test "runc#2647 (no_pivot): a nested user namespace cannot mount an unmasked procfs; no host mount is left" {
	set_script '/bin/probe nest-proc /work; echo ---; awk "{print \$5}" /proc/self/mountinfo'
	local mode
	for mode in pivot no-pivot; do
		local flag=""
		[ "$mode" = no-pivot ] && flag=--no-pivot
		# shellcheck disable=SC2086
		sbx_split run $flag --bundle "$BUNDLE" "$ID-$mode"
		echo "$mode: $stdout $stderr" >&2
		[ "$status" -eq 0 ]
		local result mounts
		result=$(sed '/^---$/,$d' <<<"$stdout")
		mounts=$(sed '1,/^---$/d' <<<"$stdout")
		if [[ "$result" == "unshare ok"* ]]; then
			assert_errno_in "$(sed -n 's/^mount //p' <<<"$result")" "$mode: mount proc" EPERM EACCES
		else
			assert_errno_in "$(sed -n 's/^unshare //p' <<<"$result")" "$mode: unshare" EPERM
		fi
		assert_only_expected_mounts "$mounts"
	done
}

# The Kata bugs: teardown followed a symlink the guest had put where a mount point
# was. The container moves /work (holding the mount point /work/m) away and puts a
# symlink to / in its place, then the container is deleted.
@test "Kata CVE-2020-2026 / CVE-2020-2024: a mount point replaced by a symlink to / before delete: host mounts and files untouched" {
	update_config '.root.readonly = false'
	add_mount /work/m tmpfs tmpfs size=1m
	set_script 'mv /work /work.old && ln -s / /work && touch /work.old/swapped; sleep 100'
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	wait_for 10 test -e "$BUNDLE/rootfs/work.old/swapped"
	[ -L "$BUNDLE/rootfs/work" ]
	local mounts root_listing
	mounts=$(awk '{print $5}' /proc/self/mountinfo | sort)
	root_listing=$(ls -A /)
	sbx_ok delete --force "$ID"
	[ "$(awk '{print $5}' /proc/self/mountinfo | sort)" = "$mounts" ]
	[ "$(ls -A /)" = "$root_listing" ]
	[ -L "$BUNDLE/rootfs/work" ]
	[ -d "$BUNDLE/rootfs/work.old/m" ]
	[ -e "$BUNDLE/rootfs/work.old/swapped" ]
}

@test "CVE-2020-15257: an abstract unix socket of the host is unreachable from the container's network namespace" {
	local name=sbx-esc-$$-$RANDOM
	bg "$BATS_TEST_TMPDIR/listener.log" "$HOST_PROBE" listen "@$name"
	wait_for 5 grep -qx listening "$BATS_TEST_TMPDIR/listener.log"
	# control: the socket answers on the host
	[ "$("$HOST_PROBE" connect "@$name")" = ok ]
	set_script "/bin/probe connect @$name; grep -c '@$name' /proc/net/unix"
	sbx run --bundle "$BUNDLE" "$ID"
	[ "${lines[0]}" = ECONNREFUSED ]
	[ "${lines[1]}" = 0 ]
}

@test "CVE-2021-41133: the new mount API (fsopen, fsmount, move_mount, open_tree, fspick, mount_setattr) is refused" {
	harden
	# numbers as in the THREATS row: 428 open_tree, 429 move_mount, 430 fsopen,
	# 431 fsconfig, 432 fsmount, 433 fspick, 442 mount_setattr; real arguments
	# where the call takes a path, so only a refusal stops it
	set_script 'echo "fsopen $(/bin/probe syscall fsopen s:tmpfs 0)"
		echo "open_tree $(/bin/probe syscall-nr 428 -100 s:/work 1)"
		echo "move_mount $(/bin/probe syscall-nr 429 -100 s:/work -100 s:/tmp 4)"
		echo "fsopen-nr $(/bin/probe syscall-nr 430 s:proc 0)"
		echo "fsconfig $(/bin/probe syscall-nr 431 -1 6 0 0 0)"
		echo "fsmount $(/bin/probe syscall-nr 432 -1 0 0)"
		echo "fspick $(/bin/probe syscall-nr 433 -100 s:/proc 0)"
		echo "mount_setattr $(/bin/probe syscall-nr 442 -100 s:/ 0 z: 32)"
		echo "unshare $(/bin/probe unshare-user)"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	local call
	for call in fsopen open_tree move_mount fsopen-nr fsconfig fsmount fspick mount_setattr unshare; do
		assert_errno_in "$(awk -v c="$call" '$1 == c {print $2}' <<<"$output")" "$call" EPERM ENOSYS
	done
}

# tests/seccomp.bats checks the filter's answer with bad arguments, and
# tests/terminal.bats that /dev/tty is ENXIO. Here the terminal is real: the
# container's stdin is a pty that is the controlling terminal of the shell that
# started sbx-oci, and no seccomp profile is set, so only the runtime's new session
# keeps TIOCSTI from typing into that shell. `probe pty-run` reports what arrived.
@test "CVE-2017-5226 / CVE-2019-10063 / CVE-2023-28100: TIOCSTI cannot push input into the caller's terminal" {
	# control: a process on that terminal can inject (so "input none" below means something)
	run "$HOST_PROBE" pty-run "$BATS_TEST_TMPDIR/ctl.out" "$HOST_PROBE" tiocsti
	[[ "$output" == "input got "* ]] || { echo "control: $output $(cat "$BATS_TEST_TMPDIR/ctl.out")" >&2; false; }
	set_script '/bin/probe tiocsti; /bin/probe read /dev/tty'
	local profile
	for profile in none default; do
		[ "$profile" = none ] || use_profile "$profile"
		run "$HOST_PROBE" pty-run "$BATS_TEST_TMPDIR/out" "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-$profile"
		local out
		out=$(cat "$BATS_TEST_TMPDIR/out")
		echo "$profile: $output / $out" >&2
		[ "$output" = "input none" ]
		grep -qE '^sti EPERM sti-hi EPERM linux (EPERM|ENOTTY|EINVAL)$' <<<"$out"
		[ "$(sed -n 2p <<<"$out")" = ENXIO ]
	done
}

@test "CVE-2020-5291: sbx-oci is not setuid and nothing in the build installs it setuid" {
	local mode
	mode=$(stat -c %a "$SBX_OCI")
	# no setuid/setgid bit, not writable by group or others
	[ $((8#$mode & 8#6022)) -eq 0 ] || { echo "$SBX_OCI has mode $mode" >&2; false; }
	[ "$(stat -c %u "$SBX_OCI")" = "$(id -u)" ] || [ "$(stat -c %u "$SBX_OCI")" = 0 ]
	# the build installs it with the default program mode: no hook or rule sets s-bits
	refute grep -niE 'chmod[^#]*(u\+s|g\+s|[0-7]*[4-7][0-7]{3})|INSTALL[^#]*-m *[0-7]*[4-7][0-7]{3}' "$BATS_TEST_DIRNAME/../Makefile.am"
}

# The bubblewrap CVE was a setuid helper letting users do more than they could
# without it. sbx-oci is never meant to be setuid, but an admin's chmod u+s must not
# turn it into a root container launcher for every local user.
@test "CVE-2020-5291 (defence in depth): a setuid-root copy run by an unprivileged user does not run containers as root" {
	local suid=$BATS_TEST_TMPDIR/suid
	mkdir -p "$suid"
	cp "$SBX_OCI" "$suid/sbx-oci"
	chmod 4755 "$suid/sbx-oci"
	echo "root-only-secret" >"$BATS_TEST_TMPDIR/secret"
	chmod 0600 "$BATS_TEST_TMPDIR/secret"
	update_config --arg s "$BATS_TEST_TMPDIR/secret" '.mounts += [{"destination":"/secret","type":"bind","source":$s,"options":["bind","ro"]}]'
	set_args cat /secret
	local d=$BATS_TEST_TMPDIR
	while [ "$d" != / ]; do
		chmod o+rx "$d"
		d=$(dirname "$d")
	done
	chmod -R o+rX "$BUNDLE"
	mkdir -m 0777 "$BATS_TEST_TMPDIR/nobody-state"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$suid/sbx-oci" --root "$BATS_TEST_TMPDIR/nobody-state" run --bundle "$BUNDLE" "$ID"
	echo "setuid copy as nobody: status $status: $output" >&2
	local c
	for c in $("$SBX_OCI" --root "$BATS_TEST_TMPDIR/nobody-state" list -q 2>/dev/null); do
		"$SBX_OCI" --root "$BATS_TEST_TMPDIR/nobody-state" delete --force "$c" || true
	done
	[[ "$output" != *root-only-secret* ]]
	[ "$status" -ne 0 ]
}

@test "CVE-2018-19333: the container's ipc namespace shows no host SysV shared memory" {
	local shmid
	shmid=$(ipcmk -M 4096 | awk '{print $NF}')
	[ -n "$shmid" ]
	set_script "wc -l </proc/sysvipc/shm; /bin/probe syscall shmat $shmid 0 0; true"
	sbx run --bundle "$BUNDLE" "$ID"
	ipcrm -m "$shmid"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ] # the header line only
	[ "${lines[1]}" = EINVAL ]
}

# tests/bad-input.bats refuses a missing rootfs and a rootfs that is a file; here the
# rootfs is empty or a dangling symlink, and the program would be found on the host
# if the runtime ever fell back to a host path.
@test "Kata CVE-2026-24834 / CVE-2026-24054: an empty or missing rootfs is a clean error, never a host path" {
	local marker=/tmp/sbx-esc-kata-$$-$RANDOM
	set_args /bin/sh -c "touch $marker"
	rm -rf "$BUNDLE/rootfs"
	mkdir "$BUNDLE/rootfs"
	sbx_split run --bundle "$BUNDLE" "$ID-empty"
	[ "$status" -eq 127 ]
	assert_one_line_error "/bin/sh"
	update_config '.process.args = ["sh", "-c", "true"]'
	sbx_split run --bundle "$BUNDLE" "$ID-path"
	[ "$status" -eq 127 ]
	assert_one_line_error "sh"
	rm -rf "$BUNDLE/rootfs"
	ln -s "$BATS_TEST_TMPDIR/no-such-rootfs" "$BUNDLE/rootfs"
	sbx_split run --bundle "$BUNDLE" "$ID-dangling"
	assert_one_line_error "rootfs"
	rm "$BUNDLE/rootfs"
	sbx_split run --bundle "$BUNDLE" "$ID-missing"
	assert_one_line_error "rootfs"
	[ ! -e "$marker" ] || { rm -f "$marker"; echo "a host program ran" >&2; false; }
	for c in empty path dangling missing; do assert_no_state "$ID-$c"; done
}

# =================================================================================
# 1b. Classic sandbox-escape primitives, under the sbx-oci default (harden)
# =================================================================================

# The terminal here is the container's own pty and its controlling terminal, so the
# kernel itself would allow TIOCSTI (the control shows it): only the filter refuses.
@test "primitive TIOCSTI / TIOCLINUX: refused by the filter on the container's own controlling terminal" {
	harden
	update_config '.process.terminal = true'
	set_args /bin/probe tiocsti check
	local profile
	for profile in default python none; do
		case $profile in
		none) update_config 'del(.linux.seccomp)' ;;
		*) use_profile "$profile" ;;
		esac
		start_recvtty ""
		sbx_detached create --bundle "$BUNDLE" --console-socket "$SOCK" "$ID-$profile"
		sbx_detached start "$ID-$profile"
		local out
		out=$(wait_recvtty)
		echo "$profile: $out" >&2
		if [ "$profile" = none ]; then
			grep -q 'sti ok .* input got' <<<"$out" # the control
		else
			grep -q 'sti EPERM sti-hi EPERM linux EPERM input none' <<<"$out"
		fi
	done
}

@test "primitive keyctl / add_key / request_key: refused; /proc/keys is masked" {
	harden
	set_script 'echo "keyctl $(/bin/probe syscall keyctl 0 -3 0)"
		echo "add_key $(/bin/probe syscall add_key s:user s:sbx-esc s:payload 7 -3)"
		echo "request_key $(/bin/probe syscall request_key s:user s:sbx-esc 0 -3)"
		echo "keys-read $(/bin/probe read /proc/keys)"
		echo "keys-stat $(/bin/probe stat /proc/keys)"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -qx 'keyctl EPERM' <<<"$output"
	grep -qx 'add_key EPERM' <<<"$output"
	grep -qx 'request_key EPERM' <<<"$output"
	grep -qx 'keys-read 0' <<<"$output"
	grep -q '^keys-stat char 1:3 ' <<<"$output"
	# control: without the filter the kernel answers (a session keyring id)
	update_config 'del(.linux.seccomp)'
	set_args /bin/probe syscall keyctl 0 -3 0
	sbx run --bundle "$BUNDLE" "$ID-ctl"
	[ "$output" = ok ]
}

@test "primitive io_uring_setup / io_uring_enter / io_uring_register: refused" {
	harden
	set_script 'echo "setup $(/bin/probe syscall io_uring_setup 8 z:)"
		echo "enter $(/bin/probe syscall io_uring_enter 0 1 1 1 0 0)"
		echo "register $(/bin/probe syscall io_uring_register 0 0 z: 1)"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	for c in setup enter register; do
		assert_errno_in "$(awk -v c=$c '$1 == c {print $2}' <<<"$output")" "io_uring_$c" EPERM ENOSYS
	done
}

@test "primitive userfaultfd: refused" {
	harden
	# O_CLOEXEC|UFFD_USER_MODE_ONLY: what an unprivileged exploit would ask for
	set_args /bin/probe syscall userfaultfd 0x80001
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = EPERM ]
}

@test "primitive ptrace / process_vm_readv / process_vm_writev / kcmp / pidfd_getfd: a sibling cannot be reached" {
	harden
	set_args /bin/probe ptrace-sibling
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = "ptrace EPERM vm_readv EPERM vm_writev EPERM kcmp EPERM pidfd_getfd EPERM" ]
	# control: without the filter the same probe reaches its child
	update_config 'del(.linux.seccomp)'
	sbx run --bundle "$BUNDLE" "$ID-ctl"
	[[ "$output" == "ptrace ok vm_readv ok "* ]]
}

@test "primitive perf_event_open / bpf: refused" {
	harden
	# perf: a zeroed attr (PERF_TYPE_HARDWARE, cycles) on this process, any cpu
	set_script 'echo "perf $(/bin/probe syscall perf_event_open z: 0 -1 -1 0)"
		echo "bpf-map $(/bin/probe syscall bpf 0 z: 72)"
		echo "bpf-prog $(/bin/probe syscall bpf 5 z: 128)"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -qx 'perf EPERM' <<<"$output"
	grep -qx 'bpf-map EPERM' <<<"$output"
	grep -qx 'bpf-prog EPERM' <<<"$output"
}

# tests/seccomp.bats has clone3 ENOSYS and clone(CLONE_NEWUSER) EPERM without a user
# namespace; here inside one (where a nested one would hand out a full capability
# set), with setns on a real namespace fd and every CLONE_NEW* flag.
@test "primitive unshare / setns / clone(CLONE_NEW*): no nested namespace from inside the user namespace" {
	harden
	local script='echo "unshare-user $(/bin/probe unshare-user)"
		echo "unshare-ns $(/bin/probe syscall unshare 0x20000)"
		echo "setns $(/bin/probe syscall setns f:/proc/self/ns/net 0)"
		echo "clone3 $(/bin/probe syscall clone3 z: 88)"'
	local flag
	for flag in 0x10000000 0x20000 0x4000000 0x8000000 0x40000000 0x20000000 0x2000000 0x80; do
		script="$script
		echo \"clone-$flag \$(/bin/probe syscall clone $((flag | 17)) 0 0 0 0)\""
	done
	set_script "$script"
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -qx 'unshare-user EPERM' <<<"$output"
	grep -qx 'unshare-ns EPERM' <<<"$output"
	grep -qx 'setns EPERM' <<<"$output"
	grep -qx 'clone3 ENOSYS' <<<"$output"
	for flag in 0x10000000 0x20000 0x4000000 0x8000000 0x40000000 0x20000000 0x2000000 0x80; do
		grep -qx "clone-$flag EPERM" <<<"$output" || { echo "clone $flag: $(grep "^clone-$flag " <<<"$output")" >&2; false; }
	done
}

@test "primitive mount / umount2 / new mount API / pivot_root / chroot: refused, and /proc/keys stays masked" {
	harden
	set_script 'echo "umount $(/bin/probe syscall umount2 s:/proc/keys 2)"
		echo "umount-timer $(/bin/probe syscall umount2 s:/proc/timer_list 0)"
		echo "mount $(/bin/probe syscall mount s:tmpfs s:/work s:tmpfs 0 0)"
		echo "remount $(/bin/probe syscall mount 0 s:/ 0 0x21 0)"
		echo "fsopen $(/bin/probe syscall fsopen s:tmpfs 0)"
		echo "open_tree $(/bin/probe syscall open_tree -100 s:/proc 1)"
		echo "pivot_root $(/bin/probe syscall pivot_root s:/work s:/work)"
		echo "chroot $(/bin/probe syscall chroot s:/work)"
		echo "keys-read $(/bin/probe read /proc/keys)"
		echo "keys-stat $(/bin/probe stat /proc/keys)"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	for c in umount umount-timer mount remount fsopen open_tree pivot_root chroot; do
		grep -qx "$c EPERM" <<<"$output" || { echo "$c: $(grep "^$c " <<<"$output")" >&2; false; }
	done
	grep -qx 'keys-read 0' <<<"$output"
	grep -q '^keys-stat char 1:3 ' <<<"$output"
}

@test "primitive /proc/sysrq-trigger, core_pattern, modprobe: not writable, host values unchanged" {
	local f before=""
	local files="/proc/sysrq-trigger /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/kernel/sysrq /proc/sys/vm/panic_on_oom"
	for f in $files; do [ -e "$f" ] && before="$before$f=$(cat "$f" 2>/dev/null | head -c 200);"; done
	local script=""
	for f in $files /proc/1/root/proc/sys/kernel/core_pattern /proc/self/root/proc/sys/kernel/core_pattern; do
		script="$script echo \"$f \$(/bin/probe write $f)\";"
	done
	set_script "$script"
	local variant
	for variant in default harden; do
		[ "$variant" = harden ] && harden
		sbx run --bundle "$BUNDLE" "$ID-$variant"
		[ "$status" -eq 0 ]
		echo "$variant: $output" >&2
		grep -q '^/proc/sys/kernel/core_pattern ' <<<"$output"
		local e
		while read -r f e; do
			# absent in this kernel is fine; open for writing is not
			assert_errno_in "$e" "$variant: $f" EROFS EACCES EPERM ENOENT
		done <<<"$output"
		[[ "$(grep '^/proc/sys/kernel/core_pattern ' <<<"$output")" != *ENOENT ]]
	done
	local after=""
	for f in $files; do [ -e "$f" ] && after="$after$f=$(cat "$f" 2>/dev/null | head -c 200);"; done
	[ "$after" = "$before" ]
}

# tests/mounts.bats checks /proc/keys, /proc/timer_list and a masked directory; here
# every masked and readonly path of the default config that exists is checked, each
# the way it would be attacked (read a file, list a directory, write into it).
@test "primitive masked /proc/kcore, keys, timer_list, sched_debug, acpi, scsi, /sys/firmware; readonly /proc/bus, fs, irq, sys" {
	local masked ro_paths
	masked=$(jq -r '.linux.maskedPaths[]' "$BUNDLE/config.json")
	ro_paths=$(jq -r '.linux.readonlyPaths[]' "$BUNDLE/config.json")
	local script="" p
	for p in $masked; do
		script="$script if [ -d $p ]; then echo \"masked-dir $p \$(ls -A $p | wc -l) \$(/bin/probe write $p/sbx-x)\";
			elif [ -e $p ]; then echo \"masked-file $p \$(/bin/probe read $p) \$(/bin/probe stat $p)\"; fi;"
	done
	# readonly: the mount at the path is read-only, and a file there cannot be opened
	# for writing (procfs answers ENOENT to creating a file, so directories are judged
	# by their mount)
	for p in $ro_paths; do
		script="$script if [ -d $p ]; then echo \"ro-dir $p \$(awk -v p=$p '\$5 == p {o = \$6} END {print o}' /proc/self/mountinfo)\";
			elif [ -e $p ]; then echo \"ro-file $p \$(/bin/probe write $p)\"; fi;"
	done
	set_script "$script"
	local variant
	for variant in default harden; do
		[ "$variant" = harden ] && harden
		sbx run --bundle "$BUNDLE" "$ID-$variant"
		echo "$variant: $output" >&2
		[ "$status" -eq 0 ]
		grep -q '^masked-file /proc/keys ' <<<"$output"
		grep -q '^ro-dir /proc/sys ' <<<"$output"
		local kind path a b
		while read -r kind path a b; do
			case $kind in
			masked-dir) [ "$a" = 0 ] && assert_errno_in "$b" "$path" EROFS EACCES EPERM ;;
			masked-file) [ "$a" = 0 ] && [[ "$b" == "char 1:3 "* ]] ;;
			ro-dir) [[ "$a" =~ ^ro(,|$) ]] ;;
			ro-file) assert_errno_in "$a" "$path" EROFS EACCES EPERM ;;
			esac || { echo "$variant: $kind $path $a $b" >&2; false; }
		done <<<"$output"
	done
}

@test "primitive /sys writes and cgroup v1 release_agent (CVE-2022-0492): mount -t cgroup refused, /sys read-only" {
	local agents
	agents=$(for f in /sys/fs/cgroup/*/release_agent; do [ -e "$f" ] && echo "$f=$(cat "$f")"; done)
	local script='echo "mount-cgroup $(/bin/probe syscall mount s:cgroup s:/work s:cgroup 0 s:memory)"
		echo "mount-cgroup2 $(/bin/probe syscall mount s:cgroup2 s:/work s:cgroup2 0 0)"
		echo "unshare $(/bin/probe syscall unshare 0x12020000)"
		for f in /sys/kernel/uevent_helper /sys/kernel/mm/transparent_hugepage/enabled /sys/power/state /sys/class/net/lo/mtu /sys/fs/cgroup/release_agent $(find /sys/fs/cgroup -maxdepth 2 -name release_agent); do
			[ -e "$f" ] && echo "write $f $(/bin/probe write $f)"
		done
		echo "mkdir-sys $(/bin/probe write /sys/sbx-x)"'
	set_script "$script"
	harden
	sbx run --bundle "$BUNDLE" "$ID"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	grep -qx 'mount-cgroup EPERM' <<<"$output"
	grep -qx 'mount-cgroup2 EPERM' <<<"$output"
	grep -qx 'unshare EPERM' <<<"$output"
	grep -q '^write /sys/class/net/lo/mtu ' <<<"$output"
	[ -z "$(grep '^write ' <<<"$output" | grep -vE ' (EROFS|EACCES)$')" ]
	assert_errno_in "$(sed -n 's/^mkdir-sys //p' <<<"$output")" "/sys/sbx-x" EROFS EACCES
	[ "$(for f in /sys/fs/cgroup/*/release_agent; do [ -e "$f" ] && echo "$f=$(cat "$f")"; done)" = "$agents" ]
}

# "shocker": with CAP_DAC_READ_SEARCH, open_by_handle_at on any fd of the host
# filesystem (the rootfs lives on it) opens any host inode by number, e.g. the host's
# root directory (inode 2 on ext4). The control opens it from the host.
@test "primitive open_by_handle_at (shocker): a host inode cannot be opened by handle" {
	local fstype
	fstype=$(stat -f -c %T "$BUNDLE/rootfs")
	[ "$fstype" = ext2/ext3 ] || skip "the rootfs is on $fstype; the handle below is ext4's"
	# control: from the host, the handle for inode 2 opens the host's root
	[ "$("$HOST_PROBE" syscall open_by_handle_at f:/tmp h:2 0x10000)" = ok ]
	set_script 'echo "open_by_handle_at $(/bin/probe syscall open_by_handle_at f:/ h:2 0x10000)"
		echo "name_to_handle_at $(/bin/probe syscall name_to_handle_at -100 s:/ z: z: 0)"'
	local variant
	for variant in default harden; do
		[ "$variant" = harden ] && harden
		sbx run --bundle "$BUNDLE" "$ID-$variant"
		[ "$status" -eq 0 ]
		grep -qx 'open_by_handle_at EPERM' <<<"$output" || { echo "$variant: $output" >&2; false; }
	done
}

@test "primitive chroot escape: chroot is refused; with CAP_SYS_CHROOT the climb ends at the container root" {
	local marker
	marker=$(host_scratch chroot)
	add_mount /work tmpfs tmpfs size=1m
	set_script "/bin/probe chroot-escape /work/jail $marker; echo ---; awk '{print \$5}' /proc/self/mountinfo"
	local base
	base=$(cat "$BUNDLE/config.json")
	harden
	sbx run --bundle "$BUNDLE" "$ID-harden"
	[ "${lines[0]}" = "chroot EPERM" ]
	# given the capability (and no filter), chroot works, but pivot_root left nothing above
	echo "$base" >"$BUNDLE/config.json"
	update_config '.process.capabilities.bounding += ["CAP_SYS_CHROOT"] | .process.capabilities.effective += ["CAP_SYS_CHROOT"]
		| .process.capabilities.permitted += ["CAP_SYS_CHROOT"]'
	sbx_split run --bundle "$BUNDLE" "$ID-cap"
	rmdir "$marker"
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p <<<"$stdout")" = "chroot ok" ]
	[ "$(sed -n 2p <<<"$stdout")" = "marker absent" ]
	assert_only_expected_mounts "$(sed '1,/^---$/d' <<<"$stdout")"
}

@test "primitive kernel module load: init_module/finit_module refused, rare socket families unavailable" {
	local modules=""
	[ -r /proc/modules ] && modules=$(cut -d' ' -f1 /proc/modules | sort)
	local script='echo "init_module $(/bin/probe syscall init_module z: 64 s:)"
		echo "finit_module $(/bin/probe syscall finit_module f:/bin/probe s: 0)"
		echo "delete_module $(/bin/probe syscall delete_module s:loop 0)"'
	local fam
	# appletalk, x25, decnet, rds, can, vsock, ax25, tipc
	for fam in 5:2 9:5 12:5 21:5 29:3 40:1 3:5 30:5; do
		script="$script
		echo \"socket-${fam%%:*} \$(/bin/probe syscall socket ${fam%%:*} ${fam##*:} 0)\""
	done
	set_script "$script"
	local variant
	for variant in default harden; do
		[ "$variant" = harden ] && harden
		sbx run --bundle "$BUNDLE" "$ID-$variant"
		echo "$variant: $output" >&2
		[ "$status" -eq 0 ]
		if [ "$variant" = default ]; then
			# no capability and no filter: the kernel refuses (ENOSYS: built without modules)
			local c
			for c in init_module finit_module delete_module; do
				assert_errno_in "$(awk -v c=$c '$1 == c {print $2}' <<<"$output")" "$variant: $c" EPERM ENOSYS
			done
		else
			grep -qx 'init_module EPERM' <<<"$output"
			grep -qx 'finit_module EPERM' <<<"$output"
			grep -qx 'delete_module EPERM' <<<"$output"
			# without a filter AF_VSOCK may exist (it does in a VM); the profile refuses it
			[ -z "$(grep '^socket-' <<<"$output" | grep -vE ' (EAFNOSUPPORT|EPERM|EPROTONOSUPPORT|ESOCKTNOSUPPORT|EINVAL)$')" ]
		fi
	done
	[ "$modules" = "$([ -r /proc/modules ] && cut -d' ' -f1 /proc/modules | sort)" ]
}

# tests/devices.bats has mknod EPERM with and without CAP_MKNOD (no user namespace);
# here the sbx-oci default: a block device, and /dev holds nothing beyond the
# documented set.
@test "primitive mknod / raw block devices: mknod refused, /dev holds only the standard nodes" {
	harden
	set_script 'echo "mknod-blk $(/bin/probe syscall mknod s:/work/sda 0x61b0 0x800)"
		echo "mknod-chr $(/bin/probe syscall mknod s:/work/mem 0x21b0 0x101)"
		echo "mknodat $(/bin/probe syscall mknodat -100 s:/dev/shm/sda 0x61b0 0x800)"
		echo "blocks $(find /dev -type b | wc -l)"
		ls -A /dev | sed "s/^/dev /"'
	sbx run --bundle "$BUNDLE" "$ID"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	grep -qx 'mknod-blk EPERM' <<<"$output"
	grep -qx 'mknod-chr EPERM' <<<"$output"
	grep -qx 'mknodat EPERM' <<<"$output"
	grep -qx 'blocks 0' <<<"$output"
	local e
	for e in $(sed -n 's/^dev //p' <<<"$output"); do
		case $e in
		null | zero | full | random | urandom | tty | console | ptmx | pts | shm | mqueue | fd | stdin | stdout | stderr) ;;
		*) echo "unexpected /dev/$e" >&2; false ;;
		esac
	done
}

@test "primitive setuid binaries: no_new_privs is set and a setuid-root copy does not raise euid" {
	harden
	# owned by the container's root (host uid 100000), setuid
	cp "$BUNDLE/rootfs/bin/probe" "$BUNDLE/rootfs/bin/probe-suid"
	chown 100000:100000 "$BUNDLE/rootfs/bin/probe-suid"
	chmod 4755 "$BUNDLE/rootfs/bin/probe-suid"
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	set_script 'grep ^NoNewPrivs: /proc/self/status; /bin/probe-suid creds'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^NoNewPrivs:[[:space:]]+1$ ]]
	[ "${lines[1]}" = "uid=1000 euid=1000 gid=1000 egid=1000" ]
	# control: without no_new_privs the same binary does switch (so the check can fail)
	update_config '.process.noNewPrivileges = false'
	sbx run --bundle "$BUNDLE" "$ID-ctl"
	[ "${lines[1]}" = "uid=1000 euid=0 gid=1000 egid=1000" ]
}

@test "primitive abstract unix sockets / host 127.0.0.1: a host loopback service is unreachable" {
	local port=$((20000 + RANDOM % 20000))
	bg "$BATS_TEST_TMPDIR/listener.log" "$HOST_PROBE" listen "127.0.0.1:$port"
	wait_for 5 grep -qx listening "$BATS_TEST_TMPDIR/listener.log"
	[ "$("$HOST_PROBE" connect "127.0.0.1:$port")" = ok ] # control
	harden
	set_script "/bin/probe connect 127.0.0.1:$port; /bin/probe connect @sbx-esc-none-$$; true"
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	assert_errno_in "${lines[0]}" "connect 127.0.0.1:$port" ENETUNREACH ECONNREFUSED
	[ "${lines[1]}" = ECONNREFUSED ]
}

# Dirty Pipe itself is a kernel bug (residual risk); what the runtime controls is
# that a read-only bind of a host directory and the read-only root refuse every
# ordinary way of changing a file.
@test "primitive page-cache overwrite class (Dirty Pipe): read-only host binds and root refuse writes, chmod, truncate, rename, unlink" {
	local src=$BATS_TEST_TMPDIR/hostro
	mkdir "$src"
	printf 'host file\n' >"$src/file"
	chmod 0644 "$src/file"
	local before
	before=$(dir_fingerprint "$src")
	harden
	mkdir "$BUNDLE/rootfs/hostro" # the mapped root cannot create it in a rootfs host root owns
	add_mount /hostro bind "$src" rbind ro
	local script="" f
	for f in /hostro/file /bin/busybox; do
		script="$script echo \"write $f \$(/bin/probe write $f)\";
			echo \"chmod $f \$(/bin/probe syscall chmod s:$f 0777)\";
			truncate -s 0 $f 2>/dev/null && echo \"truncate $f ok\" || echo \"truncate $f failed\";
			mv $f $f.moved 2>/dev/null && echo \"rename $f ok\" || echo \"rename $f failed\";
			rm -f $f 2>/dev/null; [ -e $f ] && echo \"unlink $f failed\" || echo \"unlink $f ok\";"
	done
	set_script "$script"
	sbx run --bundle "$BUNDLE" "$ID"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	for f in /hostro/file /bin/busybox; do
		# (the mapped root is not the owner of these host files: EACCES comes first)
		assert_errno_in "$(sed -n "s|^write $f ||p" <<<"$output")" "write $f" EROFS EACCES
		grep -qx "chmod $f EROFS" <<<"$output"
		grep -qx "truncate $f failed" <<<"$output"
		grep -qx "rename $f failed" <<<"$output"
		grep -qx "unlink $f failed" <<<"$output"
	done
	[ "$(dir_fingerprint "$src")" = "$before" ]
}

# tests/seccomp.bats "default.json denies the escape toolbox" runs a similar matrix
# as root without a user namespace. Here: the sbx-oci default (user namespace, no
# capabilities), the expectation for each call is read from default.json itself
# (so the test follows the profile), and a control run without the filter shows the
# same calls reaching the kernel, which answers differently.
@test "errno probe: every escape syscall default.json denies gets the filter's errno; allowed ones reach the kernel" {
	harden
	local profile=$PROFILES/default.json
	local names="keyctl add_key request_key io_uring_setup io_uring_enter io_uring_register userfaultfd ptrace
		process_vm_readv process_vm_writev kcmp pidfd_getfd perf_event_open bpf unshare setns mount umount2
		fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr pivot_root chroot init_module
		finit_module delete_module open_by_handle_at kexec_load kexec_file_load reboot swapon swapoff syslog
		acct quotactl clone3 mknod"
	local script="" s
	for s in $names read write close; do script="$script echo \"$s \$(/bin/probe syscall $s)\";"; done
	set_script "$script"
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	local filtered=""
	for s in $names; do
		local got want
		got=$(awk -v s="$s" '$1 == s {print $2}' <<<"$output")
		# the profile: allowed unconditionally, or an errno (an explicit rule's, else the default)
		want=$(jq -r --arg s "$s" '
			if any(.syscalls[]; .action == "SCMP_ACT_ALLOW" and (.args // [] | length == 0) and (.names | index($s))) then "kernel"
			else ((first(.syscalls[] | select(.action == "SCMP_ACT_ERRNO" and (.names | index($s))) | .errnoRet) // .defaultErrnoRet) | tostring)
			end' "$profile")
		case $want in
		kernel) # the kernel answered: an argument error, not a refusal
			assert_errno_in "$got" "$s (allowed by the profile)" EBADF EFAULT EINVAL ;;
		1) [ "$got" = EPERM ] || { echo "$s: got $got, the profile says EPERM" >&2; false; }
			filtered="$filtered $s" ;;
		38) [ "$got" = ENOSYS ] || { echo "$s: got $got, the profile says ENOSYS" >&2; false; } ;;
		*) echo "$s: unexpected profile errno $want" >&2; false ;;
		esac
	done
	[ "$(awk '$1 == "read" {print $2}' <<<"$output")" = EBADF ]
	[ "$(awk '$1 == "write" {print $2}' <<<"$output")" = EBADF ]
	[ "$(awk '$1 == "close" {print $2}' <<<"$output")" = EBADF ]
	# control: without the filter, some of the same calls get a kernel answer
	update_config 'del(.linux.seccomp)'
	sbx run --bundle "$BUNDLE" "$ID-ctl"
	local reached=0
	for s in $filtered; do
		case $(awk -v s="$s" '$1 == s {print $2}' <<<"$output") in
		EPERM) ;;
		*) reached=$((reached + 1)) ;;
		esac
	done
	echo "without the filter, $reached calls got past the EPERM" >&2
	[ "$reached" -ge 10 ]
}

# =================================================================================
# --- rows that need exec ---
# `sbx-oci exec` is being implemented; these fail until it lands.
# =================================================================================

@test "CVE-2016-9962 (exec): the runtime side of exec cannot be ptraced, read or have its fds taken by the container" {
	start_hunter
	sbx_ok exec "$ID-hunter" /bin/true # exec works at all (else this test proves nothing)
	local i
	for i in $(seq 50); do
		sbx exec "$ID-hunter" /bin/true
		[ "$status" -eq 0 ] || { echo "exec $i: $output" >&2; false; }
	done
	stop_hunter
	assert_hunter_got_nothing
	# no runtime process was ever seen with a readable exe (dumpable) in the container
	refute grep -E '^pid [0-9]+ exe=ok' <<<"$REPORT"
}

# exec_reopens_nothing: while a hunter in the container tries to reopen the runtime's
# binary for writing, `exec` runs /proc/self/exe and a #!/proc/self/exe script; the
# binary on the host is unchanged and the hunter got no writable fd.
exec_reopens_nothing() {
	local sum
	sum=$(sha256sum <"$SBX_OCI")
	start_hunter
	mkfifo -m 0666 "$SHARED/hold1" "$SHARED/hold2"
	printf '#!/proc/self/exe --log=/shared/hold2\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 0755 "$BUNDLE/rootfs/bin/evil"
	sbx_ok exec "$ID-hunter" /bin/true # exec works at all (else this test proves nothing)
	bg "$BATS_TEST_TMPDIR/exec1.log" timeout 20 "$SBX_OCI" --root "$SBX_ROOT" exec "$ID-hunter" /proc/self/exe --log /shared/hold1 state x
	local e1=$BG_LAST
	wait "$e1" || true
	bg "$BATS_TEST_TMPDIR/exec2.log" timeout 20 "$SBX_OCI" --root "$SBX_ROOT" exec "$ID-hunter" /bin/evil
	local e2=$BG_LAST
	wait "$e2" || true
	sleep 1
	stop_hunter
	[ "$(sha256sum <"$SBX_OCI")" = "$sum" ]
	assert_hunter_got_nothing
}

@test "CVE-2019-5736 (exec): an exec'd /proc/self/exe or #!/proc/self/exe cannot be reopened for writing" {
	exec_reopens_nothing
}

@test "CVE-2019-5736 (exec) in a user namespace that maps host root (no mappings given: the caller, 0, is mapped): the binary is sealed too" {
	update_config '.linux.namespaces += [{"type": "user"}]'
	exec_reopens_nothing
}

@test "a recursive bind of a directory above the rootfs does not carry the container's own unmasked /proc, /sys or /dev (review finding)" {
	# the bundle is under BATS_TEST_TMPDIR: bind all of that, recursively
	add_mount /mnt bind "$BATS_TEST_TMPDIR" rbind ro
	local rel=${BUNDLE#"$BATS_TEST_TMPDIR"}
	set_args sh -c "grep -c \" /mnt$rel/rootfs/\" /proc/self/mountinfo; /bin/probe write /mnt$rel/rootfs/proc/sys/kernel/domainname; ls /mnt$rel/rootfs/proc | grep -c .; true"
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ] # no mount of the container's under the copy
	[ "${lines[1]}" != ok ]
	[ "${lines[2]}" = 0 ] # an empty directory, not a procfs
}

@test "CVE-2022-29162 (exec --cap): an added capability is never inheritable, so an inheritable file cap gives nothing" {
	command -v setcap >/dev/null || skip "setcap is not installed"
	cp "$BUNDLE/rootfs/bin/probe" "$BUNDLE/rootfs/bin/probe-inh"
	setcap cap_net_raw+ei "$BUNDLE/rootfs/bin/probe-inh"
	update_config '.process.noNewPrivileges = false'
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx exec --cap CAP_NET_RAW -u 1000:1000 "$ID" sh -c 'grep ^CapInh: /proc/self/status; /bin/probe-inh syscall socket 2 3 1; true'
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^CapInh:[[:space:]]+0+$ ]]
	[ "${lines[1]}" = EPERM ]
	# as root the added capability is really there (the option did something)
	sbx exec --cap CAP_NET_RAW "$ID" /bin/probe syscall socket 2 3 1
	[ "$output" = ok ]
}

@test "CVE-2024-21626 (exec --cwd): a cwd the container made a symlink to /proc/self/fd/N never reaches the host" {
	local host
	host=$(host_scratch 21626x)
	echo host-secret >"$host/marker"
	add_mount /work tmpfs tmpfs size=1m mode=1777
	set_script 'for n in $(seq 3 24); do ln -s /proc/self/fd/$n /work/x$n; done; touch /work/ready; sleep 100'
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	local pid
	pid=$(container_pid "$ID")
	wait_for 10 test -e "/proc/$pid/root/work/ready"
	sbx exec --cwd /work "$ID" /bin/probe cwd # exec --cwd works at all
	[ "$output" = /work ]
	local n
	for n in $(seq 3 24); do
		sbx_split exec --cwd "/work/x$n" "$ID" /bin/probe read "../../../../../../../../../..$host/marker"
		if [ "$status" -eq 0 ]; then
			[ "$stdout" = ENOENT ] || { echo "fd $n: read the host marker: $stdout" >&2; rm -rf "$host"; false; }
		else
			[ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
		fi
	done
	rm -rf "$host"
}

@test "CVE-2026-30892 (exec -u): numeric user and group ids are taken exactly; malformed ones are refused" {
	add_mount /work tmpfs tmpfs size=1m mode=1777
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx exec -u 1 "$ID" /bin/probe ids
	[ "$status" -eq 0 ]
	[[ "$output" == "uid=1 gid=0 "* ]]
	sbx exec -u 1:2 "$ID" /bin/probe ids
	[ "$status" -eq 0 ]
	[[ "$output" == "uid=1 gid=2 "* ]]
	sbx exec -u 0 "$ID" /bin/probe ids
	[[ "$output" == "uid=0 gid=0 "* ]]
	local pid u
	pid=$(container_pid "$ID")
	for u in 4294967296 4294967295 "" x: :1 x 1:x -1 1:2:3 " 1"; do
		sbx_split exec -u "$u" "$ID" /bin/touch /work/ran
		assert_one_line_error "" || { echo "(-u '$u')" >&2; false; }
		[ ! -e "/proc/$pid/root/work/ran" ] || { echo "-u '$u' ran the program" >&2; false; }
	done
}

@test "container id as a path (exec): exec refuses bad ids" {
	mkdir -p "$SBX_ROOT"
	local id
	for id in .. . a/b /x "" -rf $'a\nb' "$(head -c 1024 /dev/zero | tr '\0' x)"; do
		sbx_split exec -- "$id" /bin/true
		assert_one_line_error "invalid container id" || { echo "(exec '$id')" >&2; false; }
	done
	[ -z "$(ls -A "$SBX_ROOT")" ]
}
