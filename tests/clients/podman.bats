#!/usr/bin/env bats
# podman 4.3 -> conmon -> the runtime under test (CONTRACT.md §3). Every test looks at
# the effect from inside the container. Run through tests/clients/run.sh.

load clients
bats_require_minimum_version 1.5.0

teardown() {
	podman rm -af -t 0 >/dev/null 2>&1 || true
}

# podman's view of a container: {{.State.X}}
pstate() {
	podman inspect --format "{{.State.$2}}" "$1"
}

# The memory limit as the container sees it (cgroup v1 or v2 mount).
MEMLIMIT='cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max'

@test "podman: the runtime in use is the one under test" {
	ok podman info --format '{{.Host.OCIRuntime.Path}}'
	[ "$output" = "$SBX_CLIENT_RT" ]
}

@test "podman: run --rm passes the exit code through and removes the container" {
	run podman run --rm --name rm-exit "$IMG" sh -c 'echo from-inside; exit 42'
	[ "$status" -eq 42 ]
	[ "$output" = from-inside ]
	run podman container exists rm-exit
	[ "$status" -eq 1 ]
}

@test "podman: a missing program is exit 127" {
	run -127 podman run --rm "$IMG" /no/such/program
}

@test "podman: run -i feeds stdin" {
	run sh -c "echo sbx-stdin | podman run --rm -i $IMG sh -c 'read x; echo got:\$x'"
	[ "$status" -eq 0 ]
	[ "$output" = got:sbx-stdin ]
}

@test "podman: run -t gives the process a pty" {
	on_tty podman run --rm -t "$IMG" sh -c "'tty; [ -t 0 ] && [ -t 1 ] && echo both-tty'"
	[ "$status" -eq 0 ]
	[[ $output =~ /dev/pts/[0-9]+ ]]
	[[ $output == *both-tty* ]]
}

@test "podman: run -d, then exec (exit code, same pid namespace) and exec -t" {
	ok podman run -d --name dexec "$IMG" sleep 1000
	ok podman exec dexec sh -c 'tr "\\0" " " < /proc/1/cmdline'
	[[ $output == sleep*1000* ]]
	run podman exec dexec sh -c 'exit 7'
	[ "$status" -eq 7 ]
	ok podman exec -e SBX_VAR=v1 --workdir /tmp dexec sh -c 'echo $SBX_VAR $(pwd)'
	[ "$output" = "v1 /tmp" ]
	on_tty podman exec -t dexec tty
	[ "$status" -eq 0 ]
	[[ $output =~ /dev/pts/[0-9]+ ]]
}

@test "podman: stop sends TERM (the trap runs), then KILL after the timeout" {
	d=$(shared_dir)
	ok podman run -d --name trapper -v "$d:/data" "$IMG" sh -c \
		'trap "echo got-term > /data/term; exit 5" TERM; echo up > /data/ready; while :; do sleep 0.1; done'
	wait_file "$d/ready"
	ok podman stop -t 10 trapper
	[ "$(cat "$d/term")" = got-term ]
	[ "$(pstate trapper ExitCode)" = 5 ]
	# pid 1 without a handler ignores TERM: podman escalates to KILL
	ok podman run -d --name stubborn "$IMG" sleep 1000
	ok podman stop -t 1 stubborn
	[ "$(pstate stubborn ExitCode)" = 137 ]
}

@test "podman: kill -s USR1 reaches the process, kill ends it with 137" {
	d=$(shared_dir)
	ok podman run -d --name killme -v "$d:/data" "$IMG" sh -c \
		'trap "echo got-usr1 > /data/usr1" USR1; echo up > /data/ready; while :; do sleep 0.1; done'
	wait_file "$d/ready"
	ok podman kill -s USR1 killme
	wait_file "$d/usr1"
	[ "$(cat "$d/usr1")" = got-usr1 ]
	[ "$(pstate killme Running)" = true ]
	ok podman kill killme
	ok podman wait killme
	[ "$output" = 137 ]
}

@test "podman: rm -f of a running container ends its processes" {
	ok podman run -d --name rmf "$IMG" sleep 1000
	pid=$(pstate rmf Pid)
	[ "$pid" -gt 0 ]
	kill -0 "$pid"
	ok podman rm -f -t 0 rmf
	! kill -0 "$pid" 2>/dev/null
	run podman container exists rmf
	[ "$status" -eq 1 ]
}

