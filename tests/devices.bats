#!/usr/bin/env bats
# config-linux.md "Default Devices" and "Devices", runtime-linux.md "Dev symbolic
# links": which device nodes the container gets, with which numbers, modes and
# owners; that they work; and that a hostile rootfs cannot turn device setup into
# writes on the host (CVE-2025-31133, CVE-2026-41579).

load helpers

# process.args = sh -c SCRIPT (set_args would split a multi-line script into words)
set_script() {
	update_config --arg s "$1" '.process.args = ["sh", "-c", $s]'
}

set_devices() {
	update_config --argjson d "$1" '.linux.devices = $d'
}

# Drop the /dev tmpfs so the rootfs's own /dev is what the runtime works in.
no_dev_tmpfs() {
	update_config '.mounts |= map(select(.destination != "/dev"))'
}

# A listing of a host directory that changes if anything in it does: names, types,
# sizes, modes, link targets and contents.
snapshot_dir() {
	local dir=$1
	(cd "$dir" && find . -mindepth 1 -printf '%p %y %m %s %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
	stat -c '%Y.%y %h %a %U' "$dir"
}

# ------------------------------------------------------------------ default devices

@test "default devices: null zero full random urandom tty are char devices with the right numbers and mode 0666" {
	set_script 'for d in null zero full random urandom tty; do echo "$d $(/bin/probe stat /dev/$d)"; done'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "null char 1:3 0666 0:0" ]
	[ "${lines[1]}" = "zero char 1:5 0666 0:0" ]
	[ "${lines[2]}" = "full char 1:7 0666 0:0" ]
	[ "${lines[3]}" = "random char 1:8 0666 0:0" ]
	[ "${lines[4]}" = "urandom char 1:9 0666 0:0" ]
	[ "${lines[5]}" = "tty char 5:0 0666 0:0" ]
}

@test "default devices: /dev/null swallows writes and reads empty, /dev/zero reads zeros, /dev/full gives ENOSPC, urandom/random read" {
	set_script 'echo discard >/dev/null && echo null-write-ok
		/bin/probe read /dev/null
		head -c 4096 /dev/zero | od -An -v -tx1 | tr -s " \n" "\n\n" | grep -v "^$" | sort -u | tr "\n" " "; echo
		head -c 4096 /dev/zero | wc -c
		dd if=/dev/zero of=/dev/full bs=1 count=1 2>&1 | grep -c "No space left on device"
		head -c 32 /dev/urandom | wc -c
		head -c 32 /dev/random | wc -c'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = null-write-ok ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = "00 " ]
	[ "${lines[3]}" = 4096 ]
	[ "${lines[4]}" = 1 ]
	[ "${lines[5]}" = 32 ]
	[ "${lines[6]}" = 32 ]
}

@test "default devices: /dev/tty exists but there is no controlling terminal to open (ENXIO)" {
	set_script '/bin/probe read /dev/tty; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = ENXIO ]
}

@test "default devices under a user namespace: the right types and numbers, and usable" {
	requires userns
	use_userns
	set_script 'for d in null zero full random urandom tty; do echo "$d $(/bin/probe stat /dev/$d | cut -d" " -f1,2)"; done
		echo discard >/dev/null && echo null-write-ok
		/bin/probe read /dev/null
		head -c 4096 /dev/zero | wc -c
		dd if=/dev/zero of=/dev/full bs=1 count=1 2>&1 | grep -c "No space left on device"
		head -c 32 /dev/urandom | wc -c'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "null char 1:3" ]
	[ "${lines[1]}" = "zero char 1:5" ]
	[ "${lines[2]}" = "full char 1:7" ]
	[ "${lines[3]}" = "random char 1:8" ]
	[ "${lines[4]}" = "urandom char 1:9" ]
	[ "${lines[5]}" = "tty char 5:0" ]
	[ "${lines[6]}" = null-write-ok ]
	[ "${lines[7]}" = 0 ]
	[ "${lines[8]}" = 4096 ]
	[ "${lines[9]}" = 1 ]
	[ "${lines[10]}" = 32 ]
}

@test "default devices under a user namespace: each bind of a host node is nosuid,noexec" {
	requires userns
	use_userns
	set_args sh -c 'grep -E " /dev/(null|zero|full|random|urandom|tty) " /proc/self/mountinfo | cut -d" " -f5,6'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 6 ]
	for l in "${lines[@]}"; do [[ "$l" == *nosuid* && "$l" == *noexec* ]] || { echo "$l" >&2; false; }; done
}

