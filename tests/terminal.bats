#!/usr/bin/env bats
# process.terminal with --console-socket: the pty master reaches the socket, the
# program sees a terminal of consoleSize on its stdio and as /dev/console.

load helpers

start_recvtty() {
	SOCK=$BATS_TEST_TMPDIR/console.sock
	rm -f "$SOCK" # a stale socket of an earlier receiver would pass the wait below at once
	"$SBX_FIXTURES/recvtty" "$SOCK" "$1" >"$BATS_TEST_TMPDIR/tty.out" 2>&1 &
	RECV=$!
	for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.05; done
	[ -S "$SOCK" ]
}

wait_recvtty() {
	for _ in $(seq 100); do kill -0 "$RECV" 2>/dev/null || break; sleep 0.05; done
	kill "$RECV" 2>/dev/null || true
	cat "$BATS_TEST_TMPDIR/tty.out"
}

@test "terminal: create --console-socket hands the pty to the socket; tty and stty size work" {
	start_recvtty ""
	update_config '.process.terminal = true | .process.consoleSize = {"height": 33, "width": 111}'
	set_args sh -c 'tty; stty size; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-tty; stat -c %t:%T /dev/console'
	sbx_detached create --bundle "$BUNDLE" --console-socket "$SOCK" "$ID"
	sbx_detached start "$ID"
	out=$(wait_recvtty)
	echo "$out"
	[[ "$out" == *"name: /dev/pts/"* ]]
	[[ "$out" == *"/dev/pts/0"* ]]
	[[ "$out" == *"33 111"* ]]
	[[ "$out" == *all-tty* ]]
	[[ "$out" == *"88:0"* ]]
}

@test "terminal: input written to the master reaches the program" {
	start_recvtty $'hello-from-outside\n'
	update_config '.process.terminal = true'
	set_args sh -c 'read line; echo "got:$line"'
	sbx_detached run -d --bundle "$BUNDLE" --console-socket "$SOCK" "$ID"
	out=$(wait_recvtty)
	[[ "$out" == *"got:hello-from-outside"* ]]
}

@test "terminal: process.terminal without --console-socket is refused by create and run -d (nobody would hold the pty)" {
	update_config '.process.terminal = true'
	sbx_split create --bundle "$BUNDLE" "$ID"
	assert_one_line_error "console-socket"
	assert_no_state "$ID"
	sbx_split run -d --bundle "$BUNDLE" "$ID"
	assert_one_line_error "console-socket"
	assert_no_state "$ID"
}

@test "terminal: a foreground run without --console-socket relays the pty to its own stdio (consoleSize, input, exit status)" {
	update_config '.process.terminal = true | .process.consoleSize = {"height": 33, "width": 111}'
	set_args sh -c 'tty; stty size; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-tty; read line; echo "got:$line"; exit 7'
	run bash -c 'echo hello-in | "$0" --root "$1" run --bundle "$2" "$3"' "$SBX_OCI" "$SBX_ROOT" "$BUNDLE" "$ID"
	[ "$status" -eq 7 ]
	output=${output//$'\r'/}
	[[ "$output" == *"/dev/pts/0"* ]]
	[[ "$output" == *"33 111"* ]]
	[[ "$output" == *all-tty* ]]
	[[ "$output" == *"got:hello-in"* ]]
	assert_no_state "$ID"
}

@test "terminal: exec -t without --console-socket in the foreground relays the pty; exec -t -d is refused" {
	set_args sleep 30
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	run bash -c '"$0" --root "$1" exec -t "$2" sh -c "tty; [ -t 1 ] && echo is-tty; exit 3" </dev/null' "$SBX_OCI" "$SBX_ROOT" "$ID"
	[ "$status" -eq 3 ]
	[[ "$output" == *"/dev/pts/"* ]]
	[[ "$output" == *is-tty* ]]
	sbx_split exec -t -d "$ID" true
	assert_one_line_error "console-socket"
	sbx_ok delete --force "$ID"
}

@test "terminal: without a terminal the program has no controlling tty (TIOCSTI guard)" {
	set_args sh -c 'cat /dev/tty 2>&1 | head -1; echo done'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"No such device or address"* ]]
}
