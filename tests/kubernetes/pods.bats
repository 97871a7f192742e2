#!/usr/bin/env bats
# Pods as a kubelet runs them, through containerd, on the handler $K8S_HANDLER (sbx:
# sbx-oci by RuntimeClass sbx-oci, as contrib/kubernetes/ defines it; runc: the
# baseline). Each case applies a pod spec with kubectl and checks what kubectl and the
# host see. run.sh starts the cluster ($KT, $KBIN, $RT) and runs this file once per
# handler; a case runc passes and sbx fails fails the stage.

source "$BATS_TEST_DIRNAME/cluster.bash"

# run.sh runs this file for both handlers at once, each in a namespace of its own.
# The one case that restarts the daemons has the cluster to itself: every other case
# (and the namespace's setup and removal) holds a shared lock on $KT/daemons.lock
# while it runs, and that case an exclusive one.
cluster_shared() { exec {CLUSTER_LOCK}>>"$KT/daemons.lock" && flock -s "$CLUSTER_LOCK"; }
cluster_exclusive() { flock -u "$CLUSTER_LOCK" && flock -x "$CLUSTER_LOCK"; }
cluster_release() { flock -u "$CLUSTER_LOCK" && exec {CLUSTER_LOCK}>&-; }

setup_file() {
	export NS=sbx-$K8S_HANDLER
	cluster_shared
	kubectl create namespace "$NS" >/dev/null 2>&1 || true
	kubectl -n "$NS" wait --for=jsonpath='{.secrets}' serviceaccount/default --timeout=60s >/dev/null 2>&1 || true
	cluster_release
}

teardown_file() {
	cluster_shared
	kubectl delete namespace "$NS" --wait=true --timeout=120s >/dev/null 2>&1 || true
	cluster_release
}

setup() {
	case $K8S_HANDLER in
	sbx) RC=sbx-oci ROOT=$KT/sbx-root/k8s.io ;;
	runc) RC=runc ROOT=$KT/runc-root/k8s.io ;;
	*) echo "K8S_HANDLER=$K8S_HANDLER: sbx or runc" >&2; return 1 ;;
	esac
	cluster_shared
}

teardown() {
	kubectl -n "$NS" delete pods --all --grace-period=1 --wait=true --timeout=60s >/dev/null 2>&1 || true
	cluster_release
}

kc() { kubectl -n "$NS" "$@"; }

# pod NAME [SPEC-FRAGMENT-YAML on stdin]: a pod on this node and runtime class; the
# fragment is the rest of the spec (containers, volumes, ...), indented two spaces.
pod() {
	local name=$1
	{
		cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels: {app: sbx-test, handler: $K8S_HANDLER}
spec:
  nodeName: $K8S_NODE
  runtimeClassName: $RC
  terminationGracePeriodSeconds: 5
EOF
		cat
	} | kc apply -f - >/dev/null
}

# jp POD JSONPATH: a field of the pod
jp() { kc get pod "$1" -o jsonpath="{$2}"; }

# until_pod POD JSONPATH WANT [SECONDS]: the field reaches WANT
until_pod() {
	local secs=${4:-90} got=
	for _ in $(seq $((secs * 2))); do
		got=$(jp "$1" "$2" 2>/dev/null || true)
		[ "$got" = "$3" ] && return 0
		sleep 0.5
	done
	echo "pod $1: $2 is '$got', not '$3' after $secs s" >&2
	kc describe pod "$1" >&2 || true
	return 1
}

running() { until_pod "$1" .status.phase Running "${2:-90}"; }

# the containerd id of container $2 (default: the first) of pod $1
cid() {
	local c=${2:-}
	if [ -n "$c" ]; then
		jp "$1" ".status.containerStatuses[?(@.name==\"$c\")].containerID" | sed 's|^containerd://||'
	else
		jp "$1" '.status.containerStatuses[0].containerID' | sed 's|^containerd://||'
	fi
}

# host_pid ID: the container's init pid, from the handler's runtime itself
host_pid() {
	case $K8S_HANDLER in
	sbx) "$RT" --root "$ROOT" state "$1" | jq -r .pid ;;
	runc) runc --root "$ROOT" state "$1" | jq -r .pid ;;
	esac
}

