#!/bin/bash
# kernel-venv.sh DIR SBX_OCI: a venv in DIR that sees Debian's Jupyter (its packages
# installed when missing), contrib/python pip-installed into it as a user installs it,
# and the sbx-oci kernelspec written into its prefix. For the jupyter stage (run.sh)
# and `make bench`'s jupyter row (tests/bench/jupyter.sh).
set -euo pipefail
dir=$1
sbx_oci=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
need=()
for p in python3-ipykernel python3-jupyter-client python3-nbclient python3-nbconvert python3-nbformat \
	python3-zmq python3-matplotlib python3-pandas python3-venv python3-setuptools python3-wheel; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "jupyter: apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
rm -rf "$dir"
/usr/bin/python3 -m venv --system-site-packages "$dir"
"$dir/bin/pip" install -q --no-index --no-build-isolation "$repo/contrib/python"
"$dir/bin/python" -m sbx_oci_kernel install --prefix "$dir" --sbx-oci "$sbx_oci" >/dev/null