@test "podman: pause freezes the container, unpause thaws it" {
	rootless_skip "an unprivileged user has no cgroup on cgroup v1 (podman: \"not supported and ignored\")"
	d=$(shared_dir)
	ok podman run -d --name frozen -v "$d:/data" "$IMG" sh -c "$COUNTER"
	wait_file "$d/n"
	ok podman pause frozen
	[ "$(pstate frozen Status)" = paused ]
	a=$(cat "$d/n")
	sleep 0.6
	b=$(cat "$d/n")
	[ "$a" = "$b" ]
	ok podman unpause frozen
	sleep 0.6
	c=$(cat "$d/n")
	[ "$c" -gt "$b" ]
	[ "$(pstate frozen Status)" = running ]
}

@test "podman: update --memory changes the limit the container sees" {
	rootless_skip "an unprivileged user has no cgroup on cgroup v1 (podman: \"not supported and ignored\")"
	ok podman run -d --name upd --memory 64m "$IMG" sleep 1000
	ok podman exec upd sh -c "$MEMLIMIT"
	[ "$output" = 67108864 ]
	ok podman update --memory 96m upd
	ok podman exec upd sh -c "$MEMLIMIT"
	[ "$output" = 100663296 ]
}

@test "podman: --memory sets the limit and an allocation beyond it is OOM-killed (137)" {
	rootless_skip "an unprivileged user has no cgroup on cgroup v1 (podman: \"not supported and ignored\")"
	ok podman run --rm --memory 48m --memory-swap 48m "$IMG" sh -c "$MEMLIMIT"
	[ "$output" = 50331648 ]
	# a child hog: the shell sees it killed by SIGKILL, the cgroup counts an oom kill
	ok podman run --rm --memory 32m --memory-swap 32m "$IMG" sh -c \
		'tail /dev/zero; echo "hog=$?"; cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events 2>/dev/null | grep oom_kill'
	[[ $output == *hog=137* ]]
	[[ $output =~ oom_kill\ [1-9] ]]
	# the hog as the container's process: its exit code is 137
	run podman run --name oomed --memory 32m --memory-swap 32m "$IMG" tail /dev/zero
	[ "$status" -eq 137 ]
}

@test "podman: --pids-limit caps the number of tasks" {
	rootless_skip "an unprivileged user has no cgroup on cgroup v1 (podman: \"not supported and ignored\")"
	run podman run --rm --pids-limit 10 "$IMG" sh -c \
		'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; for i in $(seq 15); do sleep 3 & done 2>&1; wait'
	[ "${lines[0]}" = 10 ]
	[[ $output == *"can't fork"* ]]
}

@test "podman: --network none leaves only loopback, --network host sees the host's" {
	ok podman run --rm --network none "$IMG" ls /sys/class/net
	[ "$output" = lo ]
	ok podman run --rm --network host "$IMG" ls /sys/class/net
	[ "$output" = "$(ls /sys/class/net)" ]
	[ "$output" != lo ]
}

@test "podman: --read-only root, with podman's writable /tmp" {
	run podman run --rm --read-only "$IMG" sh -c 'touch /etc/x; echo "etc=$?"; touch /tmp/x && echo tmp-ok'
	[[ $output == *"Read-only file system"* ]]
	[[ $output == *etc=1* ]]
	[[ $output == *tmp-ok* ]]
}

@test "podman: --uidmap maps root in the container to the host range" {
	d=$(shared_dir)
	# rootless, the ids are those of podman's own user namespace, where 1 is the user's
	# first subordinate id (/etc/subuid): a host range either way
	first=100000 host=100000
	if [ -n "${SBX_CLIENT_ROOTLESS:-}" ]; then
		first=1
		host=$(awk -F: -v u="$(id -un "$SBX_CLIENT_ROOTLESS_USER")" '$1 == u { print $2; exit }' /etc/subuid)
	fi
	ok podman run --rm --uidmap "0:$first:65536" --gidmap "0:$first:65536" -v "$d:/data" "$IMG" \
		sh -c 'cat /proc/self/uid_map; id -u; touch /data/made-by-root'
	[[ ${lines[0]} =~ ^\ *0\ +$first\ +65536$ ]]
	[ "${lines[1]}" = 0 ]
	[ "$(stat -c %u "$d/made-by-root")" = "$host" ]
}

