#!/bin/bash
# Inside the systemd guest (VM_SYSTEMD=1): the kubelet 1.20 of the kubernetes stage
# with --cgroup-driver=systemd, as kubeadm sets it on a systemd host, and containerd
# 1.6 with contrib's config and SystemdCgroup = true, so the runtime gets
# --systemd-cgroup and "kubepods-...-podUID.slice:cri-containerd:ID" from a real
# kubelet. The cluster is tests/kubernetes/cluster.bash's (etcd, apiserver,
# controller-manager, containerd, kubelet), started the same way. One pod per handler
# (sbx, runc) with a 64 MiB memory limit; each step timed, since the guest runs
# under software emulation. One line per case ("k8s-CASE HANDLER pass|FAIL: why") and
# "k8s-time STEP SECONDS" lines.
#   kubelet-systemd-check.sh REPO KBIN RUNTIME   (run-kubelet-systemd-check.sh boots
#   the guest for it)
set -uo pipefail
repo=$1 KBIN=$2 RT=$3
here=$repo/tests/kubernetes
# the handler sbx is the runtime sbx-oci (contrib's RuntimeClass), as the results name it
note() { echo "k8s-$1 $([ "$2" = sbx ] && echo sbx-oci || echo "$2") $3"; }
took() { echo "k8s-time $1 $((SECONDS - t0))"; t0=$SECONDS; }
KT=/tmp/kt
mkdir -p "$KT" && mount -t tmpfs tmpfs "$KT" && chmod 755 "$KT" || exit 2
# the guest has no network (and no dummy or bridge module): a node address and a
# default route on the loopback link; the pods use the host's network
ip addr add 10.215.0.1/32 dev lo && ip route add default dev lo || exit 2
export KT KBIN RT KUBECONFIG=$KT/admin.kubeconfig
# shellcheck source=../kubernetes/cluster.bash
source "$here/cluster.bash"
# the systemd driver: the kubelet's, and containerd's for both handlers
eval "$(declare -f start_kubelet | sed 's/--cgroup-driver=cgroupfs/--cgroup-driver=systemd/')"
eval "orig_$(declare -f write_containerd_config)"
write_containerd_config() {
	orig_write_containerd_config
	sed -i -e 's/^\( *SystemdCgroup = \).*/\1true/' \
		-e "s|^\( *Root = \"$KT/runc-root\"\)$|\1\n    SystemdCgroup = true|" "$KT/containerd.toml"
}
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	cluster_down >/dev/null 2>&1
	umount -R -l "$KT"
}
trap cleanup EXIT
t0=$SECONDS
start_etcd && took etcd &&
	start_apiserver && took apiserver &&
	start_controller_manager && took controller-manager &&
	start_containerd && took containerd &&
	import_images && took images &&
	start_kubelet && took kubelet-ready &&
	apply_runtimeclasses || {
	note cluster sbx "FAIL: the cluster did not come up"
	for d in kubelet containerd apiserver; do echo "--- $d.log" && tail -30 "$KT/$d.log"; done
	exit 0
}
note cluster sbx pass
driver=$(grep -o 'CgroupDriver:[a-z]*' "$KT/kubelet.log" | head -1)
echo "k8s-kubelet-driver ${driver:-unknown}"

pod_running() { [ "$(kubectl get pod "$1" -o jsonpath='{.status.phase}')" = Running ]; }

for handler in sbx runc; do
	rc=$([ "$handler" = sbx ] && echo sbx-oci || echo runc)
	t0=$SECONDS
	kubectl apply -f - >/dev/null <<YAML || { note pod "$handler" "FAIL: apply"; continue; }
apiVersion: v1
kind: Pod
metadata: {name: p-$handler, namespace: default}
spec:
  nodeName: $K8S_NODE
  runtimeClassName: $rc
  restartPolicy: Never
  hostNetwork: true
  containers:
  - name: c
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: [sh, -c, "cat /proc/self/cgroup; cat /sys/fs/cgroup/memory.max; sleep 600"]
    resources: {limits: {memory: 64Mi}, requests: {memory: 64Mi}}
YAML
	if ! until_ok 600 "pod p-$handler" pod_running "p-$handler"; then
		note pod "$handler" "FAIL: not running: $(kubectl get pod "p-$handler" -o jsonpath='{.status}')"
		continue
	fi
	took "pod-running-$handler"
	note pod "$handler" pass
	uid=$(kubectl get pod "p-$handler" -o jsonpath='{.metadata.uid}' | tr - _)
	cid=$(kubectl get pod "p-$handler" -o jsonpath='{.status.containerStatuses[0].containerID}')
	cid=${cid#containerd://}
	unit=cri-containerd-$cid.scope
	# a Burstable pod (no cpu request): kubepods-burstable-podUID.slice
	slice=kubepods-burstable-pod$uid.slice
	out=$(systemctl show "$unit" -p Slice,Delegate,MemoryMax --value 2>&1 | tr '\n' ' ')
	[ "$out" = "$slice yes 67108864 " ] && note unit "$handler" pass || note unit "$handler" "FAIL: $unit: $out (slice $slice)"
	for _ in $(seq 60); do
		log=$(kubectl logs "p-$handler" 2>/dev/null)
		[ -n "$log" ] && break
		sleep 1
	done
	cg=/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/$slice/$unit
	out="$(cat "$cg/memory.max" 2>&1) $(wc -l <"$cg/cgroup.procs" 2>&1)"
	[ "$out" = "67108864 1" ] && [[ "$log" == *67108864* ]] && note in-scope "$handler" pass ||
		note in-scope "$handler" "FAIL: $cg: memory.max and processes: $out; the container says: $log"
	t0=$SECONDS
	kubectl delete pod "p-$handler" --grace-period=1 --wait=true --timeout=600s >/dev/null 2>&1
	took "pod-deleted-$handler"
	for _ in $(seq 120); do systemctl is-active -q "$unit" || break; sleep 1; done
	systemctl is-active -q "$unit" && note unit-gone "$handler" "FAIL: $unit still active" || note unit-gone "$handler" pass
done
exit 0
