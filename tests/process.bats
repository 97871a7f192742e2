#!/usr/bin/env bats
# config.md "process": args, env, cwd, user, umask, capabilities, noNewPrivileges,
# rlimits, oomScoreAdj, program lookup, and what the container inherits (fds).

load helpers

@test "process: args and env are exactly the config's" {
	update_config '.process.env = ["PATH=/bin", "ONE=1", "TWO=two words"]'
	set_args sh -c 'env | sort'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'ONE=1\nPATH=/bin\nPWD=/\nSHLVL=1\nTWO=two words')" ] || [[ "$output" == *"ONE=1"*"TWO=two words"* ]]
	! grep -q SBX_ROOT <<<"$output"
}

@test "process: without HOME in env, HOME is the user's in the container's /etc/passwd, else /; a given HOME is kept" {
	update_config '.root.readonly = false'
	printf 'root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n' >"$BUNDLE/rootfs/etc/passwd"
	update_config '.process.env = ["PATH=/bin"] | .process.user = {"uid": 1000, "gid": 1000}'
	set_args sh -c 'echo "$HOME"'
	sbx run --bundle "$BUNDLE" "$ID-a"
	[ "$output" = /home/alice ]
	update_config '.process.user = {"uid": 1001, "gid": 1001}'
	sbx run --bundle "$BUNDLE" "$ID-b"
	[ "$output" = / ]
	update_config '.process.env = ["PATH=/bin", "HOME=/given"]'
	sbx run --bundle "$BUNDLE" "$ID-c"
	[ "$output" = /given ]
	# the file is the container's: a fifo there is not read (the run would hang)
	rm "$BUNDLE/rootfs/etc/passwd"
	mkfifo "$BUNDLE/rootfs/etc/passwd"
	update_config '.process.env = ["PATH=/bin"]'
	run timeout 20 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-d"
	[ "$status" -eq 0 ]
	[ "$output" = / ]
	# nor is a magic link followed out to a host file (no pid namespace: host pids visible)
	local host=$BATS_TEST_TMPDIR/hosthome holder
	mkdir -p "$host"
	echo 'x:x:1001:1001::/HOST-HOME:/bin/sh' >"$host/passwd"
	(cd "$host" && exec sleep 30) &
	holder=$!
	rm "$BUNDLE/rootfs/etc/passwd"
	ln -s "/proc/$holder/cwd/passwd" "$BUNDLE/rootfs/etc/passwd"
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	run "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-e"
	kill "$holder"
	[ "$status" -eq 0 ]
	[ "$output" = / ]
}

@test "process: the runtime's own environment does not leak into the container" {
	update_config '.process.env = ["PATH=/bin"]'
	set_args sh -c 'env'
	SECRET_API_KEY=leak run env SECRET_API_KEY=leak "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	! grep -q SECRET_API_KEY <<<"$output"
}

@test "process: the program starts with no signal ignored or blocked, even ones the runtime's C library keeps for itself" {
	# 34 is glibc's SIGRTMIN and one of musl's three internal signals (32-34): musl's
	# sigaction refuses it, so the runtime resets those with the raw syscall.
	set_args grep -E '^Sig(Ign|Blk):' /proc/self/status
	run bash -c 'trap "" INT 34 40; exec "$0" --root "$1" run --bundle "$2" "$3"' "$SBX_OCI" "$SBX_ROOT" "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -qx $'SigIgn:\t0000000000000000' <<<"$output"
	grep -qx $'SigBlk:\t0000000000000000' <<<"$output"
}

@test "process: cwd is entered, and created in the rootfs when missing" {
	update_config '.process.cwd = "/work/new/dir" | .root.readonly = false'
	set_args /bin/probe cwd
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = /work/new/dir ]
	[ -d "$BUNDLE/rootfs/work/new/dir" ]
}

@test "process: CVE-2024-21626 a cwd of /proc/self/fd/N never reaches a host directory" {
	for n in 3 4 5 6 7 8 9 10 11 12; do
		update_config --arg c "/proc/self/fd/$n" '.process.cwd = $c'
		set_args /bin/probe cwd
		sbx run --bundle "$BUNDLE" "$ID-$n"
		# either refused, or the cwd is inside the container
		if [ "$status" -eq 0 ]; then
			[[ "$output" != *bats* ]] && [[ "$output" != *"$BUNDLE"* ]]
		fi
		assert_no_state "$ID-$n"
	done
}

