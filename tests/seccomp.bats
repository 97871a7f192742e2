#!/usr/bin/env bats
# linux.seccomp: actions, errno values, argument filters, ENOSYS for newer syscalls,
# unknown names, flags, notify, the filter cache, and the shipped profiles, probed the
# bubblewrap way: EPERM/ENOSYS means the filter answered, EBADF/EFAULT the kernel did.

load helpers

PROFILES=$BATS_TEST_DIRNAME/../config/seccomp

use_profile() {
	update_config --slurpfile s "$PROFILES/$1.json" '.linux.seccomp = $s[0]'
}

seccomp_config() {
	update_config --argjson s "$1" '.linux.seccomp = $s'
}

@test "seccomp: defaultAction ERRNO with defaultErrnoRet; allowed syscalls reach the kernel" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_ERRNO"}]}'
	set_args sh -c '/bin/probe syscall getcwd; /bin/probe syscall read'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "${lines[0]}" = EPERM ]
	[ "${lines[1]}" = EBADF ]
	use_profile default
	update_config '.linux.seccomp.defaultErrnoRet = 6'
	set_args /bin/probe syscall io_uring_setup
	sbx run --bundle "$BUNDLE" "$ID-b"
	[ "$output" = ENXIO ]
}

@test "seccomp: a rule's errnoRet is returned" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_ERRNO","errnoRet":100}]}'
	set_args /bin/probe syscall getcwd
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = ENETDOWN ]
}

@test "seccomp: KILL_PROCESS and TRAP end the program with SIGSYS (exit 159)" {
	for action in SCMP_ACT_KILL_PROCESS SCMP_ACT_TRAP SCMP_ACT_KILL; do
		seccomp_config "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getcwd\"],\"action\":\"$action\"}]}"
		update_config '.linux.namespaces |= map(select(.type != "pid"))'
		set_args /bin/probe syscall getcwd
		sbx run --bundle "$BUNDLE" "$ID-$action"
		[ "$status" -eq 159 ] || { echo "$action: status $status" >&2; false; }
	done
}

@test "seccomp: LOG allows the call" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_LOG"}]}'
	set_args /bin/probe syscall getcwd
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = EFAULT ]
}

@test "seccomp: argument filters (EQ, and several values of one argument as alternatives)" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["personality"],"action":"SCMP_ACT_ERRNO",
		"args":[{"index":0,"value":8,"op":"SCMP_CMP_EQ"},{"index":0,"value":9,"op":"SCMP_CMP_EQ"}]}]}'
	set_args sh -c '/bin/probe syscall personality 8; /bin/probe syscall personality 9; /bin/probe syscall personality 4294967295'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "${lines[0]}" = EPERM ]
	[ "${lines[1]}" = EPERM ]
	[ "${lines[2]}" = ok ]
}

@test "seccomp: TIOCSTI and TIOCLINUX are refused by the shipped profiles, also with high bits set (CVE-2019-10063)" {
	for p in default python; do
		use_profile "$p"
		set_args sh -c '/bin/probe syscall ioctl 0 0x5412; /bin/probe syscall ioctl 0 0x100005412; /bin/probe syscall ioctl 0 0x541c; /bin/probe syscall ioctl -1 0x5413'
		sbx run --bundle "$BUNDLE" "$ID-$p"
		[ "${lines[0]}" = EPERM ]
		[ "${lines[1]}" = EPERM ]
		[ "${lines[2]}" = EPERM ]
		[ "${lines[3]}" = EBADF ] # other ioctls reach the kernel
	done
}

@test "seccomp: syscalls newer than the profile get ENOSYS, known unlisted ones EPERM" {
	use_profile python
	# cachestat (451) and fchmodat2 (452) are above the newest syscall python.json names
	set_args sh -c '/bin/probe syscall-nr 451; /bin/probe syscall-nr 452; /bin/probe syscall io_uring_setup; /bin/probe syscall-nr 1000'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "${lines[0]}" = ENOSYS ]
	[ "${lines[1]}" = ENOSYS ]
	[ "${lines[2]}" = EPERM ]
	[ "${lines[3]}" = ENOSYS ]
}

@test "seccomp: clone3 gets ENOSYS, clone with a namespace flag EPERM, fork still works" {
	use_profile default
	set_args sh -c '/bin/probe syscall clone3; /bin/probe syscall clone 0x10000000 0 0 0 0; echo forked | cat'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "${lines[0]}" = ENOSYS ]
	[ "${lines[1]}" = EPERM ]
	[ "${lines[2]}" = forked ]
}

