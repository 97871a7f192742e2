#!/bin/bash
# Builds the helpers, rootfs trees and bundles under $BENCH_WORK, from `sbx-oci spec`
# so that every runtime is handed the same config. Rebuilt on every run: it takes well
# under a second and a stale bundle would silently measure the wrong thing.
source "$(dirname "$0")/lib.sh"

rm -rf "$BUNDLES"
mkdir -p "$BIN" "$BUNDLES" "$STATE" "$RESULTS"
mountpoint -q "$STATE" || mount -t tmpfs -o mode=0700,size=64m sbx-bench-state "$STATE"
for c in floorrun crun-hybrid abrun; do
	gcc -O2 -Wall -o "$BIN/$c" "$BENCH_SRC/$c.c" -lm
done
# The same floor built with musl, statically: it pays no libc start-up, as sbx-oci
# (a musl binary) does not, while the floor of the issue is a dynamic glibc program
# that pays ~0.5 ms of trapped cpuid at start on our VMs (DEVELOPERS.md). deltas.sh
# reports the runtime over both.
if command -v musl-gcc >/dev/null; then
	musl-gcc -O2 -Wall -static -o "$BIN/floorrun-musl" "$BENCH_SRC/floorrun.c"
fi
# idexec and noop are freestanding (idexec.c says why); noop for the "idexec alone" rows
for c in idexec noop; do
	gcc -O2 -Wall -static -nostdlib -ffreestanding -fno-stack-protector -o "$BIN/$c" "$BENCH_SRC/$c.c"
done

# busybox rootfs: Debian's static busybox, so /bin/true needs no libraries
bb=$W/rootfs/busybox
rm -rf "$bb"
mkdir -p "$bb"/{bin,proc,sys,dev,tmp,etc}
cp /bin/busybox "$bb/bin/busybox"
ln -s busybox "$bb/bin/true"

# python rootfs: empty, the host's /usr is bound in (the shape of
# tests/helpers/python-bundle.bash); the workdir belongs to the mapped root
py=$W/rootfs/python
rm -rf "$py"
mkdir -p "$py"/{usr,etc/alternatives,proc,sys,dev,tmp,work} "$W/work"
for d in bin sbin lib lib64; do
	if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$py/$d"; fi
done
echo "root:x:0:0:root:/work:/bin/sh" >"$py/etc/passwd"
echo "root:x:0:" >"$py/etc/group"
chown "$HOSTID:$HOSTID" "$W/work"

base=$(cd "$W" && rm -f config.json && "$SBX_OCI" spec && cat config.json && rm config.json)

# mk NAME ROOTFS JQ-FILTER: bundles/NAME/config.json; each bundle has its own cgroup.
# ociVersion 1.0.2: crun 1.8 refuses newer ones, and nothing here needs a later field.
mk() {
	mkdir -p "$BUNDLES/$1"
	jq --arg root "$2" --arg cg "$CG_PREFIX/$1" --slurpfile sc "$BENCH_SRC/../../config/seccomp/python.json" \
		'.ociVersion = "1.0.2" | .root.path = $root | .linux.cgroupsPath = $cg | .process.terminal = false | '"$3" \
		<<<"$base" >"$BUNDLES/$1/config.json"
}

TRUE='.process.args = ["/bin/true"]'
LIMITS='.linux.resources.memory = {"limit": 268435456} | .linux.resources.pids = {"limit": 128}'
SECCOMP='.linux.seccomp = $sc[0]'
USERNS='.linux.namespaces += [{"type":"user"}]
	| .linux.uidMappings = [{"containerID":0,"hostID":'$HOSTID',"size":65536}]
	| .linux.gidMappings = [{"containerID":0,"hostID":'$HOSTID',"size":65536}]'
PYTHON='.mounts += [
		{"destination":"/usr","type":"bind","source":"/usr","options":["rbind","ro","nosuid","nodev"]},
		{"destination":"/etc/alternatives","type":"bind","source":"/etc/alternatives","options":["rbind","ro","nosuid","nodev"]},
		{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev","mode=1777","size=65536k"]},
		{"destination":"/work","type":"bind","source":"'$W/work'","options":["rbind","rw","nosuid","nodev"]}]
	| .process.cwd = "/work"
	| .process.env = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/work", "TMPDIR=/tmp", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"]
	| .process.capabilities = {"bounding":[],"effective":[],"permitted":[],"inheritable":[],"ambient":[]}
	| .process.noNewPrivileges = true
	| .process.args = ["'$PY'", "-c", "pass"]'

mk bb-base "$bb" "$TRUE"
mk bb-limits "$bb" "$TRUE | $LIMITS"
mk bb-seccomp "$bb" "$TRUE | $SECCOMP"
mk bb-seccomp-limits "$bb" "$TRUE | $SECCOMP | $LIMITS"
mk bb-userns "$bb" "$TRUE | $USERNS"
# the python sandbox of issue 7: user namespace, no caps, no_new_privs, python profile, limits
mk py "$py" "$PYTHON | $USERNS | $SECCOMP | $LIMITS"

# A runtime that cannot run a bundle here would make its rows meaningless: stop now.
fail=0
for b in "$BUNDLES"/*/; do
	b=$(basename "$b")
	for r in "${RUNTIMES[@]}"; do
		# idexec (rt) replaces stdin with an empty pipe: crun 1.8.1 would chown a
		# /dev/null stdin to the bundle's mapped root (idexec.c)
		# shellcheck disable=SC2046 # rt prints an argv
		if ! out=$("${CLEAN_ENV[@]}" $(rt "$r") run --bundle "$BUNDLES/$b" "{id}" < <(:) 2>&1) || [ -n "$out" ]; then
			echo "FAIL: $r cannot run bundle $b: $out" >&2
			fail=1
		fi
	done
done
for f in "$(floor bb)" "$(floor bb -U)" "$(floor py)" "$(floor py -U)"; do
	# shellcheck disable=SC2086
	"${CLEAN_ENV[@]}" $f </dev/null || { echo "FAIL: floor: $f" >&2; fail=1; }
done
[ "$fail" = 0 ] || { echo "bundles.sh: a runtime cannot run the bundles on this host (above)" >&2; exit 1; }
echo "bundles: $(cd "$BUNDLES" && echo *) (each runs under ${RUNTIMES[*]})"
