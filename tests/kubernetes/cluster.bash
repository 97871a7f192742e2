# The single-node cluster of the kubernetes stage, sourced by run.sh (up and down) and
# by pods.bats (restarting containerd or the kubelet). Everything lives under $KT;
# $KBIN holds the Kubernetes binaries, $RT is the runtime under test.
#
#   cluster_up        etcd, apiserver, controller-manager, containerd, kubelet, the
#                     images and the RuntimeClasses; returns once the node is Ready
#   cluster_down      everything stopped and removed (see run.sh)
#   daemon_restart N  stops daemon N (containerd, kubelet) by its pid and starts it again
# Ports are the stage's own (etcd 23790/23800, apiserver 64430, kubelet 10260).

K8S_NODE=sbx-node
K8S_BRIDGE=sbxk8s0
K8S_POD_SUBNET=10.213.0.0/24
K8S_SERVICE_RANGE=10.214.0.0/24
K8S_APISERVER_PORT=64430
K8S_KUBELET_PORT=10260
# the kubelet's kernel tunables (pkg/kubelet/cm: setupKernelTunables), put back after
K8S_TUNABLES="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
# host paths the kubelet and containerd make; removed after if they were not there
K8S_HOST_DIRS="/var/log/pods /var/log/containers /run/containerd /var/lib/kubelet /run/netns /var/run/netns"

k8s_log() { echo "kubernetes: $*" >&2; }

# daemon_start NAME CMD...: runs CMD in the background in its own session, output to
# $KT/NAME.log, pid in $KT/NAME.pid; the command is kept for daemon_restart.
daemon_start() {
	local name=$1
	shift
	printf '%q ' "$@" >"$KT/$name.cmd"
	# (not holding the caller's other fds: bats waits for its fd 3 to close)
	setsid "$@" >>"$KT/$name.log" 2>&1 </dev/null 3>&- 4>&- 5>&- &
	echo $! >"$KT/$name.pid"
}