@test "seccomp: default.json denies the escape toolbox, allows ordinary calls (errno probe)" {
	use_profile default
	local denied="mount umount2 unshare setns keyctl add_key request_key bpf perf_event_open ptrace process_vm_readv
		process_vm_writev kexec_load kexec_file_load init_module finit_module delete_module reboot swapon swapoff
		clock_settime settimeofday sethostname setdomainname acct quotactl io_uring_setup io_uring_enter
		io_uring_register userfaultfd fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr pivot_root
		chroot open_by_handle_at syslog vhangup kcmp pidfd_getfd lookup_dcookie modify_ldt uselib ustat sysfs
		mbind set_mempolicy migrate_pages move_pages quotactl_fd fanotify_init iopl ioperm"
	local script=""
	for s in $denied; do script="$script echo $s \$(/bin/probe syscall $s);"; done
	script="$script echo read \$(/bin/probe syscall read); echo uname \$(/bin/probe syscall uname); echo getpid \$(/bin/probe syscall getpid)"
	set_args sh -c "$script"
	sbx run --bundle "$BUNDLE" "$ID"
	for s in $denied; do
		grep -qx "$s EPERM" <<<"$output" || { echo "$s: $(grep "^$s " <<<"$output")" >&2; false; }
	done
	grep -qx "read EBADF" <<<"$output"
	grep -qx "uname EFAULT" <<<"$output"
	grep -qx "getpid ok" <<<"$output"
}

@test "seccomp: python.json allows only unix, inet and inet6 sockets" {
	use_profile python
	set_args sh -c '/bin/probe syscall socket 1 1 0; /bin/probe syscall socket 2 1 0; /bin/probe syscall socket 10 2 0; /bin/probe syscall socket 16 3 0; /bin/probe syscall socket 17 3 0; /bin/probe syscall socket 40 1 0'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "${lines[0]}" = ok ]
	[ "${lines[1]}" = ok ]
	[ "${lines[2]}" = ok ]
	[ "${lines[3]}" = EOPNOTSUPP ] # netlink: its own errno, for getifaddrs' callers (profiles.py)
	[ "${lines[4]}" = EPERM ] # packet
	[ "${lines[5]}" = EPERM ] # vsock
}

@test "seccomp: the filter is in force in the program, and setup ran before it (loaded last)" {
	# deny what the setup itself uses: the user switch and capability calls
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["capset","setresuid","setresgid","setgroups","prctl","chdir","fchdir","mount","pivot_root"],"action":"SCMP_ACT_ERRNO"}]}'
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	set_args sh -c 'grep -E "^(Seccomp|NoNewPrivs|Uid):" /proc/self/status; /bin/probe syscall setresuid'
	sbx run --bundle "$BUNDLE" "$ID"
	[[ "$output" == *"Seccomp:"*"2"* ]]
	[[ "$output" == *"Uid:"*"1000"* ]]
	[ "${lines[-1]}" = EPERM ]
}

@test "seccomp: without noNewPrivileges the filter is still applied" {
	use_profile default
	update_config '.process.noNewPrivileges = false'
	set_args sh -c 'grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status; /bin/probe syscall unshare'
	sbx run --bundle "$BUNDLE" "$ID"
	[[ "$output" == *"Seccomp:"*"2"* ]]
	[[ "$output" == *"NoNewPrivs:"*"0"* ]]
	[ "${lines[-1]}" = EPERM ]
}

@test "seccomp: without noNewPrivileges, only the user switch runs under the filter: a profile without openat2, setsid or fcntl still starts" {
	# runtime-tools' default profile and older docker-style allow lists have no
	# openat2: the cwd, the session, preserved fds, the tty and the bounding set are
	# done before the filter; setgroups/setresgid/setresuid/capset/prctl after it,
	# as runc and crun do
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["openat2","setsid","fcntl","umask","ioctl","getcwd","fchdir","chdir"],"action":"SCMP_ACT_ERRNO"}]}'
	update_config '.process.noNewPrivileges = false | .process.cwd = "/tmp" | .process.user = {"uid": 1000, "gid": 1000, "umask": 18}'
	set_args sh -c 'grep -E "^(Uid|Seccomp):" /proc/self/status; /bin/probe syscall getcwd; readlink /proc/self/cwd'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Uid:"*"1000"* ]]
	[[ "${lines[1]}" == "Seccomp:"*"2" ]]
	[ "${lines[2]}" = EPERM ]
	[ "${lines[3]}" = /tmp ]
}

@test "seccomp: an unknown syscall in an allow rule is a warning; in a deny rule under an allow default, an error" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["no_such_syscall"],"action":"SCMP_ACT_ALLOW"}]}'
	use_profile default
	update_config '.linux.seccomp.syscalls += [{"names":["no_such_syscall"],"action":"SCMP_ACT_ALLOW"}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *warning*no_such_syscall* ]]
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd","no_such_syscall"],"action":"SCMP_ACT_ERRNO"}]}'
	sbx_split run --bundle "$BUNDLE" "$ID-b"
	assert_one_line_error "linux.seccomp.syscalls[0].names[1]"
	assert_no_state "$ID-b"
}

