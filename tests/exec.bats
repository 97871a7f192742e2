#!/usr/bin/env bats
# exec: a new process in a running container joins its namespaces, cgroup and root,
# runs under its seccomp profile, capabilities, no_new_privs and user, and passes its
# exit status through; the argv shapes podman and containerd use all work.

load helpers

# A container that stays up: sleep as pid 1.
start_sleeper() {
	set_args sleep 1000
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
}

init_pid() { "$SBX_OCI" --root "$SBX_ROOT" state "$ID" | jq -r .pid; }

@test "exec: runs in the container's pid, mount, uts, ipc, net and cgroup namespaces and its cgroup" {
	start_sleeper
	pid=$(init_pid)
	sbx_ok exec "$ID" sh -c 'for n in pid mnt uts ipc net cgroup; do readlink /proc/self/ns/$n; done; cat /proc/1/cmdline | tr "\0" " "; echo; hostname'
	for n in pid mnt uts ipc net cgroup; do
		[[ "$output" == *"$(readlink /proc/$pid/ns/$n)"* ]]
	done
	[[ "$output" == *"sleep 1000"* ]]
	[[ "$output" == *sbx* ]]
	# Its host pid is in the container's cgroup (ps lists it next to the init).
	sbx_detached exec -d --pid-file "$BATS_TEST_TMPDIR/p" "$ID" sleep 60
	xpid=$(cat "$BATS_TEST_TMPDIR/p")
	sbx_ok ps --format json "$ID"
	[[ "$output" == *"$pid"* ]] && [[ "$output" == *"$xpid"* ]]
	diff <(grep -v ':name=' /proc/$pid/cgroup) <(grep -v ':name=' /proc/$xpid/cgroup)
}

@test "exec: the exit status passes through; a signal gives 128+N" {
	start_sleeper
	sbx exec "$ID" sh -c 'exit 42'
	[ "$status" -eq 42 ]
	sbx exec "$ID" sh -c 'kill -9 $$'
	[ "$status" -eq 137 ]
}

@test "exec: a missing program exits 127 with a message that says so" {
	start_sleeper
	sbx_split exec "$ID" no-such-program
	[ "$status" -eq 127 ]
	[[ "$stderr" == *"no-such-program"*"not found"* ]]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
}

@test "exec: --cwd, --env (replacing the config's value) and the config's env" {
	update_config '.process.env = ["PATH=/bin:/usr/bin", "KEEP=yes", "OVER=old"]'
	start_sleeper
	sbx_ok exec --cwd /tmp -e OVER=new -e EXTRA=1 "$ID" sh -c 'pwd; echo "$KEEP $OVER $EXTRA"; env | grep -c ^OVER='
	[ "${lines[0]}" = /tmp ]
	[ "${lines[1]}" = "yes new 1" ]
	[ "${lines[2]}" = 1 ]
}

@test "exec: -u UID[:GID] and --additional-gids are numeric and exact (CVE-2026-30892)" {
	start_sleeper
	sbx_ok exec -u 1 "$ID" /bin/probe ids
	[[ "$output" == "uid=1 gid=0"* ]]
	sbx_ok exec -u 1:2 --additional-gids 5 --additional-gids 6 "$ID" /bin/probe ids
	[ "$output" = "uid=1 gid=2 groups=5,6" ]
	for bad in 4294967296 4294967295 '' x: 1:x -1 1x; do
		sbx_split exec -u "$bad" "$ID" true
		[ "$status" -ne 0 ]
		assert_one_line_error "--user"
	done
}

@test "exec: the container's capabilities and no_new_privs hold; --cap adds to effective, never to inheritable" {
	update_config '.process.capabilities = {"bounding":["CAP_KILL"],"effective":["CAP_KILL"],"permitted":["CAP_KILL"],"inheritable":[],"ambient":[]} | .process.noNewPrivileges = true'
	start_sleeper
	sbx_ok exec "$ID" sh -c 'grep -E "^(CapEff|CapInh|NoNewPrivs)" /proc/self/status'
	[[ "$output" == *"CapEff:	0000000000000020"* ]]
	[[ "$output" == *"NoNewPrivs:	1"* ]]
	sbx_ok exec --cap CAP_NET_RAW "$ID" sh -c 'grep -E "^(CapEff|CapInh)" /proc/self/status'
	[[ "$output" == *"CapEff:	0000000000002020"* ]]
	[[ "$output" == *"CapInh:	0000000000000000"* ]]
	# an unknown name: a warning, nothing granted (as in process.capabilities, and runc)
	sbx_split exec --cap CAP_NOPE "$ID" sh -c 'grep -E "^CapEff" /proc/self/status'
	[ "$status" -eq 0 ]
	[[ "$stdout" == *"CapEff:	0000000000000020"* ]]
	[[ "$stderr" == *"--cap CAP_NOPE: unknown capability ignored"* ]]
}