@test "default devices: the rootfs's own /dev is used when there is no /dev tmpfs, and the nodes are created there" {
	no_dev_tmpfs
	set_script '/bin/probe stat /dev/null; /bin/probe stat /dev/zero'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0666 0:0" ]
	[ "${lines[1]}" = "char 1:5 0666 0:0" ]
	[ -c "$BUNDLE/rootfs/dev/null" ]
}

@test "default devices: an existing correct node in the rootfs's /dev is accepted" {
	no_dev_tmpfs
	mknod -m 0666 "$BUNDLE/rootfs/dev/null" c 1 3
	set_script '/bin/probe stat /dev/null; echo x >/dev/null && echo ok'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0666 0:0" ]
	[ "${lines[1]}" = ok ]
}

@test "default devices: a regular file at /dev/zero in the rootfs (no /dev tmpfs) is an error, not used" {
	no_dev_tmpfs
	echo not-a-device >"$BUNDLE/rootfs/dev/zero"
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "/dev/zero"
	[ "$(cat "$BUNDLE/rootfs/dev/zero")" = not-a-device ]
}

# ------------------------------------------------------------------ /dev symlinks

@test "/dev/ptmx is a symlink to pts/ptmx and opens a new pty master" {
	set_script '/bin/probe stat /dev/ptmx; readlink /dev/ptmx; /bin/probe write /dev/ptmx; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "link "* ]]
	[ "${lines[1]}" = pts/ptmx ]
	[ "${lines[2]}" = ok ]
}

@test "/dev/fd, /dev/stdin, /dev/stdout, /dev/stderr are symlinks into /proc/self/fd and work" {
	# append: stdout is a file here, and ">" through /proc/self/fd/1 would truncate it
	set_script 'for l in fd stdin stdout stderr; do echo "$l -> $(readlink /dev/$l)"; done
		echo via-stdout >>/dev/stdout; echo via-stderr >>/dev/stderr; echo via-fd1 >>/dev/fd/1'
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	local expected
	expected=$(printf '%s\n' 'fd -> /proc/self/fd' 'stdin -> /proc/self/fd/0' 'stdout -> /proc/self/fd/1' \
		'stderr -> /proc/self/fd/2' via-stdout via-fd1)
	[ "$stdout" = "$expected" ]
	[ "$stderr" = via-stderr ]
}

@test "/dev/fd and /dev/std* are not created when /proc is not mounted; /dev/ptmx still is" {
	update_config '.mounts |= map(select(.destination != "/proc")) | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
	set_script 'for l in fd stdin stdout stderr ptmx; do echo "$l $(/bin/probe stat /dev/$l | cut -d" " -f1)"; done'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fd ENOENT" ]
	[ "${lines[1]}" = "stdin ENOENT" ]
	[ "${lines[2]}" = "stdout ENOENT" ]
	[ "${lines[3]}" = "stderr ENOENT" ]
	[ "${lines[4]}" = "ptmx link" ]
}

# ------------------------------------------------------------------ linux.devices

@test "linux.devices: a char device is created with its fileMode (0660) and uid/gid" {
	set_devices '[{"path":"/dev/mynull","type":"c","major":1,"minor":3,"fileMode":432,"uid":1,"gid":2}]'
	# root without CAP_DAC_OVERRIDE (default caps) is neither owner nor group: no access
	set_script '/bin/probe stat /dev/mynull; /bin/probe read /dev/mynull; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0660 1:2" ]
	[ "${lines[1]}" = EACCES ]
}

@test "linux.devices: fileMode with the file-type bits of its type (podman --privileged: 8612 = S_IFCHR|0644) is taken; other type bits are refused" {
	set_devices '[{"path":"/dev/mynull","type":"c","major":1,"minor":3,"fileMode":8612},
		{"path":"/dev/myloop","type":"b","major":7,"minor":200,"fileMode":25008}]'
	set_script '/bin/probe stat /dev/mynull; /bin/probe stat /dev/myloop'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0644 0:0" ]
	[ "${lines[1]}" = "block 7:200 0660 0:0" ]
	# an entry without fileMode after one with a gid (review finding: an unset value was read)
	set_devices '[{"path":"/dev/a1","type":"c","major":1,"minor":3,"fileMode":438,"gid":65534},{"path":"/dev/a2","type":"c","major":1,"minor":5}]'
	set_args true
	sbx_ok run --bundle "$BUNDLE" "$ID-c"
	# a block device's bits on a char device entry
	set_devices '[{"path":"/dev/mynull","type":"c","major":1,"minor":3,"fileMode":25008}]'
	sbx_split run --bundle "$BUNDLE" "$ID-b"
	assert_one_line_error "linux.devices[0].fileMode: 25008 (060660) has file-type bits that are not those of type 'c'"
}