@test "process: user uid, gid and additionalGids" {
	update_config '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [5, 100]}'
	set_args /bin/probe ids
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "uid=1000 gid=1001 groups=5,100" ]
}

@test "process: without additionalGids the container has no supplementary groups" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	set_args /bin/probe ids
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "uid=1000 gid=1000 groups=" ]
}

@test "process: run.oci.keep_original_groups (podman --group-add keep-groups) keeps the caller's groups, in run and exec" {
	update_config '.process.user = {"uid": 1000, "gid": 1000} | .annotations["run.oci.keep_original_groups"] = "1"'
	set_args /bin/probe ids
	# the caller's supplementary groups, set for the runtime by setpriv
	run setpriv --groups 7,9 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "uid=1000 gid=1000 groups=7,9" ]
	# "0" turns it off
	update_config '.annotations["run.oci.keep_original_groups"] = "0"'
	run setpriv --groups 7,9 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID"
	[ "$output" = "uid=1000 gid=1000 groups=" ]
	# exec into such a container keeps the exec caller's
	update_config '.annotations["run.oci.keep_original_groups"] = "1"'
	set_args sleep 1000
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	run setpriv --groups 8 "$SBX_OCI" --root "$SBX_ROOT" exec "$ID" /bin/probe ids
	[[ "$output" == *"groups=8" ]]
	# with additionalGids too: refused, naming both
	sbx_split exec -g 5 "$ID" true
	assert_one_line_error "keep_original_groups"
}

@test "process: umask" {
	update_config '.process.user.umask = 63'
	set_args /bin/probe umask
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = 0077 ]
}

@test "caps: the five sets are exactly the config's" {
	update_config '.process.capabilities = {
		"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"permitted": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"effective": ["CAP_CHOWN", "CAP_KILL"],
		"inheritable": ["CAP_NET_BIND_SERVICE"],
		"ambient": ["CAP_NET_BIND_SERVICE"]}
		| .process.user = {"uid": 1000, "gid": 1000}'
	set_args sh -c 'grep ^Cap /proc/self/status'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# after exec as a non-root user only the ambient capability (bit 10) remains
	grep -q 'CapInh:.*0000000000000400' <<<"$output"
	grep -q 'CapPrm:.*0000000000000400' <<<"$output"
	grep -q 'CapEff:.*0000000000000400' <<<"$output"
	grep -q 'CapBnd:.*0000000000000421' <<<"$output"
	grep -q 'CapAmb:.*0000000000000400' <<<"$output"
}

@test "caps: as root, the bounding set is what remains after exec" {
	update_config '.process.capabilities = {"bounding": ["CAP_KILL"], "permitted": ["CAP_KILL"], "effective": ["CAP_KILL"]}'
	set_args sh -c 'grep ^Cap /proc/self/status'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -q 'CapEff:.*0000000000000020' <<<"$output"
	grep -q 'CapBnd:.*0000000000000020' <<<"$output"
	grep -q 'CapInh:.*0000000000000000' <<<"$output"
}

@test "caps: no capabilities object means no capabilities" {
	update_config 'del(.process.capabilities)'
	set_args sh -c 'grep ^Cap /proc/self/status'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -q 'CapEff:.*0000000000000000' <<<"$output"
	grep -q 'CapBnd:.*0000000000000000' <<<"$output"
}

@test "caps: an unknown capability name is a warning, not an error (config.md)" {
	update_config '.process.capabilities.bounding += ["CAP_NOT_A_THING"]'
	set_args true
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"warning"*"CAP_NOT_A_THING"* ]]
}

# libcap's lookup reads a name up to its first character that is not a letter or '_',
# and takes a leading digit as a number: neither may grant anything here.
@test "caps: a name with a capability's prefix, a number or another spelling grants nothing; case is ignored" {
	update_config '.process.capabilities = {"bounding": ["CAP_NET_RAW2", "CAP_NET_RAW,CAP_SYS_ADMIN", "12", "NET_RAW", "cap_chown"],
		"effective": ["CAP_NET_RAW2", "cap_chown"], "permitted": ["CAP_NET_RAW2", "cap_chown"]}'
	set_args sh -c 'grep -e ^CapEff -e ^CapBnd /proc/self/status'
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# CAP_CHOWN (bit 0) alone
	grep -q 'CapEff:.*0000000000000001' <<<"$stdout"
	grep -q 'CapBnd:.*0000000000000001' <<<"$stdout"
	for name in CAP_NET_RAW2 CAP_NET_RAW,CAP_SYS_ADMIN 12 NET_RAW; do
		[[ "$stderr" == *"unknown capability '$name' ignored"* ]] || { echo "no warning for $name" >&2; return 1; }
	done
}

