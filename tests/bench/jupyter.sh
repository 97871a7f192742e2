#!/bin/bash
# Issue 43's row: a Jupyter kernel's start, sandboxed beside bare ipykernel
# (tests/bench/jupyter.py in a venv with contrib/python and the sbx-oci kernelspec, as
# tests/jupyter/run.sh installs them): results/jupyter.tsv.
source "$(dirname "$0")/lib.sh"
venv=$W/jupyter-venv
"$BENCH_SRC/../jupyter/kernel-venv.sh" "$venv" "$SBX_OCI"
echo "=== jupyter ==="
"$venv/bin/python" "$BENCH_SRC/jupyter.py" "$RESULTS/jupyter.tsv" "${JUPYTER_N:-15}" 2>"$RESULTS/jupyter-kernels.log"