# the pod's containers (its pause container too) are in the handler's runtime state
on_handler() {
	local uid ids id
	uid=$(jp "$1" .metadata.uid)
	ids=$(ctr_k8s containers ls -q "labels.\"io.kubernetes.pod.uid\"==$uid")
	[ -n "$ids" ] || { echo "no containers of pod $1 in containerd" >&2; return 1; }
	for id in $ids; do
		[ -d "$ROOT/$id" ] || { echo "container $id of pod $1 is not in $ROOT" >&2; return 1; }
	done
	echo "$ids" | wc -l
}

# nothing of pod UID is left on the host: state dirs, cgroups, mounts
nothing_left_of() {
	local uid=$1 ids=$2 id left
	for id in $ids; do
		[ ! -e "$KT/sbx-root/k8s.io/$id" ] && [ ! -e "$KT/runc-root/k8s.io/$id" ] ||
			{ echo "state of $id left" >&2; return 1; }
	done
	left=$(find /sys/fs/cgroup -maxdepth 5 -type d -name "pod$uid" 2>/dev/null)
	[ -z "$left" ] || { echo "cgroups left: $left" >&2; return 1; }
	left=$(grep -e "$uid" $(printf -- '-e %s ' $ids) /proc/self/mountinfo || true)
	[ -z "$left" ] || { echo "mounts left: $left" >&2; return 1; }
}

@test "pod: the pause container and the app run on the handler's runtime, in cgroups under kubepods; kubectl exec and logs" {
	pod basic <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sh", "-c", "echo to-stdout; echo to-stderr >&2; exec sleep 1000"]
EOF
	running basic
	[ "$(on_handler basic)" = 2 ]
	pid=$(host_pid "$(cid basic)")
	grep -q ":/kubepods/besteffort/pod$(jp basic .metadata.uid)/" "/proc/$pid/cgroup"
	[ "$(kc exec basic -- sh -c 'echo $((6*7))')" = 42 ]
	run kc exec basic -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	[ "$(echo piped | kc exec -i basic -- cat)" = piped ]
	logs=$(kc logs basic)
	[[ "$logs" == *to-stdout* ]] && [[ "$logs" == *to-stderr* ]]
}

@test "pod: the kubelet's binds: /etc/hostname, /etc/hosts, /etc/resolv.conf, and /dev/termination-log as the termination message" {
	pod files <<EOF
  restartPolicy: Never
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sh", "-c", "cat /etc/hostname; grep -c files /etc/hosts; grep -c nameserver /etc/resolv.conf; echo goodbye > /dev/termination-log; exit 3"]
EOF
	until_pod files .status.phase Failed
	out=$(kc logs files)
	[ "$(sed -n 1p <<<"$out")" = files ]
	[ "$(sed -n 2p <<<"$out")" -ge 1 ]
	[ "$(sed -n 3p <<<"$out")" -ge 1 ]
	[ "$(jp files '.status.containerStatuses[0].state.terminated.exitCode')" = 3 ]
	[ "$(jp files '.status.containerStatuses[0].state.terminated.message')" = goodbye ]
}

@test "volumes: emptyDir (disk, shared by two containers, and memory), configMap, secret, downward API, projected service-account token" {
	kc create configmap cfg --from-literal=greeting=hello --dry-run=client -o yaml | kc apply -f - >/dev/null
	kc create secret generic sec --from-literal=password=s3cr3t --dry-run=client -o yaml | kc apply -f - >/dev/null
	pod vols <<EOF
  containers:
  - name: writer
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sh", "-c", "echo shared > /scratch/note; exec sleep 1000"]
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
    - {name: mem, mountPath: /mem}
    - {name: cfg, mountPath: /cfg}
    - {name: sec, mountPath: /sec}
    - {name: info, mountPath: /info}
    - {name: token, mountPath: /token}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: mem, emptyDir: {medium: Memory}}
  - {name: cfg, configMap: {name: cfg}}
  - {name: sec, secret: {secretName: sec}}
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: name, fieldRef: {fieldPath: metadata.name}}
  - name: token
    projected:
      sources:
      - serviceAccountToken: {path: sa, expirationSeconds: 3600, audience: sbx-test}