# daemon_stop NAME: SIGTERM to its pid, SIGKILL after 15 s.
daemon_stop() {
	local pid
	pid=$(cat "$KT/$1.pid" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null || { rm -f "$KT/$1.pid"; return 0; }
	for _ in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$KT/$1.pid"
}

daemon_restart() {
	daemon_stop "$1"
	# shellcheck disable=SC2046 # the saved, quoted command line
	eval "daemon_start $1 $(cat "$KT/$1.cmd")"
}

# until_ok SECONDS WHAT CMD...: retries CMD every 0.5 s
until_ok() {
	local secs=$1 what=$2 i
	shift 2
	for i in $(seq $((secs * 2))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	k8s_log "$what did not come up in $secs s"
	return 1
}

port_listening() { ss -Hltn "sport = :$1" | grep -q .; }

node_ip() {
	ip -4 -o addr show scope global | awk '{ split($4, a, "/"); print a[1]; exit }'
}

kubectl() { "$KBIN/kubectl" --kubeconfig "$KT/admin.kubeconfig" "$@"; }

write_kubeconfig() { # FILE USER
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sbx
  cluster:
    server: https://127.0.0.1:$K8S_APISERVER_PORT
    insecure-skip-tls-verify: true
users:
- name: $2
  user:
    token: $(cat "$KT/token")
contexts:
- name: sbx
  context: {cluster: sbx, user: $2}
current-context: sbx
EOF
}

start_etcd() {
	daemon_start etcd etcd --name sbx --data-dir "$KT/etcd" --listen-client-urls http://127.0.0.1:23790 \
		--advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
		--initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster sbx=http://127.0.0.1:23800
	until_ok 30 etcd port_listening 23790
}

start_apiserver() {
	mkdir -p "$KT/pki"
	openssl genrsa -out "$KT/pki/sa.key" 2048 2>/dev/null
	openssl rand -hex 16 >"$KT/token"
	echo "$(cat "$KT/token"),admin,admin,system:masters" >"$KT/tokens.csv"
	daemon_start apiserver "$KBIN/kube-apiserver" --etcd-servers=http://127.0.0.1:23790 \
		--secure-port="$K8S_APISERVER_PORT" --advertise-address="$(node_ip)" --cert-dir="$KT/pki" \
		--token-auth-file="$KT/tokens.csv" --authorization-mode=AlwaysAllow \
		--service-cluster-ip-range="$K8S_SERVICE_RANGE" --service-account-issuer=https://kubernetes.default.svc \
		--service-account-key-file="$KT/pki/sa.key" --service-account-signing-key-file="$KT/pki/sa.key" \
		--allow-privileged=true --profiling=false --kubelet-preferred-address-types=InternalIP,Hostname
	write_kubeconfig "$KT/admin.kubeconfig" admin
	until_ok 90 kube-apiserver kubectl get --raw /readyz
}

start_controller_manager() {
	daemon_start controller-manager "$KBIN/kube-controller-manager" --kubeconfig="$KT/admin.kubeconfig" \
		--service-account-private-key-file="$KT/pki/sa.key" --root-ca-file="$KT/pki/apiserver.crt" \
		--leader-elect=false --use-service-account-credentials=false --port=0 --secure-port=10267 \
		--controllers='*,-nodeipam,-cloud-node-lifecycle,-route,-service,-bootstrapsigner,-tokencleaner,-csrsigning'
	until_ok 60 "the default service account" kubectl -n default get serviceaccount default
}

# containerd's config: the contrib snippet as users are told to merge it (BinaryName
# pointed at the runtime under test, Root private), the runc baseline, CNI, images.
write_containerd_config() {
	{
		echo "version = 2"
		echo "root = \"$KT/containerd-root\""
		echo "state = \"$KT/containerd-state\""
		echo "[grpc]"
		echo "  address = \"$KT/containerd.sock\""
		echo "[ttrpc]"
		echo "  address = \"$KT/containerd.sock.ttrpc\""
		echo '[plugins."io.containerd.internal.v1.opt"]'
		echo "  path = \"$KT/opt\""
		grep -v '^version' "$repo/contrib/containerd/config.toml" |
			sed -e "s|^\( *BinaryName = \).*|\1\"$RT\"|" -e "s|^\( *Root = \).*|\1\"$KT/sbx-root\"|" \
				-e '/^\[plugins."io.containerd.grpc.v1.cri"\]$/a\  disable_apparmor = true\n  sandbox_image = "sbx.local/pause:1.20"'
		cat <<EOF
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "$KT/cni"
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    Root = "$KT/runc-root"
EOF
	} >"$KT/containerd.toml"
	mkdir -p "$KT/cni"
	cat >"$KT/cni/10-sbx-k8s.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "sbx-k8s", "plugins": [
  {"type": "bridge", "bridge": "$K8S_BRIDGE", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$K8S_POD_SUBNET"}]], "dataDir": "$KT/cni-ipam"}},
  {"type": "loopback"}]}
EOF
}

ctr_k8s() { ctr --address "$KT/containerd.sock" -n k8s.io "$@"; }

start_containerd() {
	write_containerd_config
	daemon_start containerd containerd --config "$KT/containerd.toml"
	until_ok 30 containerd ctr --address "$KT/containerd.sock" version
}

# The images: pause from the Kubernetes tree; busybox-static with the lib symlinks
# the host's /usr needs when a pod mounts it (the Python pods).
import_images() {
	local r=$KT/images
	mkdir -p "$r/pause" "$r/busybox/bin" "$r/busybox/usr" "$r/busybox/tmp" "$r/busybox/etc"
	cp "$KBIN/pause" "$r/pause/pause"
	cp /bin/busybox "$r/busybox/bin/busybox"
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$r/busybox/bin/$a"; done
	for d in lib lib64 lib32; do
		[ -L "/$d" ] && ln -s "$(readlink "/$d")" "$r/busybox/$d"
	done
	chmod 1777 "$r/busybox/tmp"
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/busybox/etc/passwd"
	python3 "$here/oci-image.py" sbx.local/pause:1.20 "$r/pause" "$r/pause.tar" --entrypoint '["/pause"]'
	python3 "$here/oci-image.py" sbx.local/busybox:1 "$r/busybox" "$r/busybox.tar" --cmd '["/bin/sh"]'
	ctr_k8s images import "$r/pause.tar" >/dev/null
	ctr_k8s images import "$r/busybox.tar" >/dev/null
}

# --sync-frequency 10s (a minute by default): a configMap's update reaches its volume
# in seconds, not a minute, in the volumes test.
start_kubelet() {
	mkdir -p "$KT/kubelet"
	write_kubeconfig "$KT/kubelet.kubeconfig" "system:node:$K8S_NODE"
	daemon_start kubelet "$KBIN/kubelet" --kubeconfig="$KT/kubelet.kubeconfig" --hostname-override="$K8S_NODE" \
		--node-ip="$(node_ip)" --root-dir="$KT/kubelet" --cert-dir="$KT/kubelet/pki" \
		--container-runtime=remote --container-runtime-endpoint="unix://$KT/containerd.sock" \
		--cgroup-driver=cgroupfs --fail-swap-on=false --make-iptables-util-chains=false \
		--port="$K8S_KUBELET_PORT" --read-only-port=0 --healthz-port=0 --anonymous-auth=true \
		--authorization-mode=AlwaysAllow --authentication-token-webhook=false \
		--eviction-hard='memory.available<1Mi,nodefs.available<1%,imagefs.available<1%' \
		--image-gc-high-threshold=100 --image-gc-low-threshold=99 --serialize-image-pulls=false \
		--volume-plugin-dir="$KT/kubelet/volume-plugins" --pod-infra-container-image=sbx.local/pause:1.20 \
		--runtime-request-timeout=2m --sync-frequency=10s
	until_ok 120 "the node" node_ready
}

node_ready() {
	[ "$(kubectl get node "$K8S_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

apply_runtimeclasses() {
	# sbx-oci as contrib/kubernetes/runtimeclass.yaml defines it, and the baseline
	kubectl apply -f "$repo/contrib/kubernetes/runtimeclass.yaml" >/dev/null
	kubectl apply -f - >/dev/null <<EOF
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: runc
handler: runc
EOF
}

cluster_up() {
	local t
	: >"$KT/tunables"
	for t in $K8S_TUNABLES; do echo "$t $(cat "/proc/sys/$t")" >>"$KT/tunables"; done
	: >"$KT/created"
	for t in $K8S_HOST_DIRS; do [ -e "$t" ] || echo "$t" >>"$KT/created"; done
	for t in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
		[ -e "$t/kubepods" ] || echo "$t/kubepods" >>"$KT/created"
	done
	start_etcd
	start_apiserver
	start_controller_manager
	start_containerd
	import_images
	start_kubelet
	apply_runtimeclasses
}

# Every container the kubelet left, through containerd's CRI: by deleting the pods'
# namespaces' pods first (graceful), then what containerd still has.
remove_workloads() {
	local ns
	if [ -f "$KT/kubelet.pid" ] && [ -f "$KT/apiserver.pid" ]; then
		for ns in $(kubectl get ns -o name 2>/dev/null | sed 's|namespace/||' | grep '^sbx-'); do
			kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
		done
		kubectl delete pods --all --all-namespaces --grace-period=0 --force >/dev/null 2>&1 || true
		for _ in $(seq 60); do
			[ -z "$(ctr_k8s tasks ls -q 2>/dev/null)" ] && break
			sleep 1
		done
	fi
}

cluster_down() {
	local ok=0 t v m root id
	remove_workloads
	daemon_stop kubelet
	daemon_stop controller-manager
	if [ -f "$KT/containerd.pid" ]; then
		for t in $(ctr_k8s tasks ls -q 2>/dev/null); do
			ctr_k8s tasks kill -s SIGKILL "$t" >/dev/null 2>&1
			ctr_k8s tasks rm -f "$t" >/dev/null 2>&1
		done
		for t in $(ctr_k8s containers ls -q 2>/dev/null); do ctr_k8s containers rm "$t" >/dev/null 2>&1; done
	fi
	daemon_stop containerd
	daemon_stop apiserver
	daemon_stop etcd
	# shims of this containerd (its socket path is this run's own) that outlived it
	for t in $(pgrep -f -- "-address $KT/containerd.sock" 2>/dev/null); do kill -9 "$t" 2>/dev/null; done
	for root in "$KT"/sbx-root/* "$KT"/runc-root/*; do
		[ -d "$root" ] || continue
		for id in "$root"/*; do
			[ -d "$id" ] || continue
			case $root in
			"$KT"/sbx-root/*) "$RT" --root "$root" delete --force "${id##*/}" >/dev/null 2>&1 ;;
			*) runc --root "$root" delete --force "${id##*/}" >/dev/null 2>&1 ;;
			esac
		done
	done
	awk -v t="$KT/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	ip link del "$K8S_BRIDGE" 2>/dev/null || true
	if [ -f "$KT/tunables" ]; then
		while read -r t v; do echo "$v" >"/proc/sys/$t" 2>/dev/null || ok=1; done <"$KT/tunables"
	fi
	if [ -f "$KT/created" ]; then
		while read -r t; do
			case $t in
			/sys/fs/cgroup/*) [ -d "$t" ] && find "$t" -depth -type d -exec rmdir {} + 2>/dev/null ;;
			*) rm -rf "$t" ;;
			esac
			if [ -e "$t" ]; then
				k8s_log "left on the host: $t"
				ok=1
			fi
		done <"$KT/created"
	fi
	return $ok
}
