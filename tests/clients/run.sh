#!/bin/bash
# podman 4.3 and containerd 1.6 driving the runtime under test, end to end
# (shared/clients/CONTRACT.md §3-4): tests/clients/podman.bats and containerd.bats.
#   SBX_OCI=path              the binary under test (default: the checkout's ./sbx-oci)
#   SBX_CLIENT_RUNTIME=path   run the same suites against another runtime instead,
#                             e.g. SBX_CLIENT_RUNTIME=/usr/sbin/runc tests/clients/run.sh
#   SBX_CLIENT_REFERENCE=path the reference the podman suites are compared with
#                             (default: runc when installed; empty: none)
#   SBX_CLIENT_TESTS="podman podman-rootless containerd"   these suites (the default)
#   SBX_KEEP_TMP=1            keep the temp dir (configs, daemon log) afterwards
# Needs root. Installs the clients with apt-get when missing. podman runs as a user
# would have it (contrib/podman/README.md): the host's own containers.conf, the contrib
# drop-in installed in /etc/containers/containers.conf.d (removed again afterwards
# unless it was there), the default bridge network; rootful, then rootless as an
# unprivileged user. Private are only its storage and run dirs. containerd runs as a
# private daemon with its own config.toml (from contrib/containerd/config.toml), root,
# state, socket and CNI config. The trap removes every container, the daemon (by its
# PID), the mounts, the cgroups, the bridges and firewall rules made here.
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
for p in podman conmon containerd bats jq bsdutils python3-grpcio busybox-static iptables uidmap \
	containernetworking-plugins; do
	installed "$p" || need+=("$p")
done
# Optional: --init needs catatonit; netavark/aardvark-dns are podman 4.3's network
# stack (not a dependency in bookworm); runc, the reference; slirp4netns, which the
# podman README's rootless steps install.
for p in catatonit netavark aardvark-dns runc slirp4netns; do
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
# The unprivileged user rootless podman runs as, with subordinate id ranges.
RL_USER=sbxtest
id -u "$RL_USER" >/dev/null 2>&1 || useradd -M -s /bin/sh "$RL_USER"
grep -q "^$RL_USER:" /etc/subuid || usermod --add-subuids 200000-265535 "$RL_USER"
grep -q "^$RL_USER:" /etc/subgid || usermod --add-subgids 200000-265535 "$RL_USER"
# Host paths the clients create on first use: removed at the end only if they did
# not exist before (podman's netavark run dir and blob cache, the shims' socket dir,
# the cgroup parents podman, ctr and the CRI pods use).
host_dirs=(/run/containers /var/lib/containers /run/containerd /run/netns /var/lib/cni /etc/containers/containers.conf.d
	/etc/containers/networks /dev/shm/libpod_lock "/dev/shm/libpod_rootless_lock_$(id -u "$RL_USER")")
