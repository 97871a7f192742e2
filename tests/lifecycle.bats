#!/usr/bin/env bats
# The lifecycle of runtime.md: create -> created -> start -> running -> stopped -> delete,
# the exec.fifo handshake, the pid file, `run` in the foreground and detached.

load helpers

@test "run: exit status of the program passes through" {
	set_args sh -c 'exit 7'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 7 ]
	assert_no_state "$ID"
}

@test "run: a program killed by signal N exits 128+N" {
	# without a pid namespace the shell is not pid 1, so SIGKILL is delivered
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	set_args /bin/probe kill-self 9
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 137 ]
}

@test "run: stdout and stderr of the program reach the caller" {
	set_args sh -c 'echo to-out; echo to-err >&2'
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$stdout" = to-out ]
	[ "$stderr" = to-err ]
}

@test "run: a program that is done before the runtime records its start is still a success" {
	# Under load the init can set up, run a short program and exit while the runtime
	# waits for a CPU; then the runtime's record found a zombie and failed the run
	# ("the container init exited during setup", 2 in 600 parallel runs). strace
	# without -f delays every openat of the runtime only, its container runs freely.
	requires strace
	set_args echo done
	# LeakSanitizer cannot run under ptrace (tests/asan.sh)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run strace -o /dev/null -e trace=openat -e inject=openat:delay_enter=30000 \
		"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = done ]
}

@test "delete: while a delete is under way, state and kill say the container does not exist" {
	# Before, they found the state dir without its state.json for the length of the
	# removal and called the container half-created. strace slows the delete's
	# unlinkat calls (0.3 s each) so the removal is long enough to be seen.
	requires strace
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -o /dev/null -e trace=unlinkat -e inject=unlinkat:delay_enter=300000 \
		"$SBX_OCI" --root "$SBX_ROOT" delete --force "$ID" &
	local deleter=$! i seen=""
	for i in $(seq 60); do
		run "$SBX_OCI" --root "$SBX_ROOT" state "$ID"
		seen+="$output"$'\n'
		[[ "$output" == *"does not exist"* ]] && break
		sleep 0.05
	done
	wait "$deleter"
	echo "$seen"
	[[ "$seen" != *"being created"* ]]
	[[ "$output" == *"does not exist"* ]]
	run "$SBX_OCI" --root "$SBX_ROOT" kill "$ID" KILL
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]
	[ -z "$(ls -A "$SBX_ROOT" | grep -v '^@seccomp\|^@python' || true)" ]
}

@test "run --pid-file: a run whose setup fails leaves no pid file naming a gone process" {
	set_args /dev/null # not executable: the init fails before its exec
	sbx run --pid-file "$BATS_TEST_TMPDIR/pid" --bundle "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"/dev/null"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/pid" ]
}

@test "run: the container id is generated when absent, and nothing is left after" {
	set_args sh -c 'cat /proc/self/cgroup >/dev/null; echo ran'
	cd "$BUNDLE"
	sbx run
	[ "$status" -eq 0 ]
	[ "$output" = ran ]
	[ -z "$(ls -A "$SBX_ROOT")" ]
}

@test "run DIR: a directory holding config.json is the bundle" {
	set_args echo from-dir
	cd "$BATS_TEST_TMPDIR"
	sbx run "$BUNDLE"
	[ "$status" -eq 0 ]
	[ "$output" = from-dir ]
}

@test "run: forwards signals to the container and exits with its status" {
	set_args sh -c 'trap "exit 42" TERM; echo ready; while :; do sleep 0.1; done'
	"$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID" >"$BATS_TEST_TMPDIR/out" &
	local pid=$!
	for _ in $(seq 50); do grep -q ready "$BATS_TEST_TMPDIR/out" && break; sleep 0.1; done
	kill -TERM "$pid"
	wait "$pid" || status=$?
	[ "${status:-0}" -eq 42 ]
	assert_no_state "$ID"
}

@test "create: the program does not run before start; the pid file is written" {
	mkdir "$BATS_TEST_TMPDIR/mark"
	update_config --arg m "$BATS_TEST_TMPDIR/mark" '.mounts += [{"destination":"/mark","type":"bind","source":$m,"options":["rbind","rw"]}]'
	set_args sh -c 'touch /mark/ran; sleep 100'
	sbx_detached create --bundle "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" "$ID"
	[ -s "$BATS_TEST_TMPDIR/pid" ]
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = created ]
	[ "$(jq -r .pid <<<"$output")" = "$(cat "$BATS_TEST_TMPDIR/pid")" ]
	[ -p "$SBX_ROOT/$ID/exec.fifo" ]
	sleep 0.2
	[ ! -e "$BATS_TEST_TMPDIR/mark/ran" ]
	sbx_detached start "$ID"
	for _ in $(seq 50); do [ -e "$BATS_TEST_TMPDIR/mark/ran" ] && break; sleep 0.1; done
	[ -e "$BATS_TEST_TMPDIR/mark/ran" ]
	[ ! -e "$SBX_ROOT/$ID/exec.fifo" ]
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = running ]
}

