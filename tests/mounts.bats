#!/usr/bin/env bats
# config.md "Mounts" and "Root", config-linux.md "rootfsPropagation", "maskedPaths",
# "readonlyPaths": what the container's process observes of its filesystem tree, and
# that nothing of it reaches the host (teardown checks the host mount table).

load helpers

# Lines of the container's /proc/self/mountinfo (captured in $output) for mount
# point $1; the last one is the visible mount when several are stacked.
mountinfo_at() {
	awk -v d="$1" '$5 == d' <<<"$output" | tail -n 1
}

# The filesystem type of the visible mount at $1 in the captured mountinfo.
fstype_at() {
	mountinfo_at "$1" | sed 's/.* - //' | awk '{print $1}'
}

# The per-mount options (field 6) of the visible mount at $1.
mntopts_at() {
	mountinfo_at "$1" | awk '{print $6}'
}

# Is option $2 in the comma list $1?
has_opt() {
	[[ ",$1," == *",$2,"* ]]
}

# The opposite, as a command that fails the test (bats ignores a failing "! cmd").
lacks_opt() {
	[[ ",$1," != *",$2,"* ]]
}

# process.args = sh -c SCRIPT (set_args would split a multi-line script into words)
set_script() {
	update_config --arg s "$1" '.process.args = ["sh", "-c", $s]'
}

add_mount() {
	# add_mount DEST TYPE SOURCE OPT... : append a mount to config.json
	local dest=$1 type=$2 src=$3
	shift 3
	local opts
	opts=$(printf '%s\n' "$@" | jq -R . | jq -s 'map(select(. != ""))')
	update_config --arg d "$dest" --arg t "$type" --arg s "$src" --argjson o "$opts" \
		'.mounts += [{"destination":$d,"type":$t,"source":$s,"options":$o}]'
}

# ------------------------------------------------------------------ bind mounts

@test "bind rw: a file written inside the container appears in the host directory" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	echo from-host >"$host/in"
	add_mount /data bind "$host" rbind rw
	set_script 'cat /data/in && echo from-container >/data/out && /bin/probe write /data/new'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = from-host ]
	[ "${lines[1]}" = ok ]
	[ "$(cat "$host/out")" = from-container ]
	[ -f "$host/new" ]
}

@test "bind ro: writing gives EROFS and the host directory is unchanged" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	echo keep >"$host/in"
	add_mount /data bind "$host" rbind ro
	set_script '/bin/probe write /data/new; /bin/probe write /data/in; cat /data/in'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = EROFS ]
	[ "${lines[2]}" = keep ]
	[ "$(ls -A "$host")" = in ]
	[ "$(cat "$host/in")" = keep ]
}

@test "bind of a single file: the container reads the host file at the destination" {
	local host=$BATS_TEST_TMPDIR/hostfile
	echo single-file >"$host"
	add_mount /etc/bound.conf bind "$host" bind ro
	set_script 'cat /etc/bound.conf; /bin/probe stat /etc/bound.conf; /bin/probe write /etc/bound.conf; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = single-file ]
	[[ "${lines[1]}" == "file "* ]]
	[ "${lines[2]}" = EROFS ]
}

@test "bind of a single file rw: a write inside changes the host file" {
	local host=$BATS_TEST_TMPDIR/hostfile
	echo before >"$host"
	add_mount /work/f bind "$host" bind rw
	set_script 'echo after >/work/f'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cat "$host")" = after ]
}

@test "bind with a relative source: resolved against the bundle directory" {
	mkdir "$BUNDLE/shared"
	echo relative-source >"$BUNDLE/shared/marker"
	add_mount /data bind shared rbind ro
	# run from elsewhere: the source must not be resolved against the caller's cwd
	cd "$BATS_TEST_TMPDIR"
	set_args cat /data/marker
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = relative-source ]
}

@test "rbind: sub-mounts of the source come along; bind alone does not bring them" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir -p "$host/sub"
	mount -t tmpfs -o size=1m sbxsub "$host/sub"
	echo in-submount >"$host/sub/marker"
	add_mount /rec bind "$host" rbind ro
	add_mount /norec bind "$host" bind ro
	set_script 'cat /rec/sub/marker; ls -A /norec/sub | wc -l'
	sbx run --bundle "$BUNDLE" "$ID"
	local st=$status out=$output
	umount "$host/sub"
	status=$st output=$out
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = in-submount ]
	[ "${lines[1]}" = 0 ]
}