cgroup_parents=(libpod_parent "$NS" sbx-clients-cri)
# The bridge network's traces on the host: netavark's firewall chains, IPv4 forwarding
# (netavark turns it on), the bridge itself; put back as they were.
ip_forward_before=$(cat /proc/sys/net/ipv4/ip_forward)
netavark_rules_before=$( { iptables-save; ip6tables-save; } 2>/dev/null | grep -c NETAVARK || true)
bridge_before=$(ip -o link show podman0 2>/dev/null | wc -l || true)
CRI_BRIDGE=sbxcri0 # the CNI bridge of the CRI pods (the name is this suite's own)
dropin_created=
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
	if [ -x "$T/bin/podman-rootless" ]; then
		"$T/bin/podman-rootless" rm -af -t 0 >/dev/null 2>&1
		# rootless podman's pause process holds its user and mount namespaces
		pause=$(cat "$T/rl/run/libpod/tmp/pause.pid" 2>/dev/null)
		[ -n "$pause" ] && kill -9 "$pause" 2>/dev/null
	fi
	if [ -e "$T/dropin.saved" ]; then
		cp -p "$T/dropin.saved" "$dropin"
	elif [ -n "$dropin_created" ]; then
		rm -f "$dropin"
	fi
	if [ "$netavark_rules_before" = 0 ]; then
		for tool in iptables ip6tables; do
			if "$tool-save" 2>/dev/null | grep -q NETAVARK; then
				"$tool-save" | grep -v NETAVARK | "$tool-restore"
			fi
		done
	fi
	[ "$bridge_before" != 0 ] || ip link del podman0 2>/dev/null
	ip link del "$CRI_BRIDGE" 2>/dev/null
	echo "$ip_forward_before" >/proc/sys/net/ipv4/ip_forward
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
	# nothing of the rootless runs may outlive them (podman's pause process, conmon);
	# a zombie is already gone but for its parent's wait, which is not ours to do
	for _ in $(seq 50); do
		left=$(ps -o pid=,stat=,args= -u "$RL_USER" 2>/dev/null | awk '$2 !~ /^Z/')
		[ -n "$left" ] || break
		sleep 0.1
	done
	if [ -n "$left" ]; then
		echo "clients: processes of $RL_USER left after the suites:" >&2
		echo "$left" >&2
		[ "$rc" != 0 ] || rc=1
	fi
	if [ -n "${SBX_KEEP_TMP:-}" ]; then
		echo "clients: kept $T"
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 3. podman as contrib/podman/README.md sets it up: the host's own containers.conf
#        (Debian's, untouched) plus the contrib drop-in where the README installs it, and
#        the default bridge network. Private are only what would mix with the host's own
#        containers: storage (--root, --runroot) and podman's run dir (--tmpdir); the
#        runtime under test is named by path (its name, sbx-oci or runc, is what podman's
#        runtime_supports_* lists match).
mkdir -p "$T/bin" "$T/fifo"
dropin=/etc/containers/containers.conf.d/sbx-oci.conf
if [ -e "$dropin" ] && ! cmp -s "$dropin" "$repo/contrib/podman/sbx-oci.conf"; then
	cp -p "$dropin" "$T/dropin.saved"
fi
[ -e "$dropin" ] || dropin_created=1
install -Dm644 "$repo/contrib/podman/sbx-oci.conf" "$dropin"
# (the runtime is $SBX_CLIENT_RT when the suites run, so a reference can take its place)
export SBX_CLIENT_RT=$RT
cat >"$T/bin/podman" <<EOF
#!/bin/sh
exec $(command -v podman) --root $T/root --runroot $T/runroot --tmpdir $T/podman-tmp --runtime "\$SBX_CLIENT_RT" "\$@"
EOF
chmod +x "$T/bin/podman"
# Rootless podman: the test user with a home and XDG_RUNTIME_DIR of its own under $T
# (podman keeps its storage, config and state there), its subuid/subgid ranges, and no
# network but none/host (this host keeps /dev/net/tun, which slirp4netns needs, from users).
mkdir -p "$T/rl/home/.config/containers" "$T/rl/run"
# The user's own containers.conf, the layer podman reads over the system's, with what
# such a user on this host must set: no slirp4netns network by default (no tun).
printf '[containers]\nnetns = "none"\n' >"$T/rl/home/.config/containers/containers.conf"
chown -R "$RL_USER:" "$T/rl/home" "$T/rl/run"
chmod 700 "$T/rl/run"
cat >"$T/bin/podman-rootless" <<EOF
#!/bin/sh
cd $T/rl/home
exec setpriv --reuid=$RL_USER --regid=$RL_USER --init-groups env HOME=$T/rl/home XDG_RUNTIME_DIR=$T/rl/run \\
	$(command -v podman) --runtime "\$SBX_CLIENT_RT" "\$@"
EOF
chmod +x "$T/bin/podman-rootless"

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
chmod 644 "$T/busybox.tar"
"$T/bin/podman-rootless" load -q -i "$T/busybox.tar" >/dev/null

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

