#!/bin/bash
# podman 4.3 and containerd 1.6 driving the runtime under test, end to end
# (shared/clients/CONTRACT.md §3-4): tests/clients/podman.bats and containerd.bats.
#   SBX_OCI=path              the binary under test (default: the checkout's ./sbx-oci)
#   SBX_CLIENT_RUNTIME=path   run the same suites against another runtime instead,
#                             e.g. SBX_CLIENT_RUNTIME=/usr/sbin/runc tests/clients/run.sh
#   SBX_CLIENT_TESTS="podman" only these suites
#   SBX_KEEP_TMP=1            keep the temp dir (configs, daemon log) afterwards
# Needs root. Installs the clients with apt-get when missing. Everything else is private
# to a temp dir: podman gets its own --root/--runroot/containers.conf (from
# contrib/podman/sbx-oci.conf), containerd runs as a private daemon with its own
# config.toml (from contrib/containerd/config.toml), root, state and socket. The trap
# removes every container, the daemon (by its PID), the mounts and the cgroups made here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export SBX_OCI=${SBX_OCI:-$repo/sbx-oci}
RT=$(realpath "${SBX_CLIENT_RUNTIME:-$SBX_OCI}")
[ "$(id -u)" = 0 ] || { echo "clients: needs root" >&2; exit 1; }
[ -x "$RT" ] || { echo "clients: runtime under test $RT is not executable (build first)" >&2; exit 1; }

# --- 1. packages, only what is missing ------------------------------------------------
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null; }
}
need=()
for p in podman conmon containerd bats jq bsdutils python3-grpcio busybox-static; do
	installed "$p" || need+=("$p")
done
# Optional: --init needs catatonit; netavark/aardvark-dns are podman 4.3's network
# stack (not a dependency in bookworm); runc for SBX_CLIENT_RUNTIME comparisons.
for p in catatonit netavark aardvark-dns runc; do
	installed "$p" || { apt-cache show "$p" >/dev/null 2>&1 && need+=("$p"); } || true