@test "rro: sub-mounts of a recursive bind are read-only too" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir -p "$host/sub"
	mount -t tmpfs -o size=1m sbxsub "$host/sub"
	add_mount /rec bind "$host" rbind rro
	set_script '/bin/probe write /rec/top; /bin/probe write /rec/sub/inner; true'
	sbx run --bundle "$BUNDLE" "$ID"
	local st=$status out=$output
	local leaked
	leaked=$(ls -A "$host/sub")
	umount "$host/sub"
	status=$st output=$out
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = EROFS ]
	[ -z "$leaked" ]
	[ ! -e "$host/top" ]
}

@test "ro on an rbind: only the top mount is read-only, its sub-mounts stay writable" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir -p "$host/sub"
	mount -t tmpfs -o size=1m sbxsub "$host/sub"
	add_mount /rec bind "$host" rbind ro
	set_script '/bin/probe write /rec/top; /bin/probe write /rec/sub/inner; true'
	sbx run --bundle "$BUNDLE" "$ID"
	local st=$status out=$output
	umount "$host/sub"
	status=$st output=$out
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = ok ]
}

@test "bind: an unknown option is an error naming the mount and the option" {
	add_mount /data bind "$BATS_TEST_TMPDIR" rbind nosuidd
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "nosuidd"
	[[ "$stderr" == *"mounts["* ]]
}

@test "bind: KEY=VALUE file-system data (mode=755,size=1k) is accepted and has no effect, as with runc and crun" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir -m 0750 "$host"
	echo keep >"$host/in"
	add_mount /data bind "$host" nosuid strictatime mode=755 size=1k rbind ro
	set_script '/bin/probe write /data/new; stat -c %a /data; cat /data/in'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = 750 ]
	[ "${lines[2]}" = keep ]
}

@test "mount order: /proc/self/mountinfo lists binds and tmpfs mounts in the config's order" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	add_mount /m1 tmpfs tmpfs size=1k
	add_mount /m2 bind "$host" rbind
	add_mount /m3 tmpfs tmpfs size=1k
	add_mount /m4 bind "$host" bind ro
	set_args sh -c 'cut -d" " -f5 /proc/self/mountinfo | grep "^/m[0-9]$" | tr "\n" " "'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "/m1 /m2 /m3 /m4 " ]
}

@test "bind destination that is a symlink in the rootfs: the mount lands on its target inside the root; a dangling one's target is created (as runc and crun)" {
	update_config '.root.readonly = false'
	mkdir -p "$BUNDLE/rootfs/usr/share/zone"
	echo old >"$BUNDLE/rootfs/usr/share/zone/Rome"
	ln -s ../usr/share/zone/Rome "$BUNDLE/rootfs/etc/localtime"
	ln -s ../foo/bar/here "$BUNDLE/rootfs/etc/dangling"
	ln -s /../../../../escape "$BUNDLE/rootfs/etc/climbing"
	echo new >"$BATS_TEST_TMPDIR/src"
	add_mount /etc/localtime bind "$BATS_TEST_TMPDIR/src" bind ro
	add_mount /etc/dangling bind "$BATS_TEST_TMPDIR/src" bind ro
	add_mount /etc/climbing bind "$BATS_TEST_TMPDIR/src" bind ro
	set_args sh -c 'cat /usr/share/zone/Rome /foo/bar/here /escape; cut -d" " -f5 /proc/self/mountinfo | grep -E "Rome|here|escape"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'new\nnew\nnew\n/usr/share/zone/Rome\n/foo/bar/here\n/escape')" ]
	# on the host: the links stay links, the created target is in the rootfs, nothing outside
	[ -L "$BUNDLE/rootfs/etc/localtime" ]
	[ -f "$BUNDLE/rootfs/foo/bar/here" ]
	[ ! -e /escape ]
	[ "$(cat "$BUNDLE/rootfs/usr/share/zone/Rome")" = old ]
}

# ------------------------------------------------------------------ tmpfs

@test "tmpfs size=1m,mode=700: the root dir has mode 0700, df shows 1 MiB, writing 2 MB gives ENOSPC" {
	add_mount /scratch tmpfs tmpfs size=1m mode=700
	set_script '/bin/probe stat /scratch
		df -k /scratch | tail -n 1 | awk "{print \$2}"
		dd if=/dev/zero of=/scratch/big bs=1024 count=2048 2>&1 >/dev/null | grep -c "No space left"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "dir 0:0 0700 0:0" ]
	[ "${lines[1]}" = 1024 ]
	[ "${lines[2]}" = 1 ]
}