@test "exec: --cap on a container with no capabilities gives the process exactly that one (bounding, effective, permitted)" {
	update_config '.process.capabilities = {}'
	start_sleeper
	sbx_ok exec --cap CAP_KILL "$ID" sh -c 'grep -E "^Cap" /proc/self/status'
	[[ "$output" == *"CapInh:	0000000000000000"* ]]
	[[ "$output" == *"CapPrm:	0000000000000020"* ]]
	[[ "$output" == *"CapEff:	0000000000000020"* ]]
	[[ "$output" == *"CapBnd:	0000000000000020"* ]]
	[[ "$output" == *"CapAmb:	0000000000000000"* ]]
}

@test "exec: --no-new-privs sets no_new_privs when the container has none" {
	update_config '.process.noNewPrivileges = false'
	start_sleeper
	sbx_ok exec "$ID" grep NoNewPrivs /proc/self/status
	[[ "$output" == *"0"* ]]
	sbx_ok exec --no-new-privs "$ID" grep NoNewPrivs /proc/self/status
	[[ "$output" == *"1"* ]]
}

@test "exec: the container's seccomp profile applies to the new process" {
	update_config '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_ERRNO","errnoRet":42}]}'
	start_sleeper
	sbx_ok exec "$ID" sh -c '/bin/probe syscall getcwd; /bin/probe syscall read; grep ^Seccomp: /proc/self/status'
	[ "${lines[0]}" = ENOMSG ]
	[ "${lines[1]}" = EBADF ]
	[[ "${lines[2]}" == *2 ]]
}

@test "exec: --process FILE (podman and containerd's form) with --detach and --pid-file" {
	start_sleeper
	cat >"$BATS_TEST_TMPDIR/process.json" <<-'JSON'
	{"args":["sh","-c","echo from-process-json > /dev/shm/marker; sleep 30"],"cwd":"/","env":["PATH=/bin"],
	 "user":{"uid":0,"gid":0},"terminal":false}
	JSON
	sbx_detached exec --pid-file "$BATS_TEST_TMPDIR/exec.pid" --process "$BATS_TEST_TMPDIR/process.json" --detach "$ID"
	xpid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	[ -d "/proc/$xpid" ]
	for _ in $(seq 50); do sbx exec "$ID" cat /dev/shm/marker; [ "$output" = from-process-json ] && break; sleep 0.1; done
	[ "$output" = from-process-json ]
	# delete --force ends the exec'd process too.
	sbx_ok delete --force "$ID"
	for _ in $(seq 50); do [ -d "/proc/$xpid" ] || break; sleep 0.1; done
	[ ! -d "/proc/$xpid" ]
}

@test "exec: a bad --process file is one clear error naming the field" {
	start_sleeper
	echo '{"args":"not-an-array","cwd":"/"}' >"$BATS_TEST_TMPDIR/bad.json"
	sbx_split exec --process "$BATS_TEST_TMPDIR/bad.json" "$ID"
	[ "$status" -ne 0 ]
	assert_one_line_error "args"
	echo '{"args":["true"],"cwd":"relative"}' >"$BATS_TEST_TMPDIR/bad.json"
	sbx_split exec --process "$BATS_TEST_TMPDIR/bad.json" "$ID"
	assert_one_line_error "cwd"
	sbx_split exec --process "$BATS_TEST_TMPDIR/missing.json" "$ID"
	assert_one_line_error "missing.json"
}

@test "exec: in a stopped or missing container fails; in a paused one only with --ignore-paused" {
	set_args true
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_detached start "$ID"
	for _ in $(seq 50); do [ "$("$SBX_OCI" --root "$SBX_ROOT" state "$ID" | jq -r .status)" = stopped ] && break; sleep 0.1; done
	sbx_split exec "$ID" true
	assert_one_line_error "stopped"
	sbx_split exec nosuch true
	assert_one_line_error "does not exist"
	sbx_ok delete "$ID"

	ID=$ID-p
	start_sleeper
	sbx_ok pause "$ID"
	sbx_split exec "$ID" true
	assert_one_line_error "paused"
	# Accepted, but the new process is frozen with the rest until resume.
	"$SBX_OCI" --root "$SBX_ROOT" exec --ignore-paused "$ID" echo thawed >"$BATS_TEST_TMPDIR/out" 2>&1 &
	xp=$!
	sleep 0.5
	kill -0 "$xp"
	sbx_ok resume "$ID"
	wait "$xp"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = thawed ]
}

@test "exec: works in a created container (before start) and sees the init waiting" {
	set_args sleep 1000
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_ok exec "$ID" sh -c 'echo in-created; ls /proc | grep -c "^[0-9]"'
	[ "${lines[0]}" = in-created ]
	sbx_ok state "$ID"
	[ "$(echo "$output" | jq -r .status)" = created ]
}

@test "exec: in a user-namespaced container the process is mapped like the init" {
	use_userns
	start_sleeper
	pid=$(init_pid)
	sbx_ok exec "$ID" sh -c 'readlink /proc/self/ns/user; cat /proc/self/uid_map; id -u'
	[ "${lines[0]}" = "$(readlink /proc/$pid/ns/user)" ]
	[ "${lines[-1]}" = 0 ]
	sbx_detached exec -d --pid-file "$BATS_TEST_TMPDIR/p" "$ID" sleep 30
	# From the host, the exec'd process runs as the mapped (unprivileged) uid.
	[ "$(awk '/^Uid:/ {print $2}' /proc/$(cat "$BATS_TEST_TMPDIR/p")/status)" != 0 ]
}

