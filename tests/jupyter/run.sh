#!/bin/bash
# The jupyter stage of `make check` (issue 43): the sbx-oci kernelspec and its kernel
# provisioner (contrib/python: sbx_oci_kernel), installed with pip into a venv as a user
# installs them, driven by Jupyter's own clients from Debian's archive:
#   - nbclient executes notebooks with the sbx-oci kernel and with Debian's python3
#     kernel, and the outputs are compared cell by cell (compare.py): ours
#     (tests/jupyter/notebooks: pandas, matplotlib, exceptions, input(), an interrupted
#     cell) and Debian's own (python-notebook-doc's examples); a difference not in
#     expected-differences.txt fails;
#   - nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=sbx-oci;
#   - kernels.py: jupyter_client's KernelManager: isolation (keys, other kernels' files,
#     the server's environment, host files, network), interrupt, input(), completion,
#     inspection, a cell past the memory limit, restart, nothing left after shutdown;
#     with kernels started one-shot, and warm through `sbx-oci serve`;
#   - own-suites.sh: ipykernel's and jupyter_client's own tests with the sbx-oci kernel
#     beside Debian's python3 kernel (expected-own-failures.txt: the sandbox's design);
#   - notebook_server.py: Debian's Notebook server, driven by headless Chromium.
#   SBX_OCI=path   the runtime under test (default: the checkout's ./sbx-oci)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export SBX_OCI=${SBX_OCI:-$repo/sbx-oci}
SBX_OCI=$(realpath "$SBX_OCI")
[ "$(id -u)" = 0 ] || { echo "jupyter: needs root (the sandboxes' cgroups)" >&2; exit 1; }

scratch=$(mktemp -d /tmp/sbx-jupyter.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
"$here/kernel-venv.sh" "$scratch/venv" "$SBX_OCI"
PY=$scratch/venv/bin/python
export PATH=$scratch/venv/bin:$PATH JUPYTER_PLATFORM_DIRS=1

# Debian's example notebooks (python-notebook-doc), unpacked, not installed
(cd "$scratch" && apt-get download -q python-notebook-doc >/dev/null 2>&1 && dpkg -x python-notebook-doc_*.deb doc)
examples=$scratch/doc/usr/share/doc/python-notebook-doc/html/examples/Notebook
find "$examples" -name '*.ipynb.gz' -exec gunzip -f {} +
debian=()
for nb in "Running Code" "Importing Notebooks" "Working With Markdown Cells" "Typesetting Equations" \
	"Notebook Basics" "What is the Jupyter Notebook" "Custom Keyboard Shortcuts" "JavaScript Notebook Extensions" \
	"Connecting with the Qt Console" "Distributing Jupyter Extensions as Python Packages"; do
	debian+=("$examples/$nb.ipynb")
done

rc=0
start=$SECONDS
"$PY" "$here/compare.py" --expected "$here/expected-differences.txt" python3 sbx-oci \
	"$here/notebooks/data.ipynb" "$here/notebooks/plot.ipynb" "$here/notebooks/errors.ipynb" \
	"$here/notebooks/interrupt.ipynb:4" "${debian[@]}" 2>"$scratch/compare.log" || { rc=1; tail -n 30 "$scratch/compare.log" >&2; }
echo "jupyter: nbclient's comparison in $((SECONDS - start)) s"

cp "$here/notebooks/data.ipynb" "$scratch/"
# (the venv's python: Debian's /usr/bin/jupyter runs the system's, which has neither the
# provisioner nor the kernelspec that pip put in the venv)
if "$PY" -m nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=sbx-oci \
	--output executed.ipynb "$scratch/data.ipynb" >"$scratch/nbconvert.log" 2>&1 &&
	"$PY" -c 'import json, sys; nb = json.load(open(sys.argv[1])); outs = [o for c in nb["cells"] for o in c.get("outputs", [])]; sys.exit(not any("text/html" in o.get("data", {}) for o in outs))' \
		"$scratch/executed.ipynb"; then
	echo "jupyter: nbconvert --execute with the sbx-oci kernel: a pandas table in the executed notebook"
else
	echo "jupyter: nbconvert --execute failed: $(tail -n 5 "$scratch/nbconvert.log")" >&2
	rc=1
fi

"$PY" "$here/kernels.py" sbx-oci 2>"$scratch/kernels.log" || { rc=1; tail -n 30 "$scratch/kernels.log" >&2; }

# Warm: the same checks with kernels started by `sbx-oci serve` (a kernelspec installed
# with --serve), from standbys whose warm interpreter has imported ipykernel's app
serve_sock=$scratch/serve.sock
"$SBX_OCI" serve --socket "$serve_sock" --preload ipykernel.kernelapp,ipykernel.ipkernel --memory 1G \
	>"$scratch/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 300); do [ -S "$serve_sock" ] && break; sleep 0.1; done
"$PY" -m sbx_oci_kernel install --prefix "$scratch/venv" --name sbx-oci-warm --display-name "Python 3 (sbx-oci, warm)" \
	--sbx-oci "$SBX_OCI" --serve "$serve_sock" >/dev/null
"$PY" "$here/kernels.py" sbx-oci-warm 2>"$scratch/kernels-warm.log" || { rc=1; tail -n 30 "$scratch/kernels-warm.log" >&2; }
kill -TERM "$serve_pid"
wait "$serve_pid" || { echo "jupyter: serve exited $?: $(tail -n 5 "$scratch/serve.log")" >&2; rc=1; }

"$here/own-suites.sh" "$scratch" "$PY" || rc=1

# Debian's Notebook server and headless Chromium: a notebook's cells run with Shift+Enter
# on the sbx-oci kernel, and on Debian's python3 kernel (the control: it sees the host
# file); the screenshots are kept in tests/.tmp/jupyter
need=()
for p in jupyter-notebook python3-selenium chromium chromium-driver; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "jupyter: apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
shots=$repo/tests/.tmp/jupyter
mkdir -p "$shots"
for kernel in "sbx-oci False" "python3 True"; do
	set -- $kernel
	# (a TMPDIR of its own: Chromium leaves its org.chromium.Chromium.* there)
	mkdir -p "$scratch/tmp-server-$1"
	TMPDIR="$scratch/tmp-server-$1" "$PY" "$here/notebook_server.py" "$1" "$2" "$scratch/server-$1" "$shots/notebook-server-$1.png" ||
		{ rc=1; tail -n 20 "$scratch/server-$1/notebook-server.log" >&2; }
done

# nothing of a kernel is left: its directory, its sandbox's processes and state
left=$(find /tmp "${XDG_RUNTIME_DIR:-/tmp}" -maxdepth 1 -name 'sbx-kernel-*' 2>/dev/null | wc -l)
procs=$(pgrep -fc ipykernel_launcher || true)
[ "$left" = 0 ] && [ "$procs" = 0 ] || { echo "jupyter: left behind: $left kernel dirs, $procs kernel processes" >&2; rc=1; }
[ "$rc" = 0 ] && echo "jupyter: nbclient, nbconvert, jupyter_client's KernelManager and the Notebook server in Chromium passed with the sbx-oci kernel"
exit $rc
