"""python3 -m sbx_oci_kernel install [--user | --prefix DIR] [--name NAME] [OPTIONS]

Writes the kernelspec "Python 3 (sbx-oci)" (kernel.json naming the sbx-oci-provisioner)
where Jupyter finds kernels: the system's data dir as root, ~/.local/share/jupyter with
--user, DIR/share/jupyter with --prefix (a venv's sys.prefix, say). OPTIONS are the
provisioner's config: --sbx-oci PATH, --serve SOCKET (kernels start warm from that
`sbx-oci serve`), --memory SIZE (default 1G; with --serve, the server's), --network
none|loopback|full, and --option ARG (repeated) for more `sbx-oci python` options.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

from jupyter_client.kernelspec import KernelSpecManager


def kernel_json(args) -> dict:
    config = {"sbx_oci": args.sbx_oci or shutil.which("sbx-oci") or "sbx-oci", "network": args.network}
    if args.serve:
        config["serve"] = os.path.abspath(args.serve)
    if args.memory or not args.serve:
        config["memory"] = args.memory or "1G"
    if args.option:
        config["options"] = args.option
    return {
        "argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": args.display_name,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"kernel_provisioner": {"provisioner_name": "sbx-oci-provisioner", "config": config}},
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m sbx_oci_kernel", description="install the sbx-oci kernelspec")
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("install", help="write the kernelspec")
    where = i.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user only")
    where.add_argument("--prefix", help="under PREFIX/share/jupyter (a venv: sys.prefix)")
    i.add_argument("--name", default="sbx-oci", help="the kernel's name (default sbx-oci)")
    i.add_argument("--display-name", default="Python 3 (sbx-oci)")
    i.add_argument("--sbx-oci", help="the runtime (default: sbx-oci on PATH)")
    i.add_argument("--serve", metavar="SOCKET", help="start kernels warm from this `sbx-oci serve`")
    i.add_argument("--memory", help="the sandbox's memory (default 1G; with --serve, the server's)")
    i.add_argument("--network", default="loopback", choices=["none", "loopback", "full"])
    i.add_argument("--option", action="append", help="another `sbx-oci python` option (repeat)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "kernel.json"), "w") as f:
            json.dump(kernel_json(args), f, indent=1)
        dest = KernelSpecManager().install_kernel_spec(d, args.name, user=args.user, prefix=args.prefix)
    print(f"installed kernelspec {args.name} in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