@test "seccomp: errnoRet on an action without an errno, bad names and bad operators are errors" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_KILL","errnoRet":5}]}'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.seccomp.syscalls[0].errnoRet"
	seccomp_config '{"defaultAction":"SCMP_ACT_BOGUS"}'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.seccomp.defaultAction"
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_LIKE"}]}]}'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.seccomp.syscalls[0].args[0].op"
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":[],"action":"SCMP_ACT_ERRNO"}]}'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.seccomp.syscalls[0].names"
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","flags":["SECCOMP_FILTER_FLAG_BOGUS"]}'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.seccomp.flags[0]"
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_VAX"]}'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.seccomp.architectures[0]"
	assert_no_state "$ID"
}

@test "seccomp: filter flags TSYNC, LOG and SPEC_ALLOW are accepted" {
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","flags":["SECCOMP_FILTER_FLAG_TSYNC","SECCOMP_FILTER_FLAG_LOG","SECCOMP_FILTER_FLAG_SPEC_ALLOW"],
		"syscalls":[{"names":["getcwd"],"action":"SCMP_ACT_ERRNO"}]}'
	set_args /bin/probe syscall getcwd
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = EPERM ]
}

@test "seccomp: the compiled filter is cached by content and reused" {
	use_profile python
	set_args true
	sbx_ok run --bundle "$BUNDLE" "$ID"
	[ "$(ls "$SBX_ROOT/@seccomp-cache" | wc -l)" -eq 1 ]
	local f
	f=$(ls "$SBX_ROOT"/@seccomp-cache/*.bpf)
	touch -d '2000-01-01' "$f"
	sbx_ok run --bundle "$BUNDLE" "$ID-2"
	[ "$(stat -c %Y "$f")" = "$(date -d 2000-01-01 +%s)" ] # read, not rewritten
	update_config '.linux.seccomp.defaultErrnoRet = 13'
	sbx_ok run --bundle "$BUNDLE" "$ID-3"
	[ "$(ls "$SBX_ROOT/@seccomp-cache" | wc -l)" -eq 2 ]
	sbx_ok list -q
	[ -z "$output" ] # the cache dir is not a container
}

@test "seccomp: a profile that denies execveat runs, with the compiled filter cached and not (no trampoline exec)" {
	# A foreground run may exec the program through a trampoline with execveat; the
	# cached filter must remember that this profile forbids it (a run that ignored it
	# would fail to start the program: exit 126, no output from it).
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["execveat"],"action":"SCMP_ACT_ERRNO"}]}'
	set_args /bin/probe syscall execveat
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = EPERM ] || { echo "cold: $status $output" >&2; false; } # the probe ran: the filter answered
	[ "$(ls "$SBX_ROOT/@seccomp-cache" | wc -l)" -eq 1 ]
	sbx run --bundle "$BUNDLE" "$ID-2"
	[ "$output" = EPERM ] || { echo "cached: $status $output" >&2; false; }
	# denied only with the flags the trampoline passes (AT_EMPTY_PATH): not outright either
	seccomp_config '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["execveat"],"action":"SCMP_ACT_ERRNO",
		"args":[{"index":4,"value":4096,"op":"SCMP_CMP_EQ"}]}]}'
	set_args true
	for i in 1 2; do
		sbx run --bundle "$BUNDLE" "$ID-c$i"
		[ "$status" -eq 0 ] || { echo "conditional, run $i: $status $output" >&2; false; }
	done
	[ "$(ls "$SBX_ROOT/@seccomp-cache" | wc -l)" -eq 2 ]
}

@test "seccomp: SCMP_ACT_NOTIFY sends the listener fd and the process state to listenerPath" {
	local sock=$BATS_TEST_TMPDIR/agent.sock
	"$SBX_FIXTURES/seccomp-agent" "$sock" 42 >"$BATS_TEST_TMPDIR/agent.out" 2>&1 &
	local agent=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.05; done
	seccomp_config "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$sock\",\"listenerMetadata\":\"meta-data\",
		\"syscalls\":[{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
	set_args /bin/probe syscall getcwd
	sbx run --bundle "$BUNDLE" "$ID"
	kill "$agent" 2>/dev/null || true
	wait "$agent" 2>/dev/null || true
	cat "$BATS_TEST_TMPDIR/agent.out" >&2
	[ "$output" = ENOMSG ] # errno 42, chosen by the agent
	local state
	state=$(sed -n 's/^state: //p' "$BATS_TEST_TMPDIR/agent.out")
	jq -e --arg id "$ID" '.ociVersion and .fds == ["seccompFd"] and (.pid > 0) and .metadata == "meta-data"
		and .state.id == $id' <<<"$state"
	grep -q "eof-after-state: yes" "$BATS_TEST_TMPDIR/agent.out"
	grep -q "notified" "$BATS_TEST_TMPDIR/agent.out"
}

@test "seccomp: the shipped profiles are what config/seccomp/profiles.py generates" {
	python3 "$PROFILES/profiles.py" --check
	for p in default python; do
		use_profile "$p"
		set_args sh -c 'echo ok | cat'
		sbx run --bundle "$BUNDLE" "$ID-$p"
		[ "$output" = ok ]
	done
}