@test "linux.devices: an entry for a default device path (/dev/null 0600 1:2, /dev/tty 0660 gid 5) takes priority: its mode and owner apply" {
	set_devices '[{"path":"/dev/null","type":"c","major":1,"minor":3,"fileMode":384,"uid":1,"gid":2},
		{"path":"/dev/tty","type":"c","major":5,"minor":0,"fileMode":432,"gid":5}]'
	set_script '/bin/probe stat /dev/null; /bin/probe stat /dev/tty'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0600 1:2" ]
	[ "${lines[1]}" = "char 5:0 0660 0:5" ]
}

@test "linux.devices: without fileMode/uid/gid the node is usable by the container's root" {
	set_devices '[{"path":"/dev/mynull","type":"c","major":1,"minor":3}]'
	set_script '/bin/probe stat /dev/mynull | cut -d" " -f1,2,4; echo x >/dev/mynull && echo ok'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0:0" ]
	[ "${lines[1]}" = ok ]
}

@test "linux.devices: fileMode is exact, whatever the umask (0600 and 0777)" {
	set_devices '[{"path":"/dev/a","type":"c","major":1,"minor":5,"fileMode":384},
		{"path":"/dev/b","type":"c","major":1,"minor":7,"fileMode":511}]'
	set_script '/bin/probe stat /dev/a; /bin/probe stat /dev/b'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:5 0600 0:0" ]
	[ "${lines[1]}" = "char 1:7 0777 0:0" ]
}

@test "linux.devices: a block device (type b) is created as a block node" {
	set_devices '[{"path":"/dev/myloop","type":"b","major":7,"minor":200,"fileMode":384}]'
	set_args /bin/probe stat /dev/myloop
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "block 7:200 0600 0:0" ]
}

@test "linux.devices: type u (unbuffered) is a char device" {
	set_devices '[{"path":"/dev/myzero","type":"u","major":1,"minor":5,"fileMode":438}]'
	set_script '/bin/probe stat /dev/myzero; head -c 8 /dev/myzero | wc -c'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:5 0666 0:0" ]
	[ "${lines[1]}" = 8 ]
}

@test "linux.devices: a fifo (type p) is created and works" {
	set_devices '[{"path":"/dev/myfifo","type":"p","fileMode":420}]'
	set_script '/bin/probe stat /dev/myfifo; (echo through-fifo >/dev/myfifo &) ; cat /dev/myfifo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fifo 0:0 0644 0:0" ]
	[ "${lines[1]}" = through-fifo ]
}

@test "linux.devices: a device outside /dev (/mydev/null) is created, with its directory" {
	set_devices '[{"path":"/mydev/null","type":"c","major":1,"minor":3,"fileMode":438}]'
	set_script '/bin/probe stat /mydev; /bin/probe stat /mydev/null; echo x >/mydev/null && echo ok'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "dir "* ]]
	[ "${lines[1]}" = "char 1:3 0666 0:0" ]
	[ "${lines[2]}" = ok ]
}

@test "linux.devices: an existing different file at the path is an error naming linux.devices[0]" {
	echo regular >"$BUNDLE/rootfs/work/mydev"
	set_devices '[{"path":"/work/mydev","type":"c","major":1,"minor":3}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.devices[0]"
	[ "$(cat "$BUNDLE/rootfs/work/mydev")" = regular ]
	assert_no_state "$ID"
}

@test "linux.devices: an existing device with other numbers at the path is an error naming linux.devices[1]" {
	mknod -m 0666 "$BUNDLE/rootfs/work/mydev" c 1 5
	set_devices '[{"path":"/dev/ok","type":"c","major":1,"minor":3},{"path":"/work/mydev","type":"c","major":1,"minor":3}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.devices[1]"
}