@test "features: the capabilities are libcap's names, the mount options libmount's words plus the OCI ones" {
	sbx features
	[ "$status" -eq 0 ]
	jq -e '.linux.capabilities | .[0] == "CAP_CHOWN" and index("CAP_SYS_ADMIN") == 21 and all(startswith("CAP_"))' <<<"$output"
	jq -e '.mountOptions as $o | ["ro", "rw", "nosymfollow", "rro", "rnosymfollow", "rbind", "rprivate", "defaults", "idmap", "ridmap", "tmpcopyup", "lazytime"] | all(. as $w | $o | index($w))' <<<"$output"
	jq -e '.mountOptions | index("noauto") == null and index("rrbind") == null and (unique | length) == length' <<<"$output"
}

@test "caps: without CAP_MKNOD the container cannot create device nodes" {
	set_args /bin/probe mknod /tmp/null
	update_config '.mounts += [{"destination":"/tmp","type":"tmpfs","source":"tmpfs"}]'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = EPERM ]
}

# runc#4125: exec'ing the program through a helper binary first (runc-dmz; our exec
# trampoline) leaves a non-root process only its ambient capabilities, and under
# no_new_privs the program's file capabilities could then not bring back what the
# config permits.
@test "caps: a non-root program's file capabilities within the permitted set work under no_new_privs" {
	requires setcap
	mkdir -p "$BUNDLE/rootfs/opt"
	cp "$BUNDLE/rootfs/bin/busybox" "$BUNDLE/rootfs/opt/busybox"
	setcap cap_net_bind_service+ep "$BUNDLE/rootfs/opt/busybox"
	update_config '.process.user = {"uid": 1000, "gid": 1000} | .process.noNewPrivileges = true
		| .process.capabilities = {"bounding": ["CAP_NET_BIND_SERVICE"], "effective": ["CAP_NET_BIND_SERVICE"],
			"permitted": ["CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"], "ambient": []}'
	set_args /opt/busybox grep ^CapEff /proc/self/status
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "CapEff:	0000000000000400" ]
	# and a program without file capabilities gets none (the ambient set is empty)
	set_args grep ^CapEff /proc/self/status
	sbx run --bundle "$BUNDLE" "$ID-2"
	[ "$status" -eq 0 ]
	[ "$output" = "CapEff:	0000000000000000" ]
}

@test "noNewPrivileges: set when asked, not otherwise" {
	set_args sh -c 'grep NoNewPrivs /proc/self/status'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1" ]]
	update_config '.process.noNewPrivileges = false'
	sbx run --bundle "$BUNDLE" "$ID-2"
	[ "$status" -eq 0 ]
	[[ "$output" == *"0" ]]
}

@test "rlimits: soft and hard limits are applied" {
	update_config '.process.rlimits = [{"type":"RLIMIT_NOFILE","soft":64,"hard":128},{"type":"RLIMIT_CORE","soft":0,"hard":0}]'
	set_args sh -c '/bin/probe rlimit NOFILE; /bin/probe rlimit CORE'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "64 128" ]
	[ "${lines[1]}" = "0 0" ]
}

@test "rlimits: a hard limit above what the runtime may set fails create with the rlimit named" {
	local hard
	hard=$(ulimit -Hn)
	update_config --argjson h $((hard + 1)) '.process.rlimits = [{"type":"RLIMIT_NOFILE","soft":$h,"hard":$h}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	if [ "$status" -ne 0 ]; then
		assert_one_line_error "RLIMIT_NOFILE"
	fi
	assert_no_state "$ID"
}

