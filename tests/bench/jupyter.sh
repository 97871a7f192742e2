#!/bin/bash
# Issue 43's row: a Jupyter kernel's start, sandboxed beside bare ipykernel
# (tests/bench/jupyter.py in a venv with contrib/python and the sbx-oci kernelspec, as
# tests/jupyter/run.sh installs them): results/jupyter.tsv.
source "$(dirname "$0")/lib.sh"
for p in python3-ipykernel python3-jupyter-client python3-venv python3-setuptools python3-wheel; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null
done
venv=$W/jupyter-venv
rm -rf "$venv"
"$PY" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-index --no-build-isolation "$BENCH_SRC/../../contrib/python"
"$venv/bin/python" -m sbx_oci_kernel install --prefix "$venv" --sbx-oci "$SBX_OCI" >/dev/null
echo "=== jupyter ==="
"$venv/bin/python" "$BENCH_SRC/jupyter.py" "$RESULTS/jupyter.tsv" "${JUPYTER_N:-15}" 2>"$RESULTS/jupyter-kernels.log"