EOF
	running vols
	until_pod vols '.status.containerStatuses[?(@.name=="writer")].ready' true
	[ "$(kc exec vols -c app -- cat /scratch/note)" = shared ]
	kc exec vols -c app -- sh -c 'grep " /mem " /proc/mounts | grep -q tmpfs; echo x > /mem/y'
	[ "$(kc exec vols -c app -- cat /cfg/greeting)" = hello ]
	[ "$(kc exec vols -c app -- cat /sec/password)" = s3cr3t ]
	[ "$(kc exec vols -c app -- cat /info/name)" = vols ]
	kc exec vols -c app -- grep -q 'handler="'"$K8S_HANDLER"'"' /info/labels
	# a JWT: three dot-separated parts; and the default service account's own token
	[ "$(kc exec vols -c app -- sh -c 'tr . "\n" < /token/sa | wc -l')" -ge 2 ]
	kc exec vols -c app -- test -s /var/run/secrets/kubernetes.io/serviceaccount/token
	# the configMap's volume follows an update
	kc create configmap cfg --from-literal=greeting=updated --dry-run=client -o yaml | kc apply -f - >/dev/null
	for _ in $(seq 120); do
		[ "$(kc exec vols -c app -- cat /cfg/greeting)" = updated ] && break
		sleep 1
	done
	[ "$(kc exec vols -c app -- cat /cfg/greeting)" = updated ]
}

@test "securityContext: runAsUser/runAsGroup, allowPrivilegeEscalation false, readOnlyRootFilesystem, capabilities drop ALL add two" {
	pod secctx <<EOF
  containers:
  - name: user
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    securityContext: {runAsUser: 1234, runAsGroup: 5678, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true}
  - name: caps
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    securityContext: {capabilities: {drop: [ALL], add: [CHOWN, NET_BIND_SERVICE]}}
EOF
	running secctx
	[ "$(kc exec secctx -c user -- id -u)" = 1234 ]
	[ "$(kc exec secctx -c user -- id -g)" = 5678 ]
	kc exec secctx -c user -- grep -q 'NoNewPrivs:.*1' /proc/self/status
	run kc exec secctx -c user -- touch /newfile
	[ "$status" -ne 0 ]
	# CAP_CHOWN (0) and CAP_NET_BIND_SERVICE (10): 0x401
	kc exec secctx -c caps -- grep -q 'CapEff:.*0000000000000401' /proc/self/status
	kc exec secctx -c caps -- grep -q 'CapBnd:.*0000000000000401' /proc/self/status
	kc exec secctx -c caps -- grep -q 'NoNewPrivs:.*0' /proc/self/status
}

@test "securityContext: runAsNonRoot refuses an image that runs as root, and runs with a non-root runAsUser" {
	pod nonroot <<EOF
  containers:
  - name: refused
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    securityContext: {runAsNonRoot: true}
  - name: ok
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    securityContext: {runAsNonRoot: true, runAsUser: 1000}
EOF
	until_pod nonroot '.status.containerStatuses[?(@.name=="refused")].state.waiting.reason' CreateContainerConfigError
	until_pod nonroot '.status.containerStatuses[?(@.name=="ok")].ready' true
	[ "$(kc exec nonroot -c ok -- id -u)" = 1000 ]
}

@test "securityContext: seccompProfile RuntimeDefault filters, Unconfined does not; a pod sysctl is set in the pod only" {
	before=$(cat /proc/sys/net/ipv4/ip_local_port_range)
	pod seccomp <<EOF
  securityContext:
    sysctls: [{name: net.ipv4.ip_local_port_range, value: "20000 21000"}, {name: kernel.shm_rmid_forced, value: "1"}]
  containers:
  - name: default
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    securityContext: {seccompProfile: {type: RuntimeDefault}}
  - name: unconfined
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    securityContext: {seccompProfile: {type: Unconfined}}
EOF
	running seccomp
	kc exec seccomp -c default -- grep -q 'Seccomp:.*2' /proc/self/status
	kc exec seccomp -c unconfined -- grep -q 'Seccomp:.*0' /proc/self/status
	[ "$(kc exec seccomp -c default -- cat /proc/sys/net/ipv4/ip_local_port_range | tr -s '\t ' ' ')" = "20000 21000" ]
	[ "$(kc exec seccomp -c default -- cat /proc/sys/kernel/shm_rmid_forced)" = 1 ]
	[ "$(cat /proc/sys/net/ipv4/ip_local_port_range)" = "$before" ]
}

