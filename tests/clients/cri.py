#!/usr/bin/python3
"""A minimal CRI client (what the kubelet says to containerd), for containerd.bats.

crictl is not packaged for Debian 12, and the CRI api.proto needs a newer protoc than
Debian's, so the few messages used here are encoded by hand: protobuf's wire format is
small (varints, and length-delimited fields for strings and sub-messages). Field numbers
are those of the runtime.v1 CRI API.

usage: cri.py SOCKET COMMAND ARGS...
  version                          runtime name and version
  run-pod NAME HANDLER CGPARENT [--pod-network] [--sysctl KEY=VALUE]...
                                   RunPodSandbox: host network, or with --pod-network the
                                   pod's own network namespace set up by CNI; prints the id
  create POD NAME IMAGE [--memory BYTES] CMD...
                                   CreateContainer in POD (with a memory limit); prints the id
  start|stop|rm ID                 StartContainer / StopContainer / RemoveContainer
  status ID                        ContainerStatus: "<state> <exit code>"
  exec ID CMD...                   ExecSync: prints stdout, exits with the command's status
  update-memory ID BYTES           UpdateContainerResources (memory limit)
  pod-ip ID                        PodSandboxStatus: the pod's IP address
  stop-pod|rm-pod ID               StopPodSandbox / RemovePodSandbox
The pod's name and cgroup parent given to run-pod are remembered in a file beside the
socket, since CreateContainer repeats the sandbox config.
"""
import json
import os
import sys

import grpc

SERVICE = "/runtime.v1.RuntimeService/"
STATES = {0: "created", 1: "running", 2: "exited", 3: "unknown"}


# --- encoding -------------------------------------------------------------------
def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_int(num, n):
    return varint(num << 3) + varint(n) if n else b""


def f_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def f_msg(num, *parts):
    return f_bytes(num, b"".join(parts))


# --- decoding (enough for the responses used) -------------------------------------
def read_varint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def decode(buf):
    """Field number -> list of values (ints, or bytes for length-delimited)."""
    fields, i = {}, 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            val, i = read_varint(buf, i)
        elif wire == 2:
            ln, i = read_varint(buf, i)
            val, i = buf[i:i + ln], i + ln
        elif wire == 1:
            val, i = buf[i:i + 8], i + 8
        elif wire == 5:
            val, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("unexpected wire type %d" % wire)
        fields.setdefault(num, []).append(val)
    return fields


def first(fields, num, default=None):
    return fields.get(num, [default])[0]


def signed32(n):
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


# --- messages -----------------------------------------------------------------------
def pod_config(name, cgparent, logdir, pod_network=False, sysctls=()):
    metadata = f_msg(1, f_bytes(1, name), f_bytes(2, name + "-uid"), f_bytes(3, "sbx-clients"))
    # NamespaceOption: network = NODE (2) shares the host's network (no CNI plugin is
    # needed); POD (0, the default, so no field) gives the pod a namespace CNI sets up.
    # No hostname: without a UTS namespace it cannot be set.
    ns_options = f_msg(1) if pod_network else f_msg(1, f_int(1, 2))
    security = f_msg(2, ns_options)
    # LinuxPodSandboxConfig.sysctls (3) is a map: repeated {key = 1, value = 2}
    entries = b"".join(f_msg(3, f_bytes(1, k), f_bytes(2, v)) for k, v in sysctls)
    linux = f_msg(8, f_bytes(1, cgparent), security, entries)
    return metadata + f_bytes(3, logdir) + linux


def call(channel, method, request):
    return decode(channel.unary_unary(SERVICE + method)(request, timeout=60))


def main():
    sock, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    channel = grpc.insecure_channel("unix://" + sock)
    memo = sock + ".pods.json"
    pods = json.load(open(memo)) if os.path.exists(memo) else {}

    if cmd == "version":
        r = call(channel, "Version", f_bytes(1, "v1"))
        print(first(r, 2, b"").decode(), first(r, 3, b"").decode(), first(r, 4, b"").decode())
    elif cmd == "run-pod":
        name, handler, cgparent, opts = args[0], args[1], args[2], args[3:]
        pod_network = "--pod-network" in opts
        sysctls = [tuple(opts[i + 1].split("=", 1)) for i, o in enumerate(opts) if o == "--sysctl"]
        logdir = os.path.join(os.path.dirname(sock), "pod-logs", name)
        os.makedirs(logdir, exist_ok=True)
        config = pod_config(name, cgparent, logdir, pod_network, sysctls)
        r = call(channel, "RunPodSandbox", f_msg(1, config) + f_bytes(2, handler))
        pod = first(r, 1).decode()
        pods[pod] = [name, cgparent, logdir, pod_network, sysctls]
        json.dump(pods, open(memo, "w"))
        print(pod)
    elif cmd == "pod-ip":
        status = decode(first(call(channel, "PodSandboxStatus", f_bytes(1, args[0])), 1, b""))
        network = decode(first(status, 5, b""))  # PodSandboxStatus.network: {ip = 1}
        print(first(network, 1, b"").decode())
    elif cmd == "create":
        pod, name, image, command = args[0], args[1], args[2], args[3:]
        linux = b""
        if command[:1] == ["--memory"]:
            # ContainerConfig.linux (15) {resources (1) {memory_limit_in_bytes (4)}}
            linux = f_msg(15, f_msg(1, f_int(4, int(command[1]))))
            command = command[2:]
        pname, cgparent, logdir, pod_network, sysctls = pods[pod]
        config = (f_msg(1, f_bytes(1, name)) + f_msg(2, f_bytes(1, image))
                  + b"".join(f_bytes(3, c) for c in command) + f_bytes(11, name + ".log") + linux)
        req = f_bytes(1, pod) + f_msg(2, config) + f_msg(3, pod_config(pname, cgparent, logdir, pod_network, sysctls))
        print(first(call(channel, "CreateContainer", req), 1).decode())
    elif cmd in ("start", "rm"):
        call(channel, {"start": "StartContainer", "rm": "RemoveContainer"}[cmd], f_bytes(1, args[0]))
    elif cmd == "stop":
        call(channel, "StopContainer", f_bytes(1, args[0]) + f_int(2, 5))
    elif cmd == "status":
        status = decode(first(call(channel, "ContainerStatus", f_bytes(1, args[0])), 1, b""))
        print(STATES.get(first(status, 3, 0), "?"), signed32(first(status, 7, 0)))
    elif cmd == "exec":
        r = call(channel, "ExecSync", f_bytes(1, args[0]) + b"".join(f_bytes(2, c) for c in args[1:]) + f_int(3, 30))
        sys.stdout.write(first(r, 1, b"").decode())
        sys.stderr.write(first(r, 2, b"").decode())
        sys.exit(signed32(first(r, 3, 0)))
    elif cmd == "update-memory":
        resources = f_int(4, int(args[1]))
        call(channel, "UpdateContainerResources", f_bytes(1, args[0]) + f_msg(2, resources))
    elif cmd == "stop-pod":
        call(channel, "StopPodSandbox", f_bytes(1, args[0]))
    elif cmd == "rm-pod":
        call(channel, "RemovePodSandbox", f_bytes(1, args[0]))
        pods.pop(args[0], None)
        json.dump(pods, open(memo, "w"))
    elif cmd == "pods":
        print("\n".join(pods))
    else:
        sys.exit("cri.py: unknown command " + cmd)


if __name__ == "__main__":
    try:
        main()
    except grpc.RpcError as e:
        sys.exit("cri.py %s: %s: %s" % (sys.argv[2], e.code().name, e.details()))
