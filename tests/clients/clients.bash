# Shared by podman.bats and containerd.bats; tests/clients/run.sh sets the world up:
#   SBX_CLIENT_RT    the runtime under test (sbx-oci, or runc for a comparison run)
#   SBX_CLIENT_TMP   the private temp dir (containerd state roots, fifos)
#   SBX_CRI          the CRI client (cri.py) bound to the private containerd's socket
#   PATH             starts with a `podman` wrapper using the private root/runroot/config
#   CONTAINERD_ADDRESS, CONTAINERD_NAMESPACE   for ctr

IMG=localhost/sbx-busybox:latest

if [ -z "${SBX_CLIENT_RT:-}" ]; then
	echo "run these suites through tests/clients/run.sh" >&2
	exit 1
fi

# The command must succeed; prints what it said otherwise.
ok() {
	run "$@"
	if [ "$status" -ne 0 ]; then
		echo "$* failed with status $status:" >&2
		echo "$output" >&2
		return 1
	fi
}

# Runs a command under a pseudo-terminal (script(1)), so that -t has a tty to hand on.
# $output is what appeared on that terminal.
on_tty() {
	run timeout 60 script -qec "$*" /dev/null </dev/null
}

# Waits (up to 10 s) for a file to exist and be non-empty.
wait_file() {
	local i
	for i in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $1" >&2
	return 1
}

# A host directory a container can write into whatever uid it maps root to.
shared_dir() {
	local d
	d=$(mktemp -d "$SBX_CLIENT_TMP/data.XXXXXX") # not under bats' 0700 temp dir
	chmod 777 "$d"
	echo "$d"
}

# A shell loop that counts, one step a tenth of a second, into FILE (in the container).
# (written beside and renamed: a reader never sees the file truncated and empty)
COUNTER='i=0; while :; do i=$((i+1)); echo $i > /data/n.new && mv /data/n.new /data/n; sleep 0.1; done'

# In the rootless run of podman.bats (SBX_CLIENT_ROOTLESS=1): skip a case the host does
# not give an unprivileged user, saying which. The reference runtime skips it alike, and
# tests/clients/matrix.sh shows both.
rootless_skip() {
	[ -z "${SBX_CLIENT_ROOTLESS:-}" ] || skip "rootless: $1"
}