# the cgroup v1 directory of container $1 for controller $2
cg_dir() {
	local pid path
	pid=$(host_pid "$1")
	path=$(awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$pid/cgroup")
	echo "/sys/fs/cgroup/$2$path"
}

@test "resources: Guaranteed, Burstable and BestEffort pods get their QoS cgroup, memory limit and CPU quota" {
	pod guaranteed <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    resources: {requests: {memory: 64Mi, cpu: 250m}, limits: {memory: 64Mi, cpu: 250m}}
EOF
	pod burstable <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    resources: {requests: {memory: 32Mi, cpu: 100m}, limits: {memory: 96Mi, cpu: 500m}}
EOF
	pod besteffort <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
EOF
	running guaranteed && running burstable && running besteffort
	[ "$(jp guaranteed .status.qosClass)" = Guaranteed ]
	[ "$(jp burstable .status.qosClass)" = Burstable ]
	g=$(cg_dir "$(cid guaranteed)" memory)
	b=$(cg_dir "$(cid burstable)" memory)
	e=$(cg_dir "$(cid besteffort)" memory)
	[[ "$g" == */kubepods/pod* ]]
	[[ "$b" == */kubepods/burstable/pod* ]]
	[[ "$e" == */kubepods/besteffort/pod* ]]
	[ "$(cat "$g/memory.limit_in_bytes")" = $((64 << 20)) ]
	[ "$(cat "$b/memory.limit_in_bytes")" = $((96 << 20)) ]
	c=$(cg_dir "$(cid burstable)" cpu)
	[ "$(cat "$c/cpu.cfs_quota_us")" = 50000 ]
	[ "$(cat "$c/cpu.shares")" = 102 ]
	# the memory limit holds inside: a 100 MiB buffer in a 64 MiB container is killed
	run kc exec guaranteed -- sh -c 'dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null && echo survived'
	[[ "$output" != *survived* ]]
	run kc exec guaranteed -- sh -c 'dd if=/dev/zero of=/dev/null bs=10M count=1 2>/dev/null && echo survived'
	[[ "$output" == *survived* ]]
}

@test "probes: an exec readiness probe makes the pod Ready; a failing exec liveness probe restarts the container" {
	pod probes <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sh", "-c", "sleep 3; touch /tmp/ready; exec sleep 1000"]
    readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 1}
  - name: dies
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    livenessProbe: {exec: {command: ["false"]}, periodSeconds: 1, failureThreshold: 1, initialDelaySeconds: 1}
EOF
	running probes
	until_pod probes '.status.containerStatuses[?(@.name=="app")].ready' true 60
	for _ in $(seq 120); do
		[ "$(jp probes '.status.containerStatuses[?(@.name=="dies")].restartCount')" -ge 1 ] && break
		sleep 0.5
	done
	[ "$(jp probes '.status.containerStatuses[?(@.name=="dies")].restartCount')" -ge 1 ]
}

@test "restarts: a crashing container is restarted with back-off (CrashLoopBackOff), and kubectl logs --previous has its last run" {
	pod crashes <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sh", "-c", "echo run at \$(date +%s%N); exit 1"]
EOF
	for _ in $(seq 120); do
		[ "$(jp crashes '.status.containerStatuses[0].restartCount')" -ge 2 ] 2>/dev/null && break
		sleep 0.5
	done
	[ "$(jp crashes '.status.containerStatuses[0].restartCount')" -ge 2 ]
	until_pod crashes '.status.containerStatuses[0].state.waiting.reason' CrashLoopBackOff 60
	[[ "$(kc logs crashes --previous)" == "run at "* ]]
	[ "$(jp crashes '.status.containerStatuses[0].lastState.terminated.exitCode')" = 1 ]
}

