#!/bin/bash
# Issue 43's row: a Jupyter kernel's start, sandboxed (one-shot, and warm through
# `sbx-oci serve`) beside bare ipykernel (tests/bench/jupyter.py in a venv with
# contrib/python and the sbx-oci kernelspecs, as tests/jupyter/run.sh installs them):
# results/jupyter.tsv.
source "$(dirname "$0")/lib.sh"
venv=$W/jupyter-venv
"$BENCH_SRC/../jupyter/kernel-venv.sh" "$venv" "$SBX_OCI"
sock=$W/jupyter-serve.sock
"$SBX_OCI" serve --socket "$sock" --preload ipykernel.kernelapp,ipykernel.ipkernel --memory 1G \
	>"$RESULTS/jupyter-serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
"$venv/bin/python" -m sbx_oci_kernel install --prefix "$venv" --name sbx-oci-warm --sbx-oci "$SBX_OCI" --serve "$sock" >/dev/null
echo "=== jupyter ==="
"$venv/bin/python" "$BENCH_SRC/jupyter.py" "$RESULTS/jupyter.tsv" "${JUPYTER_N:-15}" 2>"$RESULTS/jupyter-kernels.log" || true
kill -TERM "$serve_pid"
wait "$serve_pid" || true