@test "exec: --tty with --console-socket hands over a pty of the container's devpts; tty and stty size work" {
	start_sleeper
	SOCK=$BATS_TEST_TMPDIR/console.sock
	"$SBX_FIXTURES/recvtty" "$SOCK" "" >"$BATS_TEST_TMPDIR/tty.out" 2>&1 &
	RECV=$!
	for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.05; done
	cat >"$BATS_TEST_TMPDIR/process.json" <<-'JSON'
	{"args":["sh","-c","tty; stty size; [ -t 0 ] && [ -t 1 ] && echo all-tty"],"cwd":"/","env":["PATH=/bin"],
	 "user":{"uid":0,"gid":0},"terminal":true,"consoleSize":{"height":21,"width":77}}
	JSON
	sbx_detached exec --process "$BATS_TEST_TMPDIR/process.json" --console-socket "$SOCK" --detach --pid-file "$BATS_TEST_TMPDIR/p" "$ID"
	for _ in $(seq 100); do kill -0 "$RECV" 2>/dev/null || break; sleep 0.05; done
	kill "$RECV" 2>/dev/null || true
	out=$(cat "$BATS_TEST_TMPDIR/tty.out")
	echo "$out"
	[[ "$out" == *"/dev/pts/"* ]]
	[[ "$out" == *all-tty* ]]
	[[ "$out" == *"21 77"* ]]
	# The container's /dev/console is still the init's, not rebound by exec.
	sbx_ok exec "$ID" sh -c 'stat -c %F /dev/console 2>&1 || echo none'
	[[ "$output" != *"character"*"136"* ]]
}

@test "exec: --tty without a console socket is refused in detached mode" {
	start_sleeper
	sbx_split exec -t -d "$ID" true
	assert_one_line_error "console-socket"
}

@test "exec: --preserve-fds passes fd 3; other inherited fds do not leak" {
	start_sleeper
	echo preserved >"$BATS_TEST_TMPDIR/f3"
	echo leaked >"$BATS_TEST_TMPDIR/f4"
	run "$SBX_OCI" --root "$SBX_ROOT" exec --preserve-fds 1 "$ID" /bin/probe fds 3<"$BATS_TEST_TMPDIR/f3" 4<"$BATS_TEST_TMPDIR/f4"
	[ "$status" -eq 0 ]
	[[ "$output" == *"3 -> $BATS_TEST_TMPDIR/f3"* ]]
	[[ "$output" != *"f4"* ]]
	run "$SBX_OCI" --root "$SBX_ROOT" exec "$ID" /bin/probe fds 3<"$BATS_TEST_TMPDIR/f3"
	[[ "$output" != *"f3"* ]]
}

@test "exec: the exec'd process cannot open the runtime's fds or exe while it sets up (non-dumpable)" {
	start_sleeper
	# The new process sees only its own stdio and what it opened; nothing of the
	# host (state dir, cgroup dirs, the init's pidfd) is inherited.
	sbx_ok exec "$ID" /bin/probe fds
	[ -z "$output" ]
	# Its root is the container's: the host's files are not reachable.
	touch "/tmp/host-marker-$$"
	sbx_ok exec "$ID" sh -c "ls /tmp/host-marker-$$ 2>&1 || echo absent"
	[[ "$output" == *absent* ]]
	rm -f "/tmp/host-marker-$$"
}

@test "exec: options stop at the container id; the command's own options are its own" {
	start_sleeper
	sbx_ok exec "$ID" sh -c 'echo "$@"' x -u --detach -t
	[ "$output" = "-u --detach -t" ]
	sbx_split exec "$ID"
	[ "$status" -ne 0 ]
	assert_one_line_error "command"
}

@test "exec: into a foreground run joins only once the program runs, never while the init sets up" {
	# 1500 tmpfs mounts make the init's setup take a while; exec is tried from the
	# moment the state dir exists. While pid 1 is still the runtime (setting up, or
	# about to exec), exec must wait on the state dir's lock: what it finds as pid 1 is
	# the program. (A build that released the lock early let exec join the mount
	# namespace before the pivot: it saw the host's pid 1.)
	update_config '.mounts += [range(1500) | {"destination": "/tmp/m\(.)", "type": "tmpfs", "source": "tmpfs"}]'
	set_args sleep 60 # killed below, once exec has seen it (sleep 3 could end first on a slow machine)
	"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1 &
	local out=""
	for _ in $(seq 2000); do
		[ -d "$SBX_ROOT/$ID" ] && break
		sleep 0.002
	done
	[ -d "$SBX_ROOT/$ID" ]
	out=$(timeout 20 "$SBX_OCI" --root "$SBX_ROOT" exec "$ID" cat /proc/1/cmdline | tr '\0' ' ')
	"$SBX_OCI" --root "$SBX_ROOT" kill "$ID" KILL || true
	wait || true
	echo "pid 1 seen by exec: $out" >&2
	[ "$out" = "sleep 60 " ]
}