@test "tmpfs without mode= takes the mode of the directory it covers (as runc), 1777 on one made for it; mode= wins" {
	update_config '.root.readonly = false'
	mkdir -m 0712 "$BUNDLE/rootfs/private" "$BUNDLE/rootfs/given"
	chmod 0712 "$BUNDLE/rootfs/private" "$BUNDLE/rootfs/given"
	add_mount /private tmpfs tmpfs size=1m
	add_mount /given tmpfs tmpfs size=1m mode=750
	add_mount /made-for-it tmpfs tmpfs size=1m
	set_args stat -c %a /private /given /made-for-it
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 712 ]
	[ "${lines[1]}" = 750 ]
	[ "${lines[2]}" = 1777 ] # no directory of the image's: the kernel's default
}

@test "tmpfs: an option the filesystem rejects fails the create with one error line" {
	add_mount /scratch tmpfs tmpfs size=bogus
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "mounts[7]"
}

@test "nosuid,nodev,noexec: they show in the container's mountinfo" {
	add_mount /scratch tmpfs tmpfs nosuid nodev noexec
	add_mount /plain tmpfs tmpfs
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	local o
	o=$(mntopts_at /scratch)
	has_opt "$o" nosuid
	has_opt "$o" nodev
	has_opt "$o" noexec
	has_opt "$o" rw
	o=$(mntopts_at /plain)
	lacks_opt "$o" nosuid
	lacks_opt "$o" nodev
	lacks_opt "$o" noexec
}

@test "noexec: a binary on a noexec tmpfs cannot be executed (EACCES); on an exec tmpfs it can" {
	add_mount /noexec tmpfs tmpfs noexec
	add_mount /exec tmpfs tmpfs exec
	# the copies are named after an applet: busybox picks the applet from argv[0]
	set_script 'cp /bin/busybox /noexec/true; cp /bin/busybox /exec/true
		/bin/probe exec /noexec/true; echo "noexec=$?"
		/bin/probe exec /exec/true; echo "exec=$?"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EACCES ]
	[ "${lines[1]}" = noexec=1 ]
	[ "${lines[2]}" = exec=0 ]
}

@test "nodev: a device node on a nodev mount cannot be opened" {
	# /dev/shm of the default config is nodev; the runtime creates the node there
	update_config '.linux.devices = [{"path":"/dev/shm/null2","type":"c","major":1,"minor":3,"fileMode":438}]'
	set_script '/bin/probe stat /dev/shm/null2; /bin/probe read /dev/shm/null2; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3 0666 0:0" ]
	[ "${lines[1]}" = EACCES ]
}

@test "tmpcopyup: the tmpfs starts with the rootfs content of the directory (modes, owners, symlinks), writable, host rootfs unchanged" {
	mkdir -p "$BUNDLE/rootfs/work/seed/deeper"
	echo seeded >"$BUNDLE/rootfs/work/seed/file"
	echo deep >"$BUNDLE/rootfs/work/seed/deeper/file"
	chmod 0710 "$BUNDLE/rootfs/work/seed/deeper"
	ln -s file "$BUNDLE/rootfs/work/seed/link"
	echo owned >"$BUNDLE/rootfs/work/seed/owned"
	chown 123:456 "$BUNDLE/rootfs/work/seed/owned"
	chmod 0640 "$BUNDLE/rootfs/work/seed/owned"
	add_mount /work/seed tmpfs tmpfs tmpcopyup
	set_script 'cat /work/seed/file /work/seed/deeper/file; readlink /work/seed/link
		/bin/probe stat /work/seed/deeper; /bin/probe stat /work/seed/owned; echo changed >/work/seed/file && /bin/probe write /work/seed/new
		awk "\$5 == \"/work/seed\"" /proc/self/mountinfo | sed "s/.* - //" | cut -d" " -f1'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = seeded ]
	[ "${lines[1]}" = deep ]
	[ "${lines[2]}" = file ]
	[ "${lines[3]}" = "dir 0:0 0710 0:0" ]
	[ "${lines[4]}" = "file 0:0 0640 123:456" ]
	[ "${lines[5]}" = ok ]
	[ "${lines[6]}" = tmpfs ]
	[ "$(cat "$BUNDLE/rootfs/work/seed/file")" = seeded ]
	[ ! -e "$BUNDLE/rootfs/work/seed/new" ]
}

@test "tmpcopyup on a non-tmpfs mount is refused" {
	add_mount /data bind "$BATS_TEST_TMPDIR" rbind tmpcopyup
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "tmpcopyup"
}

@test "remount: a later remount,ro entry makes an earlier rw mount read-only" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	add_mount /data bind "$host" rbind rw
	add_mount /data bind "$host" remount bind ro
	set_script '/bin/probe write /data/x; awk "\$5 == \"/data\"" /proc/self/mountinfo | wc -l'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = 1 ]
	[ ! -e "$host/x" ]
}

