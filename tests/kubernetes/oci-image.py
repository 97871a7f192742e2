#!/usr/bin/env python3
"""oci-image.py NAME ROOTFS OUT.tar [--entrypoint JSON] [--cmd JSON] [--env K=V]...

Writes an OCI image archive (image-layout 1.0: oci-layout, index.json, blobs/sha256)
of one uncompressed layer holding the directory ROOTFS, named NAME
(io.containerd.image.name and org.opencontainers.image.ref.name), for
`ctr -n k8s.io images import`: the kubernetes stage's images are made here from local
files, with no registry. Owners are kept as they are on disk; the tar is reproducible
(sorted names, mtime 0).
"""
import argparse
import hashlib
import io
import json
import os
import tarfile


def layer_tar(rootfs):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(rootfs):
            dirnames.sort()
            for name in sorted(dirnames) + sorted(filenames):
                path = os.path.join(dirpath, name)
                arc = os.path.relpath(path, rootfs)
                info = tar.gettarinfo(path, arcname=arc)
                info.mtime = 0
                if info.isfile():
                    with open(path, "rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def blob(out, data, media_type):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))
    return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}


def add_file(out, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("rootfs")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", type=json.loads)
    ap.add_argument("--cmd", type=json.loads)
    ap.add_argument("--env", action="append", default=[])
    a = ap.parse_args()
    layer = layer_tar(a.rootfs)
    config = {"Env": a.env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}
    if a.entrypoint is not None:
        config["Entrypoint"] = a.entrypoint
    if a.cmd is not None:
        config["Cmd"] = a.cmd
    image_config = {
        "architecture": "amd64",
        "os": "linux",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
    }
    with tarfile.open(a.out, "w") as out:
        layer_d = blob(out, layer, "application/vnd.oci.image.layer.v1.tar")
        config_d = blob(out, json.dumps(image_config).encode(), "application/vnd.oci.image.config.v1+json")
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": config_d, "layers": [layer_d]}
        manifest_d = blob(out, json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
        manifest_d["annotations"] = {"io.containerd.image.name": a.name, "org.opencontainers.image.ref.name": a.name}
        manifest_d["platform"] = {"architecture": "amd64", "os": "linux"}
        index = {"schemaVersion": 2, "manifests": [manifest_d]}
        add_file(out, "oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        add_file(out, "index.json", json.dumps(index).encode())


if __name__ == "__main__":
    main()
