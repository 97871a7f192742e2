#!/usr/bin/env bats
# config.md hooks: when each kind runs, in which namespace, with the state on stdin;
# a failing create-time hook fails create and cleans up; poststop failures warn.

load helpers

hook_script() {
	# $1 = name; the hook records its state JSON, its mount namespace and its args
	local f=$BATS_TEST_TMPDIR/hook-$1
	cat >"$f" <<-EOS
	#!/bin/sh
	cat >"$BATS_TEST_TMPDIR/$1.state"
	readlink /proc/self/ns/mnt >"$BATS_TEST_TMPDIR/$1.mntns"
	echo "\$@" >"$BATS_TEST_TMPDIR/$1.args"
	EOS
	chmod +x "$f"
	echo "$f"
}

@test "hooks: every kind runs with the state on stdin, in the right order and namespace" {
	local kinds="prestart createRuntime createContainer startContainer poststart poststop"
	for k in $kinds; do
		p=$(hook_script "$k")
		if [ "$k" = startContainer ]; then
			# startContainer resolves in the container: put the script in the rootfs
			cp "$p" "$BUNDLE/rootfs/bin/hook-start"
			sed -i "s#$BATS_TEST_TMPDIR#/hookout#g" "$BUNDLE/rootfs/bin/hook-start"
			p=/bin/hook-start
		fi
		update_config --arg k "$k" --arg p "$p" '.hooks[$k] = [{"path": $p, "args": [$p, "arg1", $k]}]'
	done
	mkdir -p "$BATS_TEST_TMPDIR/out"
	update_config --arg o "$BATS_TEST_TMPDIR" '.mounts += [{"destination":"/hookout","type":"bind","source":$o,"options":["rbind","rw"]}]'
	set_args true
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	for k in $kinds; do
		[ -s "$BATS_TEST_TMPDIR/$k.state" ] || { echo "hook $k did not run" >&2; false; }
		jq -e --arg id "$ID" '.id == $id and .ociVersion == "1.3.0"' "$BATS_TEST_TMPDIR/$k.state"
		[ "$(cat "$BATS_TEST_TMPDIR/$k.args")" = "arg1 $k" ]
	done
	local host_mnt
	host_mnt=$(readlink /proc/self/ns/mnt)
	# runtime namespace: prestart, createRuntime, poststart, poststop
	for k in prestart createRuntime poststart poststop; do
		[ "$(cat "$BATS_TEST_TMPDIR/$k.mntns")" = "$host_mnt" ]
	done
	# container namespace: createContainer, startContainer
	[ "$(cat "$BATS_TEST_TMPDIR/createContainer.mntns")" != "$host_mnt" ]
	[ "$(cat "$BATS_TEST_TMPDIR/startContainer.mntns")" = "$(cat "$BATS_TEST_TMPDIR/createContainer.mntns")" ]
	jq -e '.status == "stopped"' "$BATS_TEST_TMPDIR/poststop.state"
	jq -e '.status == "running"' "$BATS_TEST_TMPDIR/poststart.state"
	jq -e '.pid == 1' "$BATS_TEST_TMPDIR/startContainer.state"
}

@test "hooks: a failing createRuntime hook fails create and leaves nothing" {
	update_config '.hooks.createRuntime = [{"path": "/bin/false"}]'
	sbx_split create --bundle "$BUNDLE" "$ID"
	assert_one_line_error "hooks.createRuntime[0]"
	assert_no_state "$ID"
}

@test "hooks: a hook that outlives its timeout is killed and create fails" {
	update_config '.hooks.prestart = [{"path": "/bin/sleep", "args": ["sleep", "30"], "timeout": 1}]'
	SECONDS=0
	sbx_split create --bundle "$BUNDLE" "$ID"
	assert_one_line_error "timed out"
	[ "$SECONDS" -lt 10 ]
	assert_no_state "$ID"
}