@test "termination: deleting a pod sends SIGTERM first (the program's trap runs), and nothing of it is left on the host" {
	mark=$BATS_TEST_TMPDIR/marks
	mkdir -p "$mark"
	chmod 777 "$mark"
	pod graceful <<EOF
  terminationGracePeriodSeconds: 20
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sh", "-c", "trap 'echo got-TERM > /marks/\$(hostname); exit 0' TERM; while true; do sleep 0.2; done"]
    volumeMounts: [{name: marks, mountPath: /marks}]
  volumes:
  - {name: marks, hostPath: {path: "$mark", type: Directory}}
EOF
	running graceful
	uid=$(jp graceful .metadata.uid)
	ids=$(ctr_k8s containers ls -q "labels.\"io.kubernetes.pod.uid\"==$uid")
	start=$SECONDS
	kc delete pod graceful --wait=true --timeout=60s >/dev/null
	[ "$(cat "$mark/graceful")" = got-TERM ]
	# it ended on its TERM, well before the grace period's SIGKILL
	[ $((SECONDS - start)) -lt 20 ]
	for _ in $(seq 30); do nothing_left_of "$uid" "$ids" 2>/dev/null && break; sleep 1; done
	nothing_left_of "$uid" "$ids"
}

@test "python: python3 -c in a pod with a 64Mi memory limit that allocates more is OOMKilled, as kubectl reports it" {
	pod oom <<EOF
  restartPolicy: Never
  containers:
  - name: py
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["/usr/bin/python3", "-c", "import sys; print('started', flush=True); b = bytearray(512 << 20); b[::4096] = b'x' * len(b[::4096]); print('not killed')"]
    resources: {limits: {memory: 64Mi}}
    volumeMounts: [{name: usr, mountPath: /usr, readOnly: true}]
  volumes:
  - {name: usr, hostPath: {path: /usr, type: Directory}}
EOF
	until_pod oom .status.phase Failed 120
	[ "$(jp oom '.status.containerStatuses[0].state.terminated.reason')" = OOMKilled ]
	[ "$(jp oom '.status.containerStatuses[0].state.terminated.exitCode')" = 137 ]
	[ "$(kc logs oom)" = started ]
}

@test "daemons: restarting containerd and then the kubelet loses no running pod (same containers, no restart, exec works)" {
	cluster_exclusive
	pod survivor <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "100000"]
EOF
	running survivor
	before=$(cid survivor)
	pid=$(host_pid "$before")
	daemon_restart containerd
	until_ok 60 containerd ctr --address "$KT/containerd.sock" version
	daemon_restart kubelet
	# the node's Ready condition is the old kubelet's until the new one reports: wait
	# for the new one to serve (exec goes through it)
	until_ok 120 "the kubelet" port_listening "$K8S_KUBELET_PORT"
	until_ok 120 "the node" node_ready
	running survivor
	until_ok 60 "exec after the restarts" kc exec survivor -- true
	[ "$(cid survivor)" = "$before" ]
	[ "$(jp survivor '.status.containerStatuses[0].restartCount')" = 0 ]
	kill -0 "$pid"
	[ "$(kc exec survivor -- echo alive)" = alive ]
}

@test "namespace: deleting a namespace removes its pods, and leaves no container, cgroup, mount or state dir on the host" {
	local ns=sbx-gone-$K8S_HANDLER uids= ids=
	kubectl create namespace "$ns" >/dev/null
	for p in one two; do
		NS=$ns pod "$p" <<EOF
  containers:
  - name: app
    image: sbx.local/busybox:1
    imagePullPolicy: Never
    command: ["sleep", "1000"]
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes:
  - {name: scratch, emptyDir: {}}
EOF
	done
	for p in one two; do
		NS=$ns running "$p"
		uid=$(NS=$ns jp "$p" .metadata.uid)
		uids+=" $uid"
		ids+=" $(ctr_k8s containers ls -q "labels.\"io.kubernetes.pod.uid\"==$uid")"
	done
	kubectl delete namespace "$ns" --wait=true --timeout=120s >/dev/null
	for uid in $uids; do
		for _ in $(seq 30); do nothing_left_of "$uid" "$ids" 2>/dev/null && break; sleep 1; done
		nothing_left_of "$uid" "$ids"
	done
}