@test "remount: a tmpfs remounted with noexec,ro changes its flags in place" {
	add_mount /scratch tmpfs tmpfs
	add_mount /scratch tmpfs tmpfs remount ro noexec
	set_script '/bin/probe write /scratch/x; cat /proc/self/mountinfo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "$(awk '$5 == "/scratch"' <<<"$output" | wc -l)" -eq 1 ]
	has_opt "$(mntopts_at /scratch)" ro
	has_opt "$(mntopts_at /scratch)" noexec
}

@test "atime options: noatime and nodiratime show in mountinfo; strictatime shows neither relatime nor noatime" {
	add_mount /a tmpfs tmpfs noatime nodiratime
	add_mount /b tmpfs tmpfs strictatime
	add_mount /c tmpfs tmpfs
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	has_opt "$(mntopts_at /a)" noatime
	has_opt "$(mntopts_at /a)" nodiratime
	lacks_opt "$(mntopts_at /b)" relatime
	lacks_opt "$(mntopts_at /b)" noatime
	has_opt "$(mntopts_at /c)" relatime
}

@test "nosymfollow: symlinks on the mount are not followed (ELOOP)" {
	add_mount /nofollow tmpfs tmpfs nosymfollow
	add_mount /follow tmpfs tmpfs
	set_script 'ln -s /bin /nofollow/l; ln -s /bin /follow/l; /bin/probe stat /nofollow/l/sh; /bin/probe stat /follow/l/sh; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = ELOOP ]
	[[ "${lines[1]}" == "link "* ]]
}

@test "rnoexec,rnosuid,rnodev: the recursive forms reach the sub-mounts of an rbind" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir -p "$host/sub"
	mount -t tmpfs -o size=1m sbxsub "$host/sub"
	add_mount /rec bind "$host" rbind rnoexec rnosuid rnodev
	add_mount /plain bind "$host" rbind noexec
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	local st=$status out=$output
	umount "$host/sub"
	status=$st output=$out
	[ "$status" -eq 0 ]
	local o
	for m in /rec /rec/sub; do
		o=$(mntopts_at $m)
		has_opt "$o" noexec
		has_opt "$o" nosuid
		has_opt "$o" nodev
	done
	has_opt "$(mntopts_at /plain)" noexec
	lacks_opt "$(mntopts_at /plain/sub)" noexec
}

@test "per-mount propagation: rshared and unbindable show in the container's mountinfo" {
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	add_mount /shared bind "$host" rbind rshared
	add_mount /unbindable bind "$host" rbind unbindable
	add_mount /private bind "$host" rbind rprivate
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_at /shared)" == *" shared:"* ]]
	[[ "$(mountinfo_at /unbindable)" == *" unbindable "* ]]
	[[ "$(mountinfo_at /private)" != *" shared:"* ]]
	[[ "$(mountinfo_at /private)" != *" unbindable "* ]]
}

@test "defaults and ro on a tmpfs: accepted, the mount is read-only" {
	add_mount /scratch tmpfs tmpfs defaults ro
	set_script '/bin/probe write /scratch/x; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = EROFS ]
}

@test "bind of a missing source is an error naming the mount" {
	add_mount /data bind "$BATS_TEST_TMPDIR/does-not-exist" rbind
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "mounts[7]"
	assert_no_state "$ID"
}

@test "bind of a directory over a file of the rootfs is an error naming the mount" {
	add_mount /etc/passwd bind "$BATS_TEST_TMPDIR" rbind
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "mounts[7]"
	[ -f "$BUNDLE/rootfs/etc/passwd" ]
}

# ------------------------------------------------------------------ root

@test "root.readonly true: writing /etc/x gives EROFS" {
	set_args /bin/probe write /etc/x
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$output" = EROFS ]
	[ ! -e "$BUNDLE/rootfs/etc/x" ]
}

@test "root.readonly false: writing /etc/x works and the file appears in the bundle rootfs" {
	update_config '.root.readonly = false'
	set_script 'echo written >/etc/x && /bin/probe write /etc/y'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
	[ "$(cat "$BUNDLE/rootfs/etc/x")" = written ]
	[ -f "$BUNDLE/rootfs/etc/y" ]
}

@test "root.path absolute: a rootfs outside the bundle is used" {
	mv "$BUNDLE/rootfs" "$BATS_TEST_TMPDIR/elsewhere"
	echo elsewhere >"$BATS_TEST_TMPDIR/elsewhere/etc/where"
	update_config --arg r "$BATS_TEST_TMPDIR/elsewhere" '.root.path = $r'
	set_args cat /etc/where
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = elsewhere ]
}

# ------------------------------------------------------------------ the default mounts