@test "linux.devices: an existing directory at the path is an error naming linux.devices[0]" {
	mkdir "$BUNDLE/rootfs/work/mydev"
	set_devices '[{"path":"/work/mydev","type":"p"}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.devices[0]"
}

@test "linux.devices: an existing matching node at the path is accepted" {
	mknod -m 0666 "$BUNDLE/rootfs/work/mydev" c 1 3
	set_devices '[{"path":"/work/mydev","type":"c","major":1,"minor":3}]'
	set_args /bin/probe stat /work/mydev
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$output" == "char 1:3 "* ]]
}

@test "linux.devices: a path through an absolute symlink in the rootfs is created inside the container root" {
	local host=$BATS_TEST_TMPDIR/hostdev
	mkdir "$host"
	ln -s "$host" "$BUNDLE/rootfs/work/link"
	mkdir -p "$BUNDLE/rootfs$host"
	set_devices '[{"path":"/work/link/mynull","type":"c","major":1,"minor":3,"fileMode":438}]'
	set_args /bin/probe stat /work/link/mynull
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "char 1:3 0666 0:0" ]
	[ -z "$(ls -A "$host")" ]
	[ -c "$BUNDLE/rootfs$host/mynull" ]
}

@test "linux.devices under a user namespace: as root the runtime makes the node (1:11 /dev/kmsg), a fifo gets its container uid/gid" {
	requires userns
	use_userns
	set_devices '[{"path":"/dev/kmsg","type":"c","major":1,"minor":11},
		{"path":"/dev/myfifo","type":"p","fileMode":420,"uid":1,"gid":2}]'
	set_script '/bin/probe stat /dev/kmsg | cut -d" " -f1,2; /bin/probe stat /dev/myfifo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:11" ]
	[ "${lines[1]}" = "fifo 0:0 0644 1:2" ]
}

@test "linux.devices under a user namespace: a node the host lacks (b 1:5) or has with other numbers gets the config's numbers, mode and owner, and works" {
	requires userns
	use_userns
	# /dev/kmsg is 1:11 on the host: the config's 1:3 is what the container gets
	set_devices '[{"path":"/dev/foo","type":"b","major":1,"minor":5,"uid":10,"gid":11},
		{"path":"/dev/kmsg","type":"c","major":1,"minor":3,"fileMode":432,"uid":0,"gid":5},
		{"path":"/dev/myzero","type":"c","major":1,"minor":5}]'
	set_script '/bin/probe stat /dev/foo; /bin/probe stat /dev/kmsg; echo x > /dev/kmsg && echo written;
		head -c 4 /dev/myzero | od -An -tx1; m=$(grep -E " /dev/(foo|kmsg) " /proc/self/mountinfo);
		echo "$m" | grep -c "nosuid,noexec"; echo "$m" | grep -c nodev || true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "block 1:5 0666 10:11" ]
	[ "${lines[1]}" = "char 1:3 0660 0:5" ]
	[ "${lines[2]}" = written ]
	[ "$(echo ${lines[3]})" = "00 00 00 00" ]
	# nosuid and noexec, and not nodev (the node must open)
	[ "${lines[4]}" = 2 ]
	[ "${lines[5]}" = 0 ]
}

@test "linux.devices under a user namespace: an owner no mapping covers is refused naming the field" {
	requires userns
	use_userns
	set_devices '[{"path":"/dev/foo","type":"c","major":1,"minor":3,"uid":70000}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.devices[0].uid 70000 is not mapped"
	assert_no_state "$ID"
}

# ------------------------------------------------------------------ hostile rootfs

@test "CVE-2025-31133: rootfs /dev/null symlinked to /proc/sys/kernel/core_pattern (no /dev tmpfs): create fails, host core_pattern unchanged" {
	local before
	before=$(cat /proc/sys/kernel/core_pattern)
	no_dev_tmpfs
	ln -s /proc/sys/kernel/core_pattern "$BUNDLE/rootfs/dev/null"
	sbx_split create --bundle "$BUNDLE" "$ID"
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ]
	assert_one_line_error "/dev/null"
	assert_no_state "$ID"
}

@test "CVE-2025-31133: a config bind mount of a host file at /dev/null: create fails, the host file is unchanged" {
	local host=$BATS_TEST_TMPDIR/fake-null
	echo keep >"$host"
	update_config --arg s "$host" '.mounts += [{"destination":"/dev/null","type":"bind","source":$s,"options":["bind"]}]'
	sbx_split create --bundle "$BUNDLE" "$ID"
	assert_one_line_error "/dev/null"
	[ "$(cat "$host")" = keep ]
	assert_no_state "$ID"
}