@test "rlimits: without CAP_SYS_RESOURCE, a hard limit above the runtime's own is refused by create, naming process.rlimits[i], as runc and crun refuse it; one at it runs" {
	# root without CAP_SYS_RESOURCE (setpriv: not in the bounding set, so not after the
	# exec either), with a hard limit of 2048 open files
	update_config '.process.rlimits = [{"type":"RLIMIT_CORE","soft":0,"hard":0},{"type":"RLIMIT_NOFILE","soft":1024,"hard":4096}]'
	# (into files: a created init would hold a pipe of `run` open until started)
	local err=$BATS_TEST_TMPDIR/create.err
	status=0
	setpriv --bounding-set=-sys_resource prlimit --nofile=1024:2048 "$SBX_OCI" --root "$SBX_ROOT" \
		create --bundle "$BUNDLE" "$ID" </dev/null >/dev/null 2>"$err" || status=$?
	[ "$status" -ne 0 ]
	[ "$(wc -l <"$err")" -eq 1 ]
	grep -qF "process.rlimits[1]: the RLIMIT_NOFILE hard limit 4096 is above the runtime's own (2048)" "$err"
	assert_no_state "$ID"
	update_config '.process.rlimits = [{"type":"RLIMIT_NOFILE","soft":1024,"hard":2048}]'
	set_args /bin/probe rlimit NOFILE
	run setpriv --bounding-set=-sys_resource prlimit --nofile=1024:2048 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "1024 2048" ]
}

@test "oomScoreAdj: set when given" {
	update_config '.process.oomScoreAdj = 500'
	set_args cat /proc/self/oom_score_adj
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = 500 ]
}

@test "oomScoreAdj: left alone when absent" {
	echo 123 >/proc/self/oom_score_adj
	set_args cat /proc/self/oom_score_adj
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = 123 ]
}

@test "program: found through the PATH of process.env" {
	mkdir -p "$BUNDLE/rootfs/opt/tools"
	cp "$BUNDLE/rootfs/bin/probe" "$BUNDLE/rootfs/opt/tools/myprobe"
	update_config '.process.env = ["PATH=/opt/tools:/bin"]'
	set_args myprobe cwd
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = / ]
}

@test "program: a missing executable fails create with exit 127 and a clear message" {
	set_args no-such-program
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 127 ]
	assert_one_line_error 'executable file not found in $PATH'
	sbx_split create --bundle "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"not found"* ]]
	assert_no_state "$ID"
}

@test "program: a file that is not executable exits 126" {
	update_config '.root.readonly = false'
	echo data >"$BUNDLE/rootfs/bin/notexec"
	set_args /bin/notexec
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 126 ]
	assert_one_line_error "Permission denied"
}

@test "fds: only stdio reaches the program; a stray inherited fd does not" {
	exec 7</etc/hostname
	set_args /bin/probe fds
	sbx run --bundle "$BUNDLE" "$ID"
	exec 7<&-
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "fds: --preserve-fds passes fds 3..3+N-1" {
	echo hello >"$BATS_TEST_TMPDIR/passed"
	set_args sh -c '/bin/probe fds; cat <&3'
	run "$SBX_OCI" --root "$SBX_ROOT" run --preserve-fds 1 --bundle "$BUNDLE" "$ID" 3<"$BATS_TEST_TMPDIR/passed"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "3 -> "*passed ]]
	[ "${lines[1]}" = hello ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "fds: socket activation: LISTEN_FDS sockets become fds 3.., before --preserve-fds ones, with LISTEN_FDS/LISTEN_PID set" {
	echo activated >"$BATS_TEST_TMPDIR/listen"
	echo preserved >"$BATS_TEST_TMPDIR/passed"
	set_args sh -c 'echo "$LISTEN_FDS $LISTEN_PID"; cat <&3; cat <&4'
	# LISTEN_PID must be the runtime's own pid: sh's $$, which exec keeps
	run sh -c 'LISTEN_FDS=1 LISTEN_PID=$$ exec "$0" --root "$1" run --preserve-fds 1 --bundle "$2" "$3" 3<"$4" 4<"$5"' \
		"$SBX_OCI" "$SBX_ROOT" "$BUNDLE" "$ID" "$BATS_TEST_TMPDIR/listen" "$BATS_TEST_TMPDIR/passed"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "1 1" ]
	[ "${lines[1]}" = activated ]
	[ "${lines[2]}" = preserved ]
	# another process's LISTEN_FDS (LISTEN_PID not ours) is ignored
	set_args sh -c 'echo "[$LISTEN_FDS]"'
	run env LISTEN_FDS=1 LISTEN_PID=1 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID-b" 3<"$BATS_TEST_TMPDIR/listen"
	[ "$status" -eq 0 ]
	[ "$output" = "[]" ]
}