# Pods with a network of their own: Debian's CNI plugins, a private bridge and subnet
# that nothing routes to (no masquerade, no port mapping), addresses kept under \$T.
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "$T/cni"

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
mkdir -p "$T/cni"
cat >"$T/cni/10-sbx-clients.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "sbx-clients", "plugins": [
  {"type": "bridge", "bridge": "$CRI_BRIDGE", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.99.77.0/24"}]], "dataDir": "$T/cni-ipam"}}]}
EOF
containerd --config "$T/containerd.toml" >"$T/containerd.log" 2>&1 &
containerd_pid=$!
export CONTAINERD_ADDRESS=$T/containerd.sock CONTAINERD_NAMESPACE=$NS
for _ in $(seq 100); do ctr version >/dev/null 2>&1 && break; sleep 0.1; done
ctr version >/dev/null || { cat "$T/containerd.log" >&2; exit 1; }
ctr images import "$T/busybox.tar" >/dev/null
for f in busybox pause; do
	CONTAINERD_NAMESPACE=k8s.io ctr images import "$T/$f.tar" >/dev/null
done

# --- 6. the suites, for the runtime under test and then for the reference -----------
#   podman           podman.bats, rootful
#   podman-rootless  podman.bats again as $RL_USER (SBX_CLIENT_ROOTLESS=1)
#   containerd       containerd.bats (its daemon is bound to the runtime under test)
# With a reference runtime (runc, when installed), the podman suites run again with it,
# and tests/clients/matrix.sh compares the two: a case runc passes and the runtime
# under test fails is a failure even where bats itself passed (a skip, say).
export SBX_CLIENT_REPO=$repo SBX_CLIENT_TMP=$T SBX_CRI="$PY $here/cri.py $T/containerd.sock"
mkdir -p "$T/bin-rootless" "$T/tap"
ln -s ../bin/podman-rootless "$T/bin-rootless/podman"
ref=${SBX_CLIENT_REFERENCE-$(command -v runc || true)}
[ "$(realpath "${ref:-/}")" != "$RT" ] || ref=
echo "clients: runtime under test $RT ($("$RT" --version | head -1))${ref:+; reference $ref}"
start=$SECONDS
# cwd: the temp dir, since conmon writes an `oom` file into its cwd (which is podman's)
cd "$T"
rc=0
run_suite() { # LABEL RUNTIME: one suite, its TAP kept for the matrix
	local label=$1 rt=$2 file path=$T/bin:$PATH rootless=
	case $label in
	podman-rootless) file=podman rootless=1 path=$T/bin-rootless:$T/bin:$PATH ;;
	*) file=$label ;;
	esac
	echo "clients: $label with $(basename "$rt")"
	: >"$T/tap/$label.$(basename "$rt")"
	# bats in its own process group, waited for in the background: a TERM/INT to this
	# script then runs the cleanup at once, and ends the suite (by that group) first.
	SBX_CLIENT_RT=$rt SBX_CLIENT_ROOTLESS=$rootless SBX_CLIENT_ROOTLESS_USER=$RL_USER PATH=$path \
		setsid -w bats --timing --tap "$here/$file.bats" >"$T/tap/$label.$(basename "$rt")" &
	bats_pid=$!
	local r=0 tail_pid
	tail --pid="$bats_pid" -n +1 -f "$T/tap/$label.$(basename "$rt")" &
	tail_pid=$!
	wait "$bats_pid" || r=$?
	bats_pid=
	wait "$tail_pid"
	return $r
}
for s in ${SBX_CLIENT_TESTS:-podman podman-rootless containerd}; do
	run_suite "$s" "$RT" || rc=1
done
if [ -n "$ref" ]; then
	for s in ${SBX_CLIENT_TESTS:-podman podman-rootless}; do
		[ "$s" != containerd ] || continue
		run_suite "$s" "$ref" >/dev/null || true
		"$here/matrix.sh" "$s" "$T/tap/$s.$(basename "$RT")" "$T/tap/$s.$(basename "$ref")" || rc=1
	done
fi
echo "clients: suites took $((SECONDS - start)) s"
exit $rc