@test "podman: --cap-drop takes the capability away" {
	ok podman run --rm "$IMG" sh -c 'touch /tmp/f && chown 1 /tmp/f && echo chown-ok'
	[ "$output" = chown-ok ]
	run podman run --rm --cap-drop CHOWN "$IMG" sh -c 'grep CapEff /proc/self/status; touch /tmp/f; chown 1 /tmp/f'
	[ "$status" -ne 0 ]
	[[ $output == *"Operation not permitted"* ]]
	eff=$(echo "$output" | awk '/CapEff/ { print $2 }')
	[ $((0x$eff & 1)) -eq 0 ] # bit 0 is CAP_CHOWN
}

@test "podman: --security-opt seccomp=FILE applies a custom profile" {
	prof=$(shared_dir)/no-mkdir.json # (readable by the rootless user, unlike bats' temp dir)
	cat >"$prof" <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
EOF
	run podman run --rm --security-opt "seccomp=$prof" "$IMG" \
		sh -c 'grep "^Seccomp:" /proc/self/status; mkdir /tmp/d'
	[ "$status" -ne 0 ]
	[[ $output == *"Seccomp:"*2* ]]
	[[ $output == *"Operation not permitted"* ]]
	ok podman run --rm "$IMG" mkdir /tmp/d
}

@test "podman: --init runs catatonit as pid 1" {
	[ -x /usr/libexec/podman/catatonit ] || [ -x /usr/bin/catatonit ] || {
		[ -z "${SBX_MUST_WORK:-}" ] || false
		skip "catatonit is not installed"
	}
	ok podman run --rm --init "$IMG" sh -c 'readlink /proc/1/exe; echo "me=$$"'
	[ "${lines[0]}" = /run/podman-init ]
	[ "${lines[1]}" != me=1 ]
}

@test "podman: --preserve-fds hands fd 3 to the container" {
	echo fd3-content >"$BATS_TEST_TMPDIR/fd3"
	run sh -c "podman run --rm --preserve-fds 1 $IMG sh -c 'cat <&3' 3<$BATS_TEST_TMPDIR/fd3"
	[ "$status" -eq 0 ]
	[ "$output" = fd3-content ]
}

@test "podman: -v bind mounts a host directory (rw, and :ro)" {
	d=$(shared_dir)
	echo from-host >"$d/in"
	ok podman run --rm -v "$d:/data" "$IMG" sh -c 'cat /data/in; echo from-container > /data/out'
	[ "$output" = from-host ]
	[ "$(cat "$d/out")" = from-container ]
	run podman run --rm -v "$d:/data:ro" "$IMG" sh -c 'echo x > /data/ro'
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	[ ! -e "$d/ro" ]
}

@test "podman: --tmpfs mounts a sized tmpfs" {
	run podman run --rm --tmpfs /scratch:size=1m "$IMG" sh -c \
		'grep " /scratch " /proc/mounts; dd if=/dev/zero of=/scratch/f bs=1k count=2048 2>&1; echo "dd=$?"'
	[[ ${lines[0]} == "tmpfs /scratch tmpfs "*size=1024k* ]]
	[[ $output == *"No space left on device"* ]]
	[[ $output == *dd=1* ]]
}

@test "podman: the stock bridge network: eth0, the stock ping_group_range, and the host reaches a server inside" {
	rootless_skip "the rootless default network is slirp4netns, and this host keeps /dev/net/tun from users"
	# Debian's containers.conf sets default_sysctls net.ipv4.ping_group_range=0 0 in the
	# network namespace podman made and hands over by path
	ok podman run --rm "$IMG" sh -c 'cat /proc/sys/net/ipv4/ping_group_range; ls /sys/class/net'
	[[ ${lines[0]} =~ ^0[[:space:]]+0$ ]]
	[[ $output == *eth0* ]]
	# a server in the container, a client on the host: traffic only between the two
	ok podman run -d --name web "$IMG" sh -c 'while :; do echo hello-from-bridge | nc -l -p 8080; done'
	ip=$(podman inspect --format '{{.NetworkSettings.IPAddress}}' web)
	[[ $ip =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]]
	for _ in $(seq 50); do
		got=$(timeout 2 bash -c "exec 3<>/dev/tcp/$ip/8080 && cat <&3" 2>/dev/null) && [ -n "$got" ] && break
		sleep 0.1
	done
	[ "$got" = hello-from-bridge ]
}