@test "default mounts: /proc procfs, /sys sysfs read-only, /dev/shm writable tmpfs, /dev/mqueue mqueue, /dev/pts devpts" {
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(fstype_at /proc)" = proc ]
	[ "$(fstype_at /sys)" = sysfs ]
	has_opt "$(mntopts_at /sys)" ro
	[ "$(fstype_at /dev)" = tmpfs ]
	[ "$(fstype_at /dev/shm)" = tmpfs ]
	has_opt "$(mntopts_at /dev/shm)" rw
	[ "$(fstype_at /dev/mqueue)" = mqueue ]
	[ "$(fstype_at /dev/pts)" = devpts ]
	[ "$(fstype_at /sys/fs/cgroup)" != "" ]
	# the root is the rootfs, read-only (root.readonly)
	has_opt "$(mntopts_at /)" ro
}

@test "default mounts: /sys is not writable, /dev/shm and /dev/mqueue are, /dev/pts has its own ptmx" {
	set_script '/bin/probe write /sys/kernel/x; /bin/probe write /dev/shm/x; /bin/probe stat /dev/pts/ptmx
		/bin/probe write /dev/mqueue/q'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = ok ]
	[ "${lines[2]}" = "char 5:2 0666 0:0" ]
	[ "${lines[3]}" = ok ]
}

@test "default mounts: /dev/pts is a new devpts instance (no host ptys visible)" {
	set_script 'ls /dev/pts | sort'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = ptmx ]
}

@test "default mounts: /proc shows the container's pid namespace" {
	set_script 'echo $$; ls /proc | grep -c "^[0-9]"'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" -le 3 ]
}

# ------------------------------------------------------------------ masked / readonly paths

@test "maskedPaths: /proc/keys and /proc/timer_list read 0 bytes and are the null device" {
	[ -e /proc/keys ] || skip "host has no /proc/keys"
	set_script '/bin/probe read /proc/keys; /bin/probe stat /proc/keys; /bin/probe read /proc/timer_list
		/bin/probe stat /proc/timer_list'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[[ "${lines[1]}" == "char 1:3 "* ]]
	[ "${lines[2]}" = 0 ]
	[[ "${lines[3]}" == "char 1:3 "* ]]
}

@test "maskedPaths: without the mask /proc/timer_list has content (the mask test can fail)" {
	update_config '.linux.maskedPaths = []'
	set_args /bin/probe stat /proc/timer_list
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$output" == "file "* ]]
}

@test "maskedPaths: a masked directory is empty and read-only" {
	mkdir -p "$BUNDLE/rootfs/work/secret/sub"
	echo hidden >"$BUNDLE/rootfs/work/secret/file"
	update_config '.linux.maskedPaths += ["/work/secret", "/proc/tty"]'
	set_script 'ls -A /work/secret | wc -l; /bin/probe write /work/secret/x; ls -A /proc/tty | wc -l
		/bin/probe read /work/secret/file; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = EROFS ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = ENOENT ]
	# the rootfs itself is untouched
	[ "$(cat "$BUNDLE/rootfs/work/secret/file")" = hidden ]
}

@test "maskedPaths: a path that does not exist is skipped" {
	update_config '.linux.maskedPaths += ["/proc/does-not-exist", "/work/nope/deeper"]'
	set_script '/bin/probe stat /work/nope; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = ENOENT ]
}

@test "maskedPaths: a listed path that is a symlink in the rootfs cannot be read through" {
	ln -s passwd "$BUNDLE/rootfs/etc/plink"
	update_config '.linux.maskedPaths += ["/etc/plink"]'
	set_script '/bin/probe read /etc/plink; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# config-linux.md: masked "so that they cannot be read"; 0 bytes or an error
	[[ "$output" == 0 || "$output" == E* ]]
}

@test "readonlyPaths: /proc/sys is read-only (EROFS), /proc itself is not" {
	update_config '.root.readonly = false'
	set_script '/bin/probe write /proc/sys/kernel/hostname; /bin/probe write /proc/sys/vm/drop_caches
		/bin/probe write /proc/self/comm'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = EROFS ]
	[ "${lines[2]}" = ok ]
}

@test "readonlyPaths: a file listed there becomes read-only, its neighbours do not" {
	update_config '.root.readonly = false | .linux.readonlyPaths += ["/etc/passwd"]'
	set_script '/bin/probe write /etc/passwd; /bin/probe write /etc/group; cat /etc/passwd'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = ok ]
	[ "${lines[2]}" = "root:x:0:0:root:/root:/bin/sh" ]
}

