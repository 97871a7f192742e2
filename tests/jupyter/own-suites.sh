#!/bin/bash
# own-suites.sh SCRATCH PY: ipykernel's and jupyter_client's own tests that drive a
# kernel through a KernelManager, run with pytest twice at once: with the sbx-oci
# kernelspec installed as "python3" first on JUPYTER_PATH (so every test that starts
# the native kernel starts a sandboxed one), and with Debian's python3 kernel (the
# control). The tests are those Debian's python3-ipykernel and python3-jupyter-client
# ship (the archive here serves their .dsc but not their source tarballs). A test that
# fails only in the sandbox must be in expected-own-failures.txt with the reason; one
# listed there that passes fails the stage too (the list stays true). Left out: the
# tests of kernels of jupyter_client's own (signaltest, the restarter's failing kernels,
# custom provisioners): no sbx-oci kernel runs in them.
#   PY: the venv's python (it has the provisioner; run.sh made it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scratch=$1
PY=$2
need=()
for p in python3-pytest python3-pytest-asyncio python3-pytest-timeout python3-flaky python3-psutil; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "jupyter: apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
own=$scratch/own
mkdir -p "$own/spec" "$own/sbx-oci" "$own/python3"
sbx_oci=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["metadata"]["kernel_provisioner"]["config"]["sbx_oci"])' \
	"$scratch/venv/share/jupyter/kernels/sbx-oci/kernel.json")
"$PY" -m sbx_oci_kernel install --prefix "$own/spec" --name python3 --sbx-oci "$sbx_oci" >/dev/null
modules=(jupyter_client.tests.test_client jupyter_client.tests.test_kernelmanager
	jupyter_client.tests.test_multikernelmanager jupyter_client.tests.test_kernelapp
	ipykernel.tests.test_kernel ipykernel.tests.test_message_spec)
# run_suites NAME [VAR=VALUE...]: in a cwd of its own (the ipc tests make sockets there),
# an IPYTHONDIR of its own (the control's kernels write their history there: two runs
# at once in the host's ~/.ipython lock each other out of it) with its default profile
# (test_sys_path_profile_dir looks for it), and a TMPDIR of its own (what kernels a
# test dropped without a shutdown leave: their directories, sandboxes' workdirs);
# --rootdir=/ for test ids with paths. In a session of its own: what a failing test
# left running (test_kernelapp_lifecycle's `jupyter kernel`, and through
# --die-with-parent its kernel) is ended by the session's PIDs afterwards.
run_suites() {
	local name=$1 sid
	shift
	mkdir -p "$own/ipython-$name/profile_default" "$own/tmp-$name"
	(cd "$own/$name" && exec setsid env PYTHONDONTWRITEBYTECODE=1 IPYTHONDIR="$own/ipython-$name" \
		TMPDIR="$own/tmp-$name" "$@" timeout 900 "$PY" -m pytest -p no:cacheprovider --rootdir=/ -q \
		--timeout 120 -rA -k "not TestParallel and not ShutDownGracefully" --pyargs "${modules[@]}" \
		>"$own/$name.log" 2>&1) &
	sid=$!
	wait "$sid" || true
	kill_session "$sid"
}

kill_session() { # (and waits up to 20 s: `jupyter kernel` shuts its kernel down first)
	local pids i
	pids=$(ps -o pid= -s "$1" || true)
	[ -n "$pids" ] || return 0
	echo "jupyter: ended what the tests left running: $(echo $pids)"
	kill $pids 2>/dev/null || true
	for i in $(seq 200); do
		[ -n "$(ps -o pid= -s "$1")" ] || return 0
		sleep 0.1
	done
}
start=$SECONDS
run_suites sbx-oci JUPYTER_PATH="$own/spec/share/jupyter" &
run_suites python3 &
wait
echo "jupyter: ipykernel's and jupyter_client's own tests, with both kernels at once, in $((SECONDS - start)) s"
"$PY" "$here/own_compare.py" "$here/expected-own-failures.txt" "$own/sbx-oci.log" "$own/python3.log"