@test "CVE-2026-41579: rootfs /dev symlinked to a host directory: the host directory is untouched" {
	local host=/tmp/sbx-cve-2026-41579-$$-$RANDOM
	mkdir "$host"
	echo marker >"$host/ptmx"
	touch -d '2001-01-01' "$host/ptmx" "$host"
	local before
	before=$(snapshot_dir "$host")
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s "$host" "$BUNDLE/rootfs/dev"
	set_args /bin/true
	sbx_split run --bundle "$BUNDLE" "$ID"
	local after
	after=$(snapshot_dir "$host")
	local listing
	listing=$(ls -A "$host")
	rm -rf "$host"
	[ "$listing" = ptmx ]
	[ "$after" = "$before" ]
	# it either failed with one line, or ran
	[ "$status" -eq 0 ] || [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
}

@test "CVE-2026-41579: the same without a /dev tmpfs (devices made straight in the symlinked dir): host dir untouched" {
	local host=/tmp/sbx-cve-2026-41579-$$-$RANDOM
	mkdir "$host"
	echo marker >"$host/ptmx"
	touch -d '2001-01-01' "$host/ptmx" "$host"
	local before
	before=$(snapshot_dir "$host")
	no_dev_tmpfs
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s "$host" "$BUNDLE/rootfs/dev"
	set_args /bin/true
	sbx_split run --bundle "$BUNDLE" "$ID"
	local after listing
	after=$(snapshot_dir "$host")
	listing=$(ls -A "$host")
	rm -rf "$host"
	[ "$listing" = ptmx ]
	[ "$after" = "$before" ]
	[ "$status" -eq 0 ] || [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
}

@test "CVE-2026-41579: rootfs /dev as a relative symlink climbing to a host directory: host dir untouched" {
	local name=sbx-cve-2026-41579-rel-$$-$RANDOM
	local host=/tmp/$name
	mkdir "$host"
	echo marker >"$host/ptmx"
	touch -d '2001-01-01' "$host/ptmx" "$host"
	local before
	before=$(snapshot_dir "$host")
	no_dev_tmpfs
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s "../../../../../../../../../../tmp/$name" "$BUNDLE/rootfs/dev"
	set_args /bin/true
	sbx_split run --bundle "$BUNDLE" "$ID"
	local after listing
	after=$(snapshot_dir "$host")
	listing=$(ls -A "$host")
	rm -rf "$host"
	[ "$listing" = ptmx ]
	[ "$after" = "$before" ]
	[ "$status" -eq 0 ] || [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
}

@test "CVE-2026-41579 under a user namespace: rootfs /dev symlinked to a host directory stays untouched" {
	requires userns
	use_userns
	local host=/tmp/sbx-cve-2026-41579-userns-$$-$RANDOM
	mkdir "$host"
	echo marker >"$host/ptmx"
	touch -d '2001-01-01' "$host/ptmx" "$host"
	local before
	before=$(snapshot_dir "$host")
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s "$host" "$BUNDLE/rootfs/dev"
	set_args /bin/true
	sbx_split run --bundle "$BUNDLE" "$ID"
	local after listing
	after=$(snapshot_dir "$host")
	listing=$(ls -A "$host")
	rm -rf "$host"
	[ "$listing" = ptmx ]
	[ "$after" = "$before" ]
}

# ------------------------------------------------------------------ mknod

@test "without CAP_MKNOD (default caps, no user namespace) mknod in the container fails with EPERM" {
	update_config '.root.readonly = false'
	set_script '/bin/probe mknod /tmp/x; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = EPERM ]
	[ ! -e "$BUNDLE/rootfs/tmp/x" ]
}

@test "with CAP_MKNOD added, mknod in the container works (the EPERM above is the capability)" {
	update_config '.root.readonly = false
		| .process.capabilities.bounding += ["CAP_MKNOD"]
		| .process.capabilities.effective += ["CAP_MKNOD"]
		| .process.capabilities.permitted += ["CAP_MKNOD"]'
	set_script '/bin/probe mknod /tmp/x; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
	[ -c "$BUNDLE/rootfs/tmp/x" ]
}