@test "readonlyPaths: a listed path that is a symlink to a directory cannot be written through" {
	mkdir "$BUNDLE/rootfs/work/d"
	ln -s d "$BUNDLE/rootfs/work/dlink"
	update_config '.root.readonly = false | .linux.readonlyPaths += ["/work/dlink"]'
	set_script '/bin/probe write /work/dlink/x; true'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = EROFS ]
	[ ! -e "$BUNDLE/rootfs/work/d/x" ]
}

@test "readonlyPaths: a rootfs directory listed there becomes read-only" {
	update_config '.root.readonly = false | .linux.readonlyPaths += ["/work"]'
	set_script '/bin/probe write /work/x; /bin/probe write /tmp/x'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = EROFS ]
	[ "${lines[1]}" = ok ]
}

# ------------------------------------------------------------------ destinations

@test "destination through an absolute symlink in the rootfs resolves inside the container root" {
	[ ! -e /etc/x ] || skip "the host has an /etc/x"
	ln -s /etc "$BUNDLE/rootfs/work/a"
	add_mount /work/a/x tmpfs tmpfs size=1m
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ ! -e /etc/x ]
	[ "$(fstype_at /etc/x)" = tmpfs ]
	[ -d "$BUNDLE/rootfs/etc/x" ]
}

@test "CVE-2024-45310: a destination below a symlink to a missing host path does not create it on the host" {
	local target=/tmp/sbx-cve-2024-45310-$$-$RANDOM
	[ ! -e "$target" ]
	ln -s "$target" "$BUNDLE/rootfs/mnt"
	add_mount /mnt/a/b tmpfs tmpfs size=1m
	set_script 'awk "\$5 ~ /\\/a\\/b\$/ {print \$5}" /proc/self/mountinfo'
	sbx_split run --bundle "$BUNDLE" "$ID"
	local created=no
	[ ! -e "$target" ] || { created=yes; rm -rf "$target"; }
	[ "$created" = no ]
	# Creating the missing directories inside the root (through the symlink resolved
	# there) and refusing the dangling symlink are both safe.
	if [ "$status" -eq 0 ]; then
		[ "$stdout" = "$target/a/b" ]
		[ -d "$BUNDLE/rootfs$target/a/b" ]
	else
		assert_one_line_error "mounts[7]"
	fi
}

@test "CVE-2024-45310: a relative symlink climbing out of the rootfs to a missing host path does not create it" {
	local name=sbx-cve-2024-45310-rel-$$-$RANDOM
	[ ! -e "/tmp/$name" ]
	ln -s "../../../../../../../../tmp/$name" "$BUNDLE/rootfs/work/escape"
	add_mount /work/escape/a/b tmpfs tmpfs size=1m
	set_args /bin/true
	sbx_split run --bundle "$BUNDLE" "$ID"
	local created=no
	[ ! -e "/tmp/$name" ] || { created=yes; rm -rf "/tmp/$name"; }
	[ "$created" = no ]
	[ "$status" -eq 0 ] || assert_one_line_error "mounts[7]"
}

@test "a destination that resolves to the container root through a symlink is refused or takes effect, never silently hidden" {
	ln -s / "$BUNDLE/rootfs/work/root"
	echo in-rootfs >"$BUNDLE/rootfs/etc/marker"
	add_mount /work/root tmpfs tmpfs size=1m
	set_script 'cat /etc/marker 2>/dev/null || echo no-marker'
	sbx_split run --bundle "$BUNDLE" "$ID"
	# Like a literal "/" (refused with one error line), or the tmpfs is what the
	# process sees at / (then there is no /bin/sh and the run fails too). A run that
	# succeeds and still shows the rootfs at / dropped the requested mount.
	[ "$status" -ne 0 ]
	[ "$stdout" != in-rootfs ]
}

@test "destination containing .. is refused" {
	add_mount /work/../etc/x tmpfs tmpfs
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "mounts[7]"
}

@test "a missing mount destination directory is created inside the rootfs" {
	[ ! -e "$BUNDLE/rootfs/work/new" ]
	add_mount /work/new/deep tmpfs tmpfs
	set_script '/bin/probe stat /work/new; cat /proc/self/mountinfo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "dir "* ]]
	[ "$(fstype_at /work/new/deep)" = tmpfs ]
	[ -d "$BUNDLE/rootfs/work/new/deep" ]
}

@test "a missing file destination of a file bind is created as a file" {
	echo hello >"$BATS_TEST_TMPDIR/f"
	add_mount /work/newdir/f bind "$BATS_TEST_TMPDIR/f" bind
	set_args cat /work/newdir/f
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	[ -f "$BUNDLE/rootfs/work/newdir/f" ]
}