@test "state: the OCI state document has the fields clients read" {
	update_config '.annotations = {"org.example.key": "value"}'
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_ok state "$ID"
	jq -e --arg id "$ID" --arg b "$BUNDLE" '.ociVersion == "1.3.0" and .id == $id and .bundle == $b
		and (.pid > 0) and .status == "created" and (.created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z$"))
		and .annotations["org.example.key"] == "value"' <<<"$output"
}

@test "kill + delete: a stopped container is deleted with everything it created" {
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_detached start "$ID"
	sbx_ok kill "$ID" KILL
	for _ in $(seq 50); do
		sbx_ok state "$ID"
		[ "$(jq -r .status <<<"$output")" = stopped ] && break
		sleep 0.1
	done
	[ "$(jq -r .status <<<"$output")" = stopped ]
	sbx_ok delete "$ID"
	assert_no_state "$ID"
}

@test "kill: default signal is TERM; names, SIG names and numbers are accepted" {
	set_args sh -c 'trap "echo got-usr1 >/tmp/x" USR1; trap "exit 3" TERM; while :; do sleep 0.1; done'
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	for sig in USR1 SIGUSR1 10; do sbx_ok kill "$ID" "$sig"; done
	sbx_ok kill "$ID"
	for _ in $(seq 50); do
		sbx_ok state "$ID"
		[ "$(jq -r .status <<<"$output")" = stopped ] && break
		sleep 0.1
	done
	[ "$(jq -r .status <<<"$output")" = stopped ]
}

@test "start: a running container cannot be started again" {
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx_split start "$ID"
	assert_one_line_error "not created"
}

@test "delete: a running container needs --force; a created one is deleted without (as runc and crun), its process killed" {
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	pid=$("$SBX_OCI" --root "$SBX_ROOT" state "$ID" | jq -r .pid)
	sbx_ok delete "$ID"
	assert_no_state "$ID"
	# (its end may be seen a moment after delete returns: reaped by its parent)
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	refute kill -0 "$pid" 2>/dev/null
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_detached start "$ID"
	sbx_split delete "$ID"
	assert_one_line_error "running"
	sbx_ok state "$ID"
	sbx_ok delete --force "$ID"
	assert_no_state "$ID"
}

@test "delete --regex: every container whose id matches, and only those (crun's option)" {
	set_args sleep 100
	for id in "$ID-a1" "$ID-a2" "$ID-b1"; do
		sbx_detached run -d --bundle "$BUNDLE" "$id"
	done
	sbx_ok delete --force --regex "^$ID-a[0-9]\$"
	assert_no_state "$ID-a1"
	assert_no_state "$ID-a2"
	sbx_ok state "$ID-b1"
	# a running match without --force: refused, the rest still go
	sbx_split delete --regex "$ID-b"
	assert_one_line_error "running"
	sbx_split delete --regex '('
	assert_one_line_error "--regex"
	sbx_split delete --regex "$ID-b" "$ID-b1"
	assert_one_line_error "not both"
	sbx_ok delete -f --regex "$ID-b"
	assert_no_state "$ID-b1"
}

@test "delete --force of a missing container succeeds; without --force it says so" {
	sbx_split delete "$ID"
	assert_one_line_error "does not exist"
	sbx_ok delete --force "$ID"
}

@test "run -d: returns at once and leaves the container running" {
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = running ]
	pid=$(jq -r .pid <<<"$output")
	[ -d "/proc/$pid" ]
	sbx_ok delete --force "$ID"
	[ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
}

@test "create without a process: accepted; start fails and leaves the container as it was" {
	update_config 'del(.process)'
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_split start "$ID"
	assert_one_line_error "no process"
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = created ]
}

@test "list: table, --format json and --quiet" {
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_ok list
	[[ "${lines[0]}" == ID*PID*STATUS*BUNDLE* ]]
	[[ "${lines[1]}" == "$ID "*created* ]]
	sbx_ok list --format json
	jq -e --arg id "$ID" 'length == 1 and .[0].id == $id and .[0].status == "created"' <<<"$output"
	sbx_ok list -q
	[ "$output" = "$ID" ]
}

@test "config.json changes after create do not affect the container" {
	set_args sh -c 'echo original'
	sbx_detached create --bundle "$BUNDLE" "$ID"
	set_args sh -c 'echo changed'
	sbx_detached start "$ID"
	for _ in $(seq 50); do
		sbx_ok state "$ID"
		[ "$(jq -r .status <<<"$output")" = stopped ] && break
		sleep 0.1
	done
	cmp "$SBX_ROOT/$ID/config.json" <(jq -n '1') 2>/dev/null && false
	grep -q original "$SBX_ROOT/$ID/config.json"
}
