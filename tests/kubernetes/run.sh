#!/bin/bash
# The kubernetes stage of `make check` (issue 30): a single-node cluster started here,
# with no internet and no systemd, whose kubelet runs pods through containerd 1.6 on
# sbx-oci (RuntimeClass sbx-oci, handler sbx, configured exactly as contrib/ tells
# users) and, as the baseline, on runc (RuntimeClass runc). tests/kubernetes/pods.bats
# runs once per handler; a case runc passes and sbx fails fails the stage.
#
#   SBX_OCI=path          the runtime under test (default: the checkout's ./sbx-oci)
#   SBX_K8S_HANDLERS="sbx runc"   the handlers to run the suite with (default both)
#   SBX_K8S_TESTS=regex   only the cases whose name matches (bats --filter)
#   SBX_KEEP_TMP=1        keep the cluster's directory (logs, configs) afterwards
#
# What runs, all from Debian's archive (tests/kubernetes/build.sh builds Kubernetes
# 1.20 from Debian's source package and caches the binaries outside the tree):
#   etcd (etcd-server), kube-apiserver (self-signed TLS, a token for the admin, the
#   service-account keys), kube-controller-manager (namespaces, service accounts,
#   tokens, garbage collection; pods name their node, so no scheduler), containerd
#   (private root, state, socket, CNI bridge), kubelet (cgroupfs driver, its root dir
#   under the cluster's directory). Images are made locally (oci-image.py) and
#   imported with ctr: the pause program of the same Kubernetes tree, and Debian's
#   busybox-static.
# Every daemon is stopped by its pid; the trap removes the pods' containers, mounts,
# cgroups (kubepods and the containers' own), network namespaces, the CNI bridge and
# the host paths the kubelet makes (/var/log/pods, /var/log/containers), and puts back
# the kernel tunables the kubelet sets (vm.overcommit_memory, kernel.panic, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export SBX_OCI=${SBX_OCI:-$repo/sbx-oci}
RT=$(realpath "$SBX_OCI")
[ "$(id -u)" = 0 ] || { echo "kubernetes: needs root" >&2; exit 1; }
[ -x "$RT" ] || { echo "kubernetes: $RT is not built" >&2; exit 1; }

# --- 1. packages and binaries ------------------------------------------------------
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
need=()
for p in etcd-server containerd containernetworking-plugins runc bats jq openssl iproute2 busybox-static; do
	installed "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "kubernetes: apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
start=$SECONDS
KBIN=$("$here/build.sh")
echo "kubernetes: binaries in $KBIN (ready in $((SECONDS - start)) s): $("$KBIN/kubelet" --version)"

# --- 2. the cluster's directory and the cleanup --------------------------------------
export KT
KT=$(mktemp -d /tmp/sbx-k8s.XXXXXX)
chmod 755 "$KT"
export KBIN RT KUBECONFIG=$KT/admin.kubeconfig
source "$here/cluster.bash"
rc=0
suite_pids=()
cleanup() {
	local r=$? pid
	[ "$rc" != 0 ] || rc=$r
	# suites still running (this script was interrupted): each bats in its own group
	# (|| true: this runs under set -e, and a suite that ended has no group left)
	for pid in "${suite_pids[@]}"; do kill -- -"$pid" 2>/dev/null || true; done
	cluster_down || rc=1
	if [ -n "${SBX_KEEP_TMP:-}" ]; then echo "kubernetes: kept $KT"; else rm -rf "$KT"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 3. up --------------------------------------------------------------------------
start=$SECONDS
cluster_up
echo "kubernetes: cluster up in $((SECONDS - start)) s (node $(kubectl get node -o name))"

# --- 4. the suite, per handler, all at once ------------------------------------------
# Most of a case is waiting on the kubelet (back-off, probes, a namespace's removal):
# the handlers' suites overlap, each in its namespace (pods.bats locks the cluster
# for the one case that restarts the daemons). Each one's TAP is shown whole.
mkdir -p "$KT/tap"
start=$SECONDS
for handler in ${SBX_K8S_HANDLERS:-sbx runc}; do
	K8S_HANDLER=$handler setsid bats --timing --tap ${SBX_K8S_TESTS:+--filter "$SBX_K8S_TESTS"} "$here/pods.bats" \
		>"$KT/tap/$handler" 2>&1 &
	suite_pids+=($!)
done
wait "${suite_pids[@]}" || true
for handler in ${SBX_K8S_HANDLERS:-sbx runc}; do
	echo "kubernetes: pods.bats with handler $handler"
	cat "$KT/tap/$handler"
	echo "kubernetes: handler $handler: $(grep -c '^ok' "$KT/tap/$handler") passed, $(grep -c '^not ok' "$KT/tap/$handler") failed"
done
echo "kubernetes: the suites took $((SECONDS - start)) s"
# a case the baseline passes and sbx does not (a skip included) fails the stage; sbx
# failing a case at all fails it too
if [ -s "$KT/tap/runc" ] && [ -s "$KT/tap/sbx" ]; then
	"$repo/tests/clients/matrix.sh" kubernetes "$KT/tap/sbx" "$KT/tap/runc" || rc=1
fi
if [ ! -s "$KT/tap/sbx" ] || grep -q '^not ok' "$KT/tap/sbx"; then
	rc=1
fi
exit "$rc"