@test "mounts are applied in order: tmpfs /work then tmpfs /work/sub nests inside the first" {
	add_mount /work tmpfs tmpfs
	add_mount /work/sub tmpfs tmpfs
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	local work sub
	work=$(mountinfo_at /work)
	sub=$(mountinfo_at /work/sub)
	[ -n "$work" ] && [ -n "$sub" ]
	# the parent of /work/sub is the /work tmpfs
	[ "$(awk '{print $2}' <<<"$sub")" = "$(awk '{print $1}' <<<"$work")" ]
	# /work/sub was created in the tmpfs, not in the rootfs
	[ ! -e "$BUNDLE/rootfs/work/sub" ]
}

@test "mounts are applied in order: a later mount on the same destination covers the earlier" {
	local a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
	mkdir "$a" "$b"
	echo first >"$a/who"
	echo second >"$b/who"
	add_mount /data bind "$a" rbind
	add_mount /data bind "$b" rbind
	set_args cat /data/who
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = second ]
}

# ------------------------------------------------------------------ pivot / propagation

@test "--no-pivot: the container still runs in its rootfs" {
	set_script 'cat /etc/passwd | head -n 1; /bin/probe write /etc/x; true'
	sbx run --no-pivot --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "root:x:0:0:root:/root:/bin/sh" ]
	[ "${lines[1]}" = EROFS ]
}

@test "rootfsPropagation private and rprivate (crun's and podman's spelling): runs; the root mount is in no peer group" {
	local p
	for p in private rprivate; do
		update_config --arg p "$p" '.linux.rootfsPropagation = $p'
		set_args cat /proc/self/mountinfo
		sbx run --bundle "$BUNDLE" "$ID-$p"
		[ "$status" -eq 0 ]
		local root
		root=$(mountinfo_at /)
		[ -n "$root" ]
		[[ "$root" != *" shared:"* ]]
		[[ "$root" != *" master:"* ]]
	done
}

@test "rootfsPropagation rshared, rslave, runbindable are accepted like shared, slave, unbindable; rfoo is not" {
	local p
	for p in rshared rslave runbindable; do
		update_config --arg p "$p" '.linux.rootfsPropagation = $p'
		sbx_ok run --bundle "$BUNDLE" "$ID-$p"
	done
	update_config '.linux.rootfsPropagation = "rfoo"'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "linux.rootfsPropagation: 'rfoo' is not one of"
}

@test "rootfsPropagation shared: runs; the root mount is shared" {
	update_config '.linux.rootfsPropagation = "shared"'
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_at /)" == *" shared:"* ]]
}

@test "rootfsPropagation slave: runs; with a shared host root the container root is its slave" {
	update_config '.linux.rootfsPropagation = "slave"'
	set_args cat /proc/self/mountinfo
	# a private mount namespace of our own where / is shared, so there is a master
	run unshare -m --propagation unchanged sh -c 'mount --make-rshared / && "$0" --root "$1" run --bundle "$2" "$3"' \
		"$SBX_OCI" "$SBX_ROOT" "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_at /)" == *" master:"* ]]
	[[ "$(mountinfo_at /)" != *" shared:"* ]]
}

# Runs the container in a mount namespace of our own whose / is rshared (the host's
# is private), mounts a tmpfs at rootfs/work/x there once the container has
# started, and prints what the container saw: "seen" if the mount reached it.
propagation_probe() {
	mkdir -p "$BUNDLE/rootfs/work/x"
	set_script 'echo started; for i in $(seq 30); do [ -e /work/x/marker ] && { echo seen; exit 0; }; sleep 0.1; done; echo not-seen'
	run unshare -m --propagation unchanged sh -c '
		mount --make-rshared / || exit 99
		"$0" --root "$1" run --bundle "$2" "$3" >"$4/out" 2>&1 &
		pid=$!
		for i in $(seq 50); do grep -qs started "$4/out" && break; sleep 0.1; done
		mount -t tmpfs hostside "$2/rootfs/work/x" && touch "$2/rootfs/work/x/marker"
		wait $pid
		echo "status=$?"
		cat "$4/out"' "$SBX_OCI" "$SBX_ROOT" "$BUNDLE" "$ID" "$BATS_TEST_TMPDIR"
}

@test "rootfsPropagation slave: a mount made on the host after start appears in the container" {
	update_config '.linux.rootfsPropagation = "slave"'
	propagation_probe
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = status=0 ]
	[ "${lines[1]}" = started ]
	[ "${lines[2]}" = seen ]
}

@test "rootfsPropagation private: a mount made on the host after start does not appear in the container" {
	update_config '.linux.rootfsPropagation = "private"'
	propagation_probe
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = status=0 ]
	[ "${lines[1]}" = started ]
	[ "${lines[2]}" = not-seen ]
}