@test "fds: the waiting init of a created container holds no host directory" {
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_ok state "$ID"
	pid=$(jq -r .pid <<<"$output")
	for fd in /proc/$pid/fd/*; do
		target=$(readlink "$fd")
		[ ! -d "$target" ] || { echo "init holds directory fd $fd -> $target" >&2; false; }
	done
}

@test "init: non-dumpable until exec, so /proc/<init>/exe of a created container is not writable" {
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_ok state "$ID"
	pid=$(jq -r .pid <<<"$output")
	grep -q '^0$' <(awk '/^Uid/ {print $2}' /proc/$pid/status) || true
	# the exe of the waiting init is the runtime binary: it must not be writable through /proc
	run sh -c "exec 3>/proc/$pid/exe" 
	[ "$status" -ne 0 ]
	cmp "$SBX_OCI" "/proc/$pid/exe"
}

@test "process: run.sbx-oci.init gives the container its own pid 1; the program is pid 2 and gets its signals" {
	update_config '.annotations["run.sbx-oci.init"] = "true"'
	set_args sh -c 'echo "$$ $PPID"; cat /proc/1/cmdline | tr "\0" " "; echo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "2 1" ]
	[[ "${lines[1]}" == "sbx-init"* ]]
	# a signal the program sends itself: as pid 1 it would be dropped (no handler)
	set_args sh -c 'kill -TERM $$; sleep 1; echo survived'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 143 ]
	[[ "$output" != *survived* ]]
	# `kill` of the container reaches the program through the init
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx_ok kill "$ID" TERM
	wait_stopped "$ID"
	sbx_ok delete "$ID"
}

@test "process: under run.sbx-oci.init, kill 34 and kill RTMIN+3 reach the program (RTMIN is 34, as in glibc and runc)" {
	update_config '.annotations["run.sbx-oci.init"] = "true"'
	set_args sleep 30
	local sig want id pid init st
	for case in 34:162 RTMIN+3:165; do
		sig=${case%%:*} want=${case##*:} id=$ID-$((want))
		timeout -k 2 15 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$id" >/dev/null 2>&1 &
		pid=$!
		# the program is forked only after the init blocked every signal: wait for it
		init=
		for _ in $(seq 200); do
			init=$("$SBX_OCI" --root "$SBX_ROOT" state "$id" 2>/dev/null | jq -r '.pid // empty') || true
			# a proc file's size is 0 whatever it holds: read it
			[ -n "$init" ] && [ -n "$(cat "/proc/$init/task/$init/children" 2>/dev/null)" ] && break
			sleep 0.05
		done
		sbx_ok kill "$id" "$sig"
		st=0
		wait "$pid" || st=$?
		[ "$st" -eq "$want" ] || { echo "kill $sig: exit $st, want $want" >&2; return 1; }
	done
}

@test "process: run.sbx-oci.init with a value other than true or false is refused" {
	update_config '.annotations["run.sbx-oci.init"] = "yes"'
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	assert_one_line_error "run.sbx-oci.init"
	assert_no_state "$ID"
}

@test "linux.memoryPolicy: the program runs under the policy (numa_maps), a node the host lacks fails the create naming the field" {
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_STATIC_NODES"]}'
	set_args sh -c 'head -n1 /proc/self/numa_maps'
	sbx run --bundle "$BUNDLE" "$ID-a"
	[ "$status" -eq 0 ]
	[[ "$output" == *" bind=static:0 "* ]]
	update_config '.linux.memoryPolicy = {"mode": "MPOL_INTERLEAVE", "nodes": "0"}'
	sbx run --bundle "$BUNDLE" "$ID-b"
	[[ "$output" == *" interleave:0 "* ]]
	update_config '.linux.memoryPolicy = {"mode": "MPOL_LOCAL"}'
	sbx run --bundle "$BUNDLE" "$ID-c"
	[[ "$output" == *" local "* ]]
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "1000"}'
	sbx_split run --bundle "$BUNDLE" "$ID-d"
	assert_one_line_error "linux.memoryPolicy: set_mempolicy"
	assert_no_state "$ID-d"
	update_config '.linux.memoryPolicy = {"mode": "MPOL_SOMETIMES"}'
	sbx_split run --bundle "$BUNDLE" "$ID-e"
	assert_one_line_error "linux.memoryPolicy.mode: unknown memory policy 'MPOL_SOMETIMES'"
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "3-1"}'
	sbx_split run --bundle "$BUNDLE" "$ID-f"
	assert_one_line_error "linux.memoryPolicy.nodes"
	sbx_ok features
	[ "$(jq -c '.linux.memoryPolicy.flags' <<<"$output")" = '["MPOL_F_NUMA_BALANCING","MPOL_F_RELATIVE_NODES","MPOL_F_STATIC_NODES"]' ]
}
