#!/usr/bin/env bats
# Issue 34: a system directory is never handed to the sandbox as writable. Every case
# runs in a throw-away copy of the machine's root (helpers/throwaway-root.sh: an
# overlay of / with a tmpfs upper layer, in a private mount namespace): if the refusal
# ever regressed, the sandbox would write into that copy, never into the host's /etc
# or /usr. Each case also checks the copy afterwards: no canary file may appear.

load helpers
load helpers/sandbox

# Directories refused themselves; and system trees, refused at any depth.
EXACT="/ /home /media /mnt /opt /srv /tmp /var /var/tmp /root"
TREES="/etc /usr /bin /sbin /lib /lib64 /boot /proc /sys /dev /run /var/lib /var/log /var/spool /var/cache /var/mail"
DEEPER="/etc/cron.d /usr/local /var/lib/dpkg /run/lock /var/log/apt /var/cache/apt"

# in_copy SCRIPT: runs the bash SCRIPT as root with / a throw-away copy; S is the
# binary under test, and `try` runs it expecting a refusal (see below). Sets $status,
# $output.
in_copy() {
	local prelude
	prelude=$(
		cat <<'EOF'
set -u
S=$SBX_OCI
fails=0
# try WHAT CMD...: CMD must exit 125 with one line naming --workdir or --rw and
# "which the sandbox may not write", and no canary may appear anywhere it could land
try() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" != 125 ] || [ "$(printf '%s\n' "$out" | grep -c .)" != 1 ] || [[ "$out" != *"which the sandbox may not write"* ]]; then
		echo "NOT REFUSED ($what): status $rc: $out"
		fails=$((fails + 1))
	fi
}
# the canary a sandbox that was let through writes into its /work, and /x of --rw
CANARY='open("/work/sbx-syspath-canary", "w").write("x")'
canaries() { find / -xdev -name sbx-syspath-canary 2>/dev/null; find /dev /run -name sbx-syspath-canary 2>/dev/null; }
EOF
	)
	run env SBX_OCI="$SBX_OCI" "$BATS_TEST_DIRNAME/helpers/throwaway-root.sh" "$BATS_TEST_TMPDIR/copy" \
		"export SBX_OCI=$SBX_OCI; $prelude
$1
left=\$(canaries); [ -z \"\$left\" ] || { echo \"CANARY WRITTEN: \$left\"; fails=\$((fails + 1)); }
echo \"fails=\$fails\""
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"fails=0" ]]
}