@test "rootfsPropagation shared: a mount made in the container does not reach a shared host root" {
	update_config '.linux.rootfsPropagation = "shared"
		| .process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	mkdir -p "$BUNDLE/rootfs/work/x"
	set_script 'mount -t tmpfs inner /work/x && touch /work/x/marker && echo mounted; sleep 1'
	run unshare -m --propagation unchanged sh -c '
		mount --make-rshared / || exit 99
		"$0" --root "$1" run --bundle "$2" "$3" >"$4/out" 2>&1 &
		pid=$!
		for i in $(seq 50); do grep -qs mounted "$4/out" && break; sleep 0.1; done
		if [ -e "$2/rootfs/work/x/marker" ]; then echo leaked; else echo contained; fi
		wait $pid
		echo "status=$?"
		cat "$4/out"' "$SBX_OCI" "$SBX_ROOT" "$BUNDLE" "$ID" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = contained ]
	[ "${lines[1]}" = status=0 ]
	[ "${lines[2]}" = mounted ]
}

@test "rootfsPropagation unbindable: runs; the root mount is unbindable" {
	update_config '.linux.rootfsPropagation = "unbindable"'
	set_args cat /proc/self/mountinfo
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_at /)" == *" unbindable "* ]]
}

@test "rootfsPropagation slave: runs in the test's own namespace" {
	update_config '.linux.rootfsPropagation = "slave"'
	set_args /bin/true
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
}

@test "a mount made inside the container does not appear on the host" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	add_mount /data bind "$host" rbind rw
	set_script 'mount -t tmpfs inner /data && touch /data/inside && echo mounted'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = mounted ]
	[ -z "$(ls -A "$host")" ]
	[ -z "$(grep " $host " /proc/self/mountinfo)" ]
}

# ------------------------------------------------------------------ user namespace

@test "userns: a bind mount rw works; files written inside belong to the mapped host uid" {
	requires userns
	use_userns
	local host=$BATS_TEST_TMPDIR/hostdir
	mkdir "$host"
	chown 100000:100000 "$host"
	# /work exists in the rootfs: the rootfs belongs to the host's root, which the
	# user namespace does not map, so the runtime could not create a destination
	add_mount /work bind "$host" rbind rw
	set_script 'echo from-userns >/work/out && /bin/probe stat /work/out'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$output" == "file 0:0 "*" 0:0" ]]
	[ "$(cat "$host/out")" = from-userns ]
	[ "$(stat -c %u:%g "$host/out")" = 100000:100000 ]
}

@test "userns: a bind source behind a host directory the mapped root cannot search is opened by the runtime (directly and through a symlink)" {
	requires userns
	use_userns
	local parent=$BATS_TEST_TMPDIR/locked
	mkdir -p "$parent/m"
	echo hello >"$parent/m/content"
	ln -s "$parent/m" "$parent/s"
	chmod 000 "$parent" # root's, mode 0: host uid 100000 cannot pass it, the runtime can
	# (destinations the rootfs has: the user namespace cannot create any in root's rootfs)
	add_mount /work bind "$parent/m" bind ro
	add_mount /root bind "$parent/s" bind ro
	set_script 'cat /work/content /root/content'
	sbx run --bundle "$BUNDLE" "$ID"
	chmod 755 "$parent"
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	[ "$output" = "hello
hello" ]
}

@test "userns: masked paths are the null device or an empty read-only tmpfs, readonly paths are mounted ro" {
	requires userns
	use_userns
	set_script '/bin/probe stat /proc/keys | cut -d" " -f1,2; /bin/probe read /proc/keys; ls -A /proc/acpi /sys/firmware | grep -vc ":\$"; cat /proc/self/mountinfo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "char 1:3" ]
	[ "${lines[1]}" = 0 ]
	# only the two "dir:" headers and the blank line between them
	[ "${lines[2]}" = 1 ]
	has_opt "$(mntopts_at /proc/sys)" ro
	has_opt "$(mntopts_at /sys/firmware)" ro
	[ "$(fstype_at /sys/firmware)" = tmpfs ]
}

@test "userns: the default config runs, with the default mounts and the read-only root" {
	requires userns
	use_userns
	set_script '/bin/probe ids; /bin/probe write /etc/x; /bin/probe write /dev/shm/x
		awk "\$5 == \"/proc\" || \$5 == \"/dev/pts\" || \$5 == \"/sys\"" /proc/self/mountinfo | wc -l'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "uid=0 gid=0 groups=" ] || [[ "${lines[0]}" == "uid=0 gid=0 "* ]]
	[ "${lines[1]}" = EROFS ]
	[ "${lines[2]}" = ok ]
	[ "${lines[3]}" = 3 ]
}