done
if [ ${#need[@]} -gt 0 ]; then
	echo "clients: apt-get install ${need[*]}"
	apt_install "${need[@]}"
fi
PY=/usr/bin/python3 # Debian's, which has python3-grpcio (not a pyenv shim)

# --- 2. a private world ------------------------------------------------------------
T=$(mktemp -d /tmp/sbx-clients.XXXXXX)
chmod 755 "$T"
name=$(basename "$RT")
NS=sbx-clients
containerd_pid=
bats_pid=
# Host paths the clients create on first use: removed at the end only if they did
# not exist before (podman's netavark run dir and blob cache, the shims' socket dir,
# the cgroup parents podman, ctr and the CRI pods use).
host_dirs=(/run/containers /var/lib/containers /run/containerd /run/netns)
cgroup_parents=(libpod_parent "$NS" sbx-clients-cri)
mapfile -t cg_mounts < <(findmnt -rn -t cgroup,cgroup2 -o TARGET)
created_dirs=()
for d in "${host_dirs[@]}"; do [ -e "$d" ] || created_dirs+=("$d"); done
for m in "${cg_mounts[@]}"; do
	for p in "${cgroup_parents[@]}"; do [ -e "$m/$p" ] || created_dirs+=("$m/$p"); done
done

cleanup() {
	local rc=$?
	set +e
	echo "clients: cleaning up"
	if [ -n "$bats_pid" ] && kill -0 "$bats_pid" 2>/dev/null; then
		kill -TERM -- "-$bats_pid" 2>/dev/null
		sleep 1
		kill -KILL -- "-$bats_pid" 2>/dev/null
	fi
	if [ -x "$T/bin/podman" ]; then
		"$T/bin/podman" rm -af -t 0 >/dev/null 2>&1
	fi
	if [ -n "$containerd_pid" ] && kill -0 "$containerd_pid" 2>/dev/null; then
		for pod in $($PY "$here/cri.py" "$T/containerd.sock" pods 2>/dev/null); do
			$PY "$here/cri.py" "$T/containerd.sock" stop-pod "$pod" >/dev/null 2>&1
			$PY "$here/cri.py" "$T/containerd.sock" rm-pod "$pod" >/dev/null 2>&1
		done
		for ns in "$NS" k8s.io; do
			for t in $(CONTAINERD_NAMESPACE=$ns ctr task ls -q 2>/dev/null); do
				CONTAINERD_NAMESPACE=$ns ctr task kill -s SIGKILL "$t" >/dev/null 2>&1
				CONTAINERD_NAMESPACE=$ns ctr task rm -f "$t" >/dev/null 2>&1
			done
			for c in $(CONTAINERD_NAMESPACE=$ns ctr containers ls -q 2>/dev/null); do
				CONTAINERD_NAMESPACE=$ns ctr containers rm "$c" >/dev/null 2>&1
			done
		done
		kill "$containerd_pid"
		for _ in $(seq 50); do kill -0 "$containerd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$containerd_pid" 2>/dev/null && kill -9 "$containerd_pid"
	fi
	# Shims of this daemon (its socket path is unique to this run) that outlived it,
	# and whatever the runtime still holds under the private state roots.
	for pid in $(pgrep -f -- "-address $T/containerd.sock" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
	for root in "$T"/ctr-root/* "$T"/sbx-root/* "$T"/runc-root/*; do
		[ -d "$root" ] || continue
		for id in "$root"/*; do "$RT" --root "$root" delete --force "${id##*/}" >/dev/null 2>&1; done
	done
	# Mounts under the temp dir (podman's overlay storage, containerd's snapshots), deepest first.
	awk -v t="$T/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	for d in "${created_dirs[@]}"; do
		case $d in
		/sys/fs/cgroup/*) [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null ;;
		*) rm -rf "$d" ;;
		esac
	done
	if [ -n "${SBX_KEEP_TMP:-}" ]; then
		echo "clients: kept $T"
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 3. podman: containers.conf from the contrib drop-in, made private ------------------
mkdir -p "$T/bin" "$T/networks" "$T/fifo"
awk -v name="$name" -v rt="$RT" -v t="$T" '
	/^\[engine\.runtimes\]/ { skip = 1; next }   # replaced by the runtime under test, below
	skip && /^\[/ { skip = 0 }
	skip { next }
	/^#runtime = / { print "runtime = \"" name "\""; next }
	/^runtime_supports_(json|nocgroups) = / && index($0, "\"" name "\"") == 0 { sub(/\]$/, ", \"" name "\"]") }
	{ print }
	/^\[containers\]/ {
		print "# test isolation: no bridge network (it would add a bridge, firewall rules and"
		print "# ip_forward to the host); the network test compares none with host"
		print "netns = \"none\""
	}
	/^\[engine\]/ {
		print "tmp_dir = \"" t "/podman-tmp\""
		print "static_dir = \"" t "/root/libpod\""
		print "volume_path = \"" t "/root/volumes\""
		print "events_logfile_path = \"" t "/events.log\""
		print "lock_type = \"file\""
	}
	END {
		print "[engine.runtimes]"
		print "\"" name "\" = [\"" rt "\"]"
		print "[network]"
		print "network_config_dir = \"" t "/networks\""
	}' "$repo/contrib/podman/sbx-oci.conf" >"$T/containers.conf"
cat >"$T/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$T/root"
runroot = "$T/runroot"
EOF
echo 'unqualified-search-registries = []' >"$T/registries.conf"
cat >"$T/bin/podman" <<EOF
#!/bin/sh
export CONTAINERS_CONF=$T/containers.conf CONTAINERS_STORAGE_CONF=$T/storage.conf CONTAINERS_REGISTRIES_CONF=$T/registries.conf
exec $(command -v podman) --root $T/root --runroot $T/runroot --storage-driver overlay "\$@"
EOF
chmod +x "$T/bin/podman"

# --- 4. images: Debian's busybox-static rootfs (plus the probe), imported into podman,
#        saved as OCI archives for containerd --------------------------------------------
export SBX_FIXTURES=${SBX_FIXTURES:-$repo/tests/.tmp/fixtures}
"$repo/tests/helpers/build-fixtures.sh" "$SBX_FIXTURES"
tar -C "$SBX_FIXTURES/rootfs" -c . | "$T/bin/podman" import -q --change 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
	--change 'CMD ["/bin/sh"]' - localhost/sbx-busybox:latest >/dev/null
tar -C "$SBX_FIXTURES/rootfs" -c . | "$T/bin/podman" import -q --change 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
	--change 'ENTRYPOINT ["/bin/sleep", "1000000"]' - localhost/sbx-pause:latest >/dev/null
"$T/bin/podman" save -q --format oci-archive -o "$T/busybox.tar" localhost/sbx-busybox:latest
"$T/bin/podman" save -q --format oci-archive -o "$T/pause.tar" localhost/sbx-pause:latest

# --- 5. containerd: a private daemon, config from the contrib snippet -------------------
{
	echo "version = 2"
	echo "root = \"$T/containerd-root\""
	echo "state = \"$T/containerd-state\""
	echo "[grpc]"
	echo "  address = \"$T/containerd.sock\""
	echo "[ttrpc]"
	echo "  address = \"$T/containerd.sock.ttrpc\""
	echo '[plugins."io.containerd.internal.v1.opt"]'
	echo "  path = \"$T/opt\""
	# the contrib snippet, pointed at the runtime under test and a private state root
	grep -v '^version' "$repo/contrib/containerd/config.toml" |
		sed -e "s|^\( *BinaryName = \).*|\1\"$RT\"|" -e "s|^\( *Root = \).*|\1\"$T/sbx-root\"|" \
			-e '/^\[plugins."io.containerd.grpc.v1.cri"\]$/a\  disable_apparmor = true\n  sandbox_image = "localhost/sbx-pause:latest"\n  stream_server_port = "0"'
	cat <<EOF

# The CRI default stays plain runc under its own root: handler "sbx" must be asked
# for by name to reach the runtime under test.
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    Root = "$T/runc-root"
EOF
} >"$T/containerd.toml"
containerd --config "$T/containerd.toml" >"$T/containerd.log" 2>&1 &
containerd_pid=$!
export CONTAINERD_ADDRESS=$T/containerd.sock CONTAINERD_NAMESPACE=$NS
for _ in $(seq 100); do ctr version >/dev/null 2>&1 && break; sleep 0.1; done
ctr version >/dev/null || { cat "$T/containerd.log" >&2; exit 1; }
ctr images import "$T/busybox.tar" >/dev/null
for f in busybox pause; do
	CONTAINERD_NAMESPACE=k8s.io ctr images import "$T/$f.tar" >/dev/null
done

# --- 6. the suites -------------------------------------------------------------------
export SBX_CLIENT_RT=$RT SBX_CLIENT_TMP=$T SBX_CRI="$PY $here/cri.py $T/containerd.sock"
export PATH=$T/bin:$PATH
echo "clients: runtime under test $RT ($("$RT" --version | head -1))"
suites=()
for s in ${SBX_CLIENT_TESTS:-podman containerd}; do suites+=("$here/$s.bats"); done
start=$SECONDS
# bats in its own process group, waited for in the background: a TERM/INT to this
# script then runs the cleanup at once, and ends the suites (by that group) first.
# cwd: the temp dir, since conmon writes an `oom` file into its cwd (which is podman's)
cd "$T"
setsid -w bats --timing "${suites[@]}" &
bats_pid=$!
rc=0
wait "$bats_pid" || rc=$?
bats_pid=
echo "clients: suites took $((SECONDS - start)) s"
exit $rc
