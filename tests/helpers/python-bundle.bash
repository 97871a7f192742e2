# A "python sandbox bundle" built from the host's Debian interpreter, for suites that
# run real CPython workloads (load it after helpers: `load helpers/python-bundle`).
#
# The rootfs is an empty directory: the host's /usr is bound read-only, /bin /sbin /lib
# /lib64 are recreated as the host has them (symlinks into usr/ on Debian 12, read-only
# binds otherwise), /etc/alternatives is bound read-only (Debian's BLAS/LAPACK that numpy
# loads resolve through it), /tmp is a tmpfs and /work a writable bind of $PY_WORKDIR
# (a host directory the test can inspect). Namespaces user (container 0-65535 = host
# 100000+), pid, net, ipc, uts, mount, cgroup; no capabilities; noNewPrivileges; the
# seccomp profile config/seccomp/$profile.json.
#
# Needs: /usr/bin/python3 with python3-numpy and python3-pandas (contrib/dev-setup.sh).

PY_PROFILES=$BATS_TEST_DIRNAME/../config/seccomp
PYTHON=/usr/bin/python3 # Debian's interpreter, which finds Debian's numpy and pandas

# setup_python_bundle [profile]: a fresh bundle at $BUNDLE (the previous one, if any, is
# replaced), workdir $PY_WORKDIR mounted at /work. profile: a name in config/seccomp
# (default python) or "none" for no linux.seccomp.
setup_python_bundle() {
	local profile=${1:-python}
	local d
	BUNDLE=$BATS_TEST_TMPDIR/pybundle
	PY_WORKDIR=$BATS_TEST_TMPDIR/work
	rm -rf "$BUNDLE"
	mkdir -p "$BUNDLE/rootfs" "$PY_WORKDIR"
	(cd "$BUNDLE" && "$SBX_OCI" spec)
	local root=$BUNDLE/rootfs
	mkdir -p "$root"/{usr,etc/alternatives,proc,sys,dev,tmp,work}
	update_config '.mounts += [{"destination":"/usr","type":"bind","source":"/usr","options":["rbind","ro","nosuid","nodev"]}]'
	for d in bin sbin lib lib64; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$root/$d"
		elif [ -d "/$d" ]; then
			mkdir "$root/$d"
			update_config --arg d "/$d" \
				'.mounts += [{"destination":$d,"type":"bind","source":$d,"options":["rbind","ro","nosuid","nodev"]}]'
		fi
	done
	# a user database for whoever asks (getpass, `id`): just root
	echo "root:x:0:0:root:/work:/bin/sh" >"$root/etc/passwd"
	echo "root:x:0:" >"$root/etc/group"
	update_config --arg w "$PY_WORKDIR" '
		.mounts += [
			{"destination":"/etc/alternatives","type":"bind","source":"/etc/alternatives","options":["rbind","ro","nosuid","nodev"]},
			{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev","mode=1777","size=65536k"]},
			{"destination":"/work","type":"bind","source":$w,"options":["rbind","rw","nosuid","nodev"]}]
		| .process.cwd = "/work"
		| .process.env = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/work", "TMPDIR=/tmp", "LANG=C.UTF-8",
			"PYTHONDONTWRITEBYTECODE=1"]
		| .process.capabilities = {"bounding":[],"effective":[],"permitted":[],"inheritable":[],"ambient":[]}
		| .process.noNewPrivileges = true
		| .root.readonly = true'
	use_userns
	# the mapped root (host uid 100000) owns the workdir
	chown 100000:100000 "$PY_WORKDIR"
	if [ "$profile" != none ]; then
		update_config --slurpfile s "$PY_PROFILES/$profile.json" '.linux.seccomp = $s[0]'
	fi
}

# py_run [python args...] <<'EOF' ... EOF: write the program on stdin to /work/main.py
# and run `python3 /work/main.py ARGS` in the bundle (a file, not -c, so that the spawn
# and forkserver start methods can import the main module). Sets $status, $stdout,
# $stderr and $lines (of stdout), and shows them in the test log when python failed or
# wrote to stderr. A run longer than PY_TIMEOUT seconds (default 120) is killed, so a
# hang fails the test instead of the suite.
py_run() {
	cat >"$PY_WORKDIR/main.py"
	local json
	json=$(printf '%s\n' "$PYTHON" /work/main.py "$@" | jq -R . | jq -s .)
	update_config --argjson a "$json" '.process.args = $a'
	local out=$BATS_TEST_TMPDIR/py.out err=$BATS_TEST_TMPDIR/py.err
	set +e
	timeout -k 10 "${PY_TIMEOUT:-120}" "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID" \
		</dev/null >"$out" 2>"$err"
	status=$?
	set -e
	stdout=$(cat "$out") stderr=$(cat "$err")
	mapfile -t lines <"$out" # `run` deleted the container: $ID can be used again
	if [ "$status" -ne 0 ] || [ -n "$stderr" ]; then
		echo "python in the bundle: status $status" >&2
		echo "--- stdout" >&2
		echo "$stdout" >&2
		echo "--- stderr" >&2
		echo "$stderr" >&2
	fi
}