@test "podman: --sysctl sets a namespaced sysctl (net.* in podman's network namespace, kernel.msgmax in the ipc one)" {
	net=()
	[ -n "${SBX_CLIENT_ROOTLESS:-}" ] && net=(--network none)
	host_msgmax=$(cat /proc/sys/kernel/msgmax)
	ok podman run --rm "${net[@]}" --sysctl net.ipv4.ping_group_range="0 1000" --sysctl kernel.msgmax=4096 "$IMG" \
		cat /proc/sys/net/ipv4/ping_group_range /proc/sys/kernel/msgmax
	[[ ${lines[0]} =~ ^0[[:space:]]+1000$ ]]
	[ "${lines[1]}" = 4096 ]
	[ "$(cat /proc/sys/kernel/msgmax)" = "$host_msgmax" ]
}

@test "podman: --hostname names the UTS namespace" {
	ok podman run --rm --hostname sbx-host-name "$IMG" hostname
	[ "$output" = sbx-host-name ]
	[ "$(hostname)" != sbx-host-name ]
}

@test "podman: top lists the container's processes, restart runs it again" {
	ok podman run -d --name topper "$IMG" sleep 1000
	ok podman top topper pid args
	[[ $output == *"sleep 1000"* ]]
	pid1=$(pstate topper Pid)
	ok podman restart -t 0 topper
	[ "$(pstate topper Running)" = true ]
	[ "$(pstate topper Pid)" != "$pid1" ]
	ok podman exec topper sh -c 'tr "\0" " " < /proc/1/cmdline'
	[[ $output == sleep*1000* ]]
}

@test "podman: --privileged gives the host's devices and every capability" {
	ok podman run --rm --privileged "$IMG" sh -c 'grep CapEff /proc/self/status; ls /dev'
	eff=$(echo "$output" | awk '/CapEff/ { print $2 }')
	[ $((0x$eff & (1 << 21))) -ne 0 ] # CAP_SYS_ADMIN
	# a host device beyond the default set: /dev/kmsg is a char device on every Linux host
	ok podman run --rm --privileged "$IMG" sh -c '[ -c /dev/kmsg ] && echo kmsg-is-char'
	[ "$output" = kmsg-is-char ]
}

@test "podman: --cgroups=disabled runs the container in podman's own cgroup" {
	rootless_skip "rootless podman 4.3 on cgroup v1 has no cgroup to disable"
	ok podman run --rm --cgroups=disabled "$IMG" sh -c 'echo ran; grep -c sbx-oci /proc/self/cgroup || true'
	[ "${lines[0]}" = ran ]
	[ "${lines[1]}" = 0 ]
}

@test "podman: contrib/podman/README.md, its commands as written (private mount and network namespace)" {
	rootless_skip "the README's rootless commands run in the rootful case, as the user"
	[ "$(basename "$SBX_CLIENT_RT")" = sbx-oci ] || skip "the README is about sbx-oci"
	[ "$SBX_CLIENT_RT" = "$(realpath "$SBX_CLIENT_REPO/sbx-oci")" ] || skip "the README installs the checkout's binary, not this one"
	tar -C "$SBX_FIXTURES/rootfs" -cf "$SBX_CLIENT_TMP/readme-image.tar" .
	TMPDIR=$SBX_CLIENT_TMP ok timeout 300 unshare -mn "$SBX_CLIENT_REPO/tests/clients/follow-readme.sh" "$SBX_CLIENT_REPO/contrib/podman/README.md" \
		"$SBX_CLIENT_REPO" "$SBX_CLIENT_TMP/readme-image.tar" "$SBX_CLIENT_ROOTLESS_USER"
	[[ $output == *"ran as written"* ]]
}