@test "hooks: a failing poststart hook fails start, and the container is destroyed, poststop hooks included (runtime.md step 9 -> 12)" {
	local mark=$BATS_TEST_TMPDIR/poststop-ran
	update_config --arg m "$mark" '.hooks.poststart = [{"path": "/bin/false"}]
		| .hooks.poststop = [{"path": "/bin/sh", "args": ["sh", "-c", "echo ran > \($m)"]}]'
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	local pid
	pid=$("$SBX_OCI" --root "$SBX_ROOT" state "$ID" | jq -r .pid)
	sbx_split start "$ID"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"poststart"* ]]
	assert_no_state "$ID"
	[ "$(cat "$mark")" = ran ]
	# killed: gone, or a zombie until whoever adopted it reaps it
	[ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
}

@test "hooks: a failing poststop hook is a warning; the hooks after it still run, and delete still removes the container" {
	local mark=$BATS_TEST_TMPDIR/after
	update_config --arg m "$mark" '.hooks.poststop = [{"path": "/bin/false"}, {"path": "/bin/sh", "args": ["sh", "-c", "echo ran > \($m)"]}, {"path": "/bin/false"}]'
	set_args true
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_detached start "$ID"
	for _ in $(seq 50); do
		sbx_ok state "$ID"
		[ "$(jq -r .status <<<"$output")" = stopped ] && break
		sleep 0.1
	done
	sbx_split delete "$ID"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *warning*poststop* ]]
	[[ "$stderr" == *"2 poststop hooks failed"* ]]
	[ "$(cat "$mark")" = ran ]
	assert_no_state "$ID"
}

@test "hooks: env is the hook's own, not the runtime's" {
	local f=$BATS_TEST_TMPDIR/envhook
	printf '#!/bin/sh\nenv > %s/env.out\n' "$BATS_TEST_TMPDIR" >"$f"
	chmod +x "$f"
	update_config --arg p "$f" '.hooks.prestart = [{"path": $p, "env": ["HOOKVAR=yes"]}]'
	set_args true
	RUNTIME_SECRET=x sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -q HOOKVAR=yes "$BATS_TEST_TMPDIR/env.out"
	! grep -q RUNTIME_SECRET "$BATS_TEST_TMPDIR/env.out"
}

@test "hooks: a hook without env gets the runtime's environment (as runc and crun); env [] gets none" {
	local f=$BATS_TEST_TMPDIR/envhook
	printf '#!/bin/sh
env > "$1"
' >"$f"
	chmod +x "$f"
	update_config --arg p "$f" --arg o "$BATS_TEST_TMPDIR" \
		'.hooks.prestart = [{"path": $p, "args": [$p, ($o + "/inherit.out")]}, {"path": $p, "args": [$p, ($o + "/empty.out")], "env": []}]'
	set_args true
	FROM_CALLER=yes sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -qx FROM_CALLER=yes "$BATS_TEST_TMPDIR/inherit.out"
	grep -q "^PATH=" "$BATS_TEST_TMPDIR/inherit.out"
	! grep -q FROM_CALLER "$BATS_TEST_TMPDIR/empty.out"
}

# A client's SIGKILL of `create` in the middle (Jupyter kills a kernel that is starting;
# a shim killed by its timeout): the init dies with it (its parent-death signal), and
# what stays, a state dir with no state.json and the cgroup the create made, is the
# container's still: `delete` removes both, as it would a whole one.
@test "hooks: create killed during its createRuntime hook: delete removes the half-made container and its cgroup" {
	local pids=$BATS_TEST_TMPDIR/hook.pid create i
	update_config --arg f "$pids" '.linux.resources.memory.limit = 67108864
		| .hooks.createRuntime = [{"path": "/bin/sh", "args": ["sh", "-c", "echo $$ >>\($f); exec sleep 60"]}]'
	"$SBX_OCI" --root "$SBX_ROOT" create --bundle "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1 &
	create=$!
	for i in $(seq 100); do [ -s "$pids" ] && break; sleep 0.05; done
	[ -s "$pids" ]
	[ -n "$(our_cgroups)" ] # the create made its cgroup (else this proves nothing)
	[ ! -e "$SBX_ROOT/$ID/state.json" ]
	kill -KILL "$create"
	wait "$create" || true
	kill "$(cat "$pids")"
	sbx_ok delete "$ID"
	assert_no_state "$ID"
	[ -z "$(our_cgroups)" ] || { echo "cgroups left: $(our_cgroups)" >&2; false; }
}
