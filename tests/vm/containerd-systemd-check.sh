#!/bin/bash
# Inside the systemd guest (run-systemd-check.sh, VM_SYSTEMD=1): containerd 1.6 as
# kubeadm's kubelet has it on a systemd host. contrib/containerd/config.toml with
# SystemdCgroup = true (what a user sets there), so the shim passes --systemd-cgroup
# and a cgroupsPath of kubepods-besteffort-podUID.slice:cri-containerd:ID; pods are
# asked for through the CRI as the kubelet's systemd driver does (cgroup_parent
# kubepods-besteffort-podUID.slice), by tests/clients/cri.py. The same cases for
# each runtime; one line per case ("cri-CASE RUNTIME pass|FAIL: why").
#   containerd-systemd-check.sh SNAP CONFIG CRI RUNTIME=PATH...
#     SNAP holds podman-rootfs/ (busybox, alloc); CONFIG is contrib's config.toml;
#     CRI is tests/clients/cri.py; RUNTIME is the CRI handler named for PATH
set -uo pipefail
snap=$1 contrib=$2 cri_py=$3
shift 3
note() { echo "cri-$1 $2 $3"; }
T=/tmp/containerd-check
mkdir -p "$T"
mount -t tmpfs tmpfs "$T" || exit 2
containerd_pid=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	local pod
	for pod in $(/usr/bin/python3 "$cri_py" "$T/containerd.sock" pods 2>/dev/null); do
		/usr/bin/python3 "$cri_py" "$T/containerd.sock" stop-pod "$pod" >/dev/null 2>&1
		/usr/bin/python3 "$cri_py" "$T/containerd.sock" rm-pod "$pod" >/dev/null 2>&1
	done
	[ -z "$containerd_pid" ] || { kill "$containerd_pid" && wait "$containerd_pid"; } 2>/dev/null
	umount -R -l "$T"
}
trap cleanup EXIT

# The images: busybox with the allocation probe, and the same as the pod's pause
# (podman makes the OCI archives, in storage of its own; ctr imports them).
P=(podman --root "$T/podman" --runroot "$T/podman-run" --storage-driver vfs)
tar -C "$snap/podman-rootfs" -c . | "${P[@]}" import -q --change 'ENV PATH=/bin' - localhost/sbx-busybox >/dev/null &&
	tar -C "$snap/podman-rootfs" -c . | "${P[@]}" import -q --change 'ENV PATH=/bin' \
		--change 'ENTRYPOINT ["/bin/sleep", "1000000"]' - localhost/sbx-pause >/dev/null &&
	"${P[@]}" save -q --format oci-archive -o "$T/busybox.tar" localhost/sbx-busybox &&
	"${P[@]}" save -q --format oci-archive -o "$T/pause.tar" localhost/sbx-pause || exit 2

# contrib's snippet, with SystemdCgroup = true, as the runtime "sbx" and again for
# each peer under its own handler name
{
	echo "version = 2"
	echo "root = \"$T/root\""
	echo "state = \"$T/state\""
	echo "[grpc]"
	echo "  address = \"$T/containerd.sock\""
	echo "[ttrpc]"
	echo "  address = \"$T/containerd.sock.ttrpc\""
	for rt in "$@"; do
		name=${rt%%=*} path=${rt#*=}
		grep -v '^version' "$contrib" | sed -n '/^\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.sbx\]/,$p' |
			sed -e "s|runtimes\.sbx|runtimes.$name|" -e "s|^\( *BinaryName = \).*|\1\"$path\"|" \
				-e "s|^\( *Root = \).*|\1\"/run/cri-$name\"|" -e 's|^\( *SystemdCgroup = \).*|\1true|'
	done
	cat <<EOF
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  disable_apparmor = true
  sandbox_image = "localhost/sbx-pause:latest"
  stream_server_port = "0"
EOF
} >"$T/containerd.toml"
containerd --config "$T/containerd.toml" >"$T/containerd.log" 2>&1 &
containerd_pid=$!
export CONTAINERD_ADDRESS=$T/containerd.sock CONTAINERD_NAMESPACE=k8s.io
for _ in $(seq 300); do ctr version >/dev/null 2>&1 && break; sleep 0.1; done
ctr images import "$T/busybox.tar" >/dev/null && ctr images import "$T/pause.tar" >/dev/null ||
	{ echo "containerd-check: containerd did not take the images:" >&2; tail -20 "$T/containerd.log" >&2; exit 2; }

cri() { /usr/bin/python3 "$cri_py" "$T/containerd.sock" "$@"; }
field() { systemctl show "$1" -p "$2" --value 2>/dev/null; }

check_runtime() {
	local rt=$1 uid pod slice ctr unit cg out
	uid=$(cat /proc/sys/kernel/random/uuid | tr - _)
	slice=kubepods-besteffort-pod$uid.slice
	if ! pod=$(cri run-pod "p-$rt" "$rt" "$slice" 2>&1); then
		note pod "$rt" "FAIL: $pod"
		return
	fi
	cg=$(field "cri-containerd-$pod.scope" ControlGroup)
	[ "$cg" = "/kubepods.slice/kubepods-besteffort.slice/$slice/cri-containerd-$pod.scope" ] &&
		note pod "$rt" pass || note pod "$rt" "FAIL: the pod's scope cri-containerd-$pod.scope has cgroup '$cg'"
	if ! ctr=$(cri create "$pod" "c-$rt" localhost/sbx-busybox:latest --memory 67108864 /bin/sleep 1000000 2>&1) ||
		! out=$(cri start "$ctr" 2>&1); then
		note start "$rt" "FAIL: $ctr $out"
		return
	fi
	note start "$rt" pass
	unit=cri-containerd-$ctr.scope
	cg=$(field "$unit" ControlGroup)
	out="$(field "$unit" Delegate) $cg $(field "$unit" MemoryMax)"
	[ "$out" = "yes /kubepods.slice/kubepods-besteffort.slice/$slice/$unit 67108864" ] &&
		note unit "$rt" pass || note unit "$rt" "FAIL: systemctl show $unit: $out"
	out=$(systemctl status --no-pager --lines 0 "$unit" 2>&1)
	case $out in
	*"Active: active (running)"*) note status "$rt" pass ;;
	*) note status "$rt" "FAIL: systemctl status: $(echo "$out" | tr -s ' \n' ' ')" ;;
	esac
	out=$(cri exec "$ctr" cat /sys/fs/cgroup/memory.max 2>&1)
	[ "$out" = 67108864 ] && note limits "$rt" pass || note limits "$rt" "FAIL: memory.max in the container: '$out'"
	cri exec "$ctr" /alloc 128 >/dev/null 2>&1
	out=$?
	[ "$out" = 137 ] && note oom "$rt" pass || note oom "$rt" "FAIL: a 128 MiB allocation under 64 MiB ended $out, not 137"
	# stopped and removed as the kubelet does: the container, then the pod
	out=$({ cri stop "$ctr" && cri rm "$ctr" && cri stop-pod "$pod" && cri rm-pod "$pod"; } 2>&1)
	out+=$(systemctl list-units --all --no-legend "cri-containerd-$pod.scope" "$unit" 2>&1)
	[ -z "$out" ] && note rm "$rt" pass || note rm "$rt" "FAIL: left after the pod's removal: $out"
}

for rt in "$@"; do
	check_runtime "${rt%%=*}"
done