@test "syspaths: as root, every listed directory, reached directly, through a symlink and through a bind mount, is refused by python --workdir and --rw (125, one line)" {
	in_copy "
	mkdir -p /var/tmp/links /var/tmp/binds
	n=0
	for p in $EXACT $TREES $DEEPER; do
		[ -e \"\$p\" ] || mkdir -p \"\$p\"
		n=\$((n + 1))
		ln -s \"\$p\" /var/tmp/links/\$n
		mkdir /var/tmp/binds/\$n
		mount --bind \"\$p\" /var/tmp/binds/\$n
		for via in \"\$p\" /var/tmp/links/\$n /var/tmp/binds/\$n; do
			try \"--workdir \$via (\$p)\" \$S python --workdir \"\$via\" -c \"\$CANARY\"
			try \"--rw \$via (\$p)\" \$S python --rw \"\$via:/x\" -c 'open(\"/x/sbx-syspath-canary\",\"w\")'
		done
	done
	# a file in a system tree, through --rw
	try '--rw /etc/hostname' \$S python --rw /etc/hostname:/x -c 'open(\"/x\",\"w\")'
	echo \"checked \$n paths\"
	"
	[[ "$output" == *"checked 32 paths"* ]]
}

@test "syspaths: the runtime's state root, a directory holding it, the directories holding the binary, and the caller's home are refused" {
	in_copy "
	mkdir -p /srv/state-parent /home/someone
	try 'state root' \$S --root /srv/state-parent/state python --workdir /srv/state-parent -c \"\$CANARY\"
	\$S --root /srv/state-parent/state python -c pass
	mkdir -p /srv/state-parent/state/inside
	try 'in the state root' \$S --root /srv/state-parent/state python --workdir /srv/state-parent/state/inside -c \"\$CANARY\"
	bin=\$(dirname \"\$(realpath \"\$S\")\")
	try 'the binary' \$S python --workdir \"\$bin\" -c \"\$CANARY\"
	try 'above the binary' \$S python --workdir \"\$(dirname \"\$bin\")\" -c \"\$CANARY\"
	try 'HOME' env HOME=/home/someone \$S python --workdir /home/someone -c \"\$CANARY\"
	"
}

@test "syspaths: directories users make for the purpose keep working (/var/tmp/out, /srv/job1, /home/u/out, /tmp/x), written as their owner" {
	in_copy "
	# each on a tmpfs of its own: the copy's overlay cannot be idmapped, a tmpfs can
	for d in /var/tmp/out /srv/job1 /home/u/out /tmp/x /opt/job; do
		mkdir -p \$d
		mount -t tmpfs -o mode=0755 sbx-syspaths-ok \$d
		chown 1234:1234 \$d
		out=\$(\$S python --workdir \$d -c 'open(\"/work/made\", \"w\").write(\"ok\"); print(\"ran\")' 2>&1)
		[ \"\$out\" = ran ] && [ \"\$(stat -c %u \$d/made)\" = 1234 ] || { echo \"\$d: \$out\"; fails=\$((fails + 1)); }
	done
	"
}

@test "syspaths: bundle --workdir and --rw, serve's own --workdir, a run and a session through --connect are refused the same way" {
	in_copy "
	try 'bundle --workdir /etc' \$S bundle --python /var/tmp/b1 --workdir /etc -- -c \"\$CANARY\"
	try 'bundle --rw /usr' \$S bundle --python /var/tmp/b2 --rw /usr:/x -- -c \"\$CANARY\"
	[ ! -e /var/tmp/b1/config.json ] || { echo 'bundle written'; fails=\$((fails + 1)); }
	try 'serve --workdir /etc' \$S serve --socket /var/tmp/s0.sock --workdir /etc
	try 'serve --rw /' \$S serve --socket /var/tmp/s0.sock --rw /:/x
	\$S serve --socket /var/tmp/s.sock >/var/tmp/serve.log 2>&1 &
	pid=\$!
	for i in \$(seq 100); do grep -q 'listening on' /var/tmp/serve.log 2>/dev/null && break; sleep 0.1; done
	try 'connect --workdir /etc' \$S python --connect /var/tmp/s.sock --workdir /etc -c \"\$CANARY\"
	try 'connect --rw /root' \$S python --connect /var/tmp/s.sock --rw /root:/x -c \"\$CANARY\"
	try 'session --workdir /usr' \$S python --connect /var/tmp/s.sock --session s1 --workdir /usr -c \"\$CANARY\"
	ok=\$(\$S python --connect /var/tmp/s.sock -c 'print(\"still serving\")' 2>&1)
	[ \"\$ok\" = 'still serving' ] || { echo \"server after refusals: \$ok\"; fails=\$((fails + 1)); }
	kill -TERM \$pid; wait \$pid
	"
}

@test "syspaths: as an unprivileged user, system directories (directly, by symlink, by bind) are refused too" {
	in_copy "
	useradd -M -s /bin/sh sbxsys 2>/dev/null || true
	mkdir -p /var/tmp/rl /var/tmp/binds && chown sbxsys: /var/tmp/rl
	ln -s /etc /var/tmp/rl/etc-link
	mkdir /var/tmp/binds/usr && mount --bind /usr /var/tmp/binds/usr
	cp \$S /var/tmp/sbx-oci && chmod 755 /var/tmp/sbx-oci
	as_user() { runuser -u sbxsys -- env HOME=/var/tmp/rl XDG_RUNTIME_DIR=/var/tmp/rl /var/tmp/sbx-oci \"\$@\"; }
	# --allow-degraded: no memory cgroup is delegated to this user; the refusal comes first all the same
	for p in / /etc /usr /tmp /var /var/tmp/rl/etc-link /var/tmp/binds/usr /var/tmp/rl; do
		try \"rootless --workdir \$p\" as_user python --allow-degraded --workdir \$p -c \"\$CANARY\"
	done
	"
}
