#!/usr/bin/env bats
# contrib/python/sbx_sandbox.py, the stdlib-only Python client of `sbx-oci python`,
# driven against the real binary ($SBX_OCI) with this test's state root ($SBX_ROOT),
# so the teardown's leak checks (state dirs, mounts, cgroups) cover its runs too.
# Every sandbox id the client asks for contains "-$$-" (see client), which is what
# our_cgroups looks for.

load helpers

CONTRIB=$BATS_TEST_DIRNAME/../contrib/python

setup() {
	requires root
	command -v python3 >/dev/null || skip "needs python3 to run the client"
	setup_state
	CLIENT_TMP=$BATS_TEST_TMPDIR/client-tmp
	mkdir -p "$CLIENT_TMP"
}

teardown_client() {
	# the client removes its workdirs (sbx-work-*), even when the run failed
	local left
	left=$(find "$CLIENT_TMP" -mindepth 1 -maxdepth 1 2>/dev/null)
	if [ -n "$left" ]; then
		echo "client left behind: $left" >&2
		return 1
	fi
}

teardown() {
	teardown_client
	# helpers.bash's teardown (state dirs, mounts, cgroups), except that a container
	# still listed is a failure too: the client must delete what it started, where
	# helpers.bash force-deletes containers that tests leave on purpose
	local leftover listed
	if [ -d "$SBX_ROOT" ]; then
		listed=$("$SBX_OCI" --root "$SBX_ROOT" list -q 2>/dev/null || true)
		for c in $listed; do
			"$SBX_OCI" --root "$SBX_ROOT" delete --force "$c" >/dev/null 2>&1 || true
		done
		[ -z "$listed" ] || { echo "containers left behind: $listed" >&2; return 1; }
		leftover=$(ls -A "$SBX_ROOT" | grep -v '^@' || true)
		[ -z "$leftover" ] || { echo "state dirs left behind: $leftover" >&2; return 1; }
	fi
	[ "$(host_mount_count)" = "$SBX_MOUNTS_BEFORE" ] || { echo "host mount count changed" >&2; return 1; }
	[ "$(our_cgroups)" = "$SBX_CGROUPS_BEFORE" ] || { echo "cgroups left behind: $(our_cgroups)" >&2; return 1; }
}

# Run the Python on stdin with sbx_sandbox imported and `sandbox(code, **kw)`: run_python
# with this test's binary, state root and an id of this test. $status, $output (stdout
# and stderr together, as bats' run).
client() {
	local prelude
	prelude=$(
		cat <<EOF
import itertools, os, sys
from sbx_sandbox import *
import sbx_sandbox
_ids = itertools.count()
def sandbox(code, **kw):
    kw.setdefault("sbx_oci", "$SBX_OCI")
    kw.setdefault("root", "$SBX_ROOT")
    kw.setdefault("sandbox_id", "py-t${BATS_SUITE_TEST_NUMBER:-0}-$$-%d" % next(_ids))
    return run_python(code, **kw)
EOF
	)
	run env PYTHONPATH="$CONTRIB" TMPDIR="$CLIENT_TMP" python3 -c "$prelude
$(cat)"
}

@test "contrib-python: run_python('print(6*7)') is ok with stdout 42" {
	client <<'EOF'
r = sandbox("print(6*7)")
assert r.ok, r
assert r.stdout == "42\n", repr(r.stdout)
assert (r.exit_code, r.signal, r.error, r.timed_out, r.oom_killed) == (0, None, None, False, False), r
assert r.stderr == "" and r.files == {} and r.wall_ms > 0 and r.peak_memory_bytes > 0
assert r.raw["network"] == "loopback" and r.raw["limits"]["memory_bytes"] == 2048 << 20, r.raw
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: input files go in, created and modified files come back with their bytes" {
	client <<'EOF'
blob = bytes(range(256)) * 4
code = r'''
import os
text = open("data/in.txt").read()
blob = open("blob.bin", "rb").read()
os.makedirs("out")
open("out/upper.txt", "w").write(text.upper())
open("out/copy.bin", "wb").write(blob[::-1])
open("data/in.txt", "a").write(" again")  # inputs belong to the sandbox user: writable
print(len(blob), sorted(os.listdir(".")))
'''
r = sandbox(code, files={"data/in.txt": "hello", "blob.bin": blob, "untouched": b"same"})
assert r.ok, r
assert r.stdout == "1024 ['blob.bin', 'data', 'out', 'untouched']\n", repr(r.stdout)
assert r.files == {"out/upper.txt": b"HELLO", "out/copy.bin": blob[::-1], "data/in.txt": b"hello again"}, r.files
changes = {f["path"]: f["change"] for f in r.raw["files"]}
assert changes == {"out": "created", "out/upper.txt": "created", "out/copy.bin": "created",
                   "data/in.txt": "modified"}, changes
# the workdir is gone afterwards, unless asked to keep it
r = sandbox("open('kept', 'w').write('x')", keep_workdir=True)
assert r.workdir and open(os.path.join(r.workdir, "kept")).read() == "x"
import shutil; shutil.rmtree(r.workdir)
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: timeout kills the program and says timed_out" {
	client <<'EOF'
import time
t0 = time.monotonic()
r = sandbox("import time; print('started', flush=True); time.sleep(60)", timeout=1)
assert time.monotonic() - t0 < 15
assert r.timed_out and not r.ok, r
assert (r.exit_code, r.signal) == (137, "SIGKILL"), r
assert r.stdout == "started\n", repr(r.stdout)
assert "timed out" in r.messages, r.messages
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: a memory bomb under memory='64M' is oom_killed" {
	client <<'EOF'
r = sandbox("x = []\nwhile True: x.append(bytearray(1 << 20))", memory="64M")
assert r.oom_killed and r.limits_hit == ["memory"] and not r.ok, r
assert r.signal == "SIGKILL" and r.exit_code == 137, r
assert r.raw["limits"]["memory_bytes"] == 64 << 20
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: network='none' makes sockets fail; loopback works under the default" {
	client <<'EOF'
code = r'''
import socket
try:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0)); srv.listen(1)
    c = socket.create_connection(srv.getsockname(), timeout=5)
    conn, _ = srv.accept(); c.sendall(b"x"); print("round trip", conn.recv(1).decode())
except OSError as e:
    print("refused", type(e).__name__)
'''
r = sandbox(code, network="none")
assert r.ok and r.stdout.startswith("refused "), r
assert r.raw["network"] == "none"
r = sandbox(code)
assert r.ok and r.stdout == "round trip x\n", r
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: a runtime that outlives the guard is killed and its container deleted" {
	# a wrapper that turns the wall clock off, so the client's own guard must act
	local wrap=$BATS_TEST_TMPDIR/hanging-sbx-oci
	cat >"$wrap" <<EOF
#!/bin/bash
args=()
while [ \$# -gt 0 ]; do
	if [ "\$1" = --timeout ]; then args+=(--timeout 0); shift 2; else args+=("\$1"); shift; fi
done
exec "$SBX_OCI" "\${args[@]}"
EOF
	chmod +x "$wrap"
	WRAP=$wrap client <<'EOF'
import time
sbx_sandbox.GUARD_SECONDS = 1
t0 = time.monotonic()
try:
    sandbox("import time; time.sleep(60)", timeout=0.5, sbx_oci=os.environ["WRAP"])
except SandboxError as e:
    assert "did not finish" in str(e) and "deleted" in str(e), str(e)
else:
    raise AssertionError("no SandboxError")
assert time.monotonic() - t0 < 15
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
	# the teardown checks that no state dir, cgroup or mount of it is left
}

@test "contrib-python: a setup failure (python='/nonexistent') raises SandboxError" {
	client <<'EOF'
try:
    sandbox("print(1)", python="/nonexistent")
except SandboxError as e:
    assert "/nonexistent" in str(e) and e.returncode == 125, (str(e), e.returncode)
    assert e.raw is not None and e.raw["exit_code"] is None
else:
    raise AssertionError("no SandboxError")
# no JSON at all (a bad command line, exit 2): the runtime's one-line complaint
try:
    sandbox("print(1)", memory="lots")
except SandboxError as e:
    assert e.returncode == 2 and e.raw is None and str(e).startswith("sbx-oci: ") and "--memory" in str(e), str(e)
else:
    raise AssertionError("no SandboxError")
try:
    sandbox("print(1)", sbx_oci="/nonexistent/sbx-oci")
except SandboxError as e:
    assert "No such file" in str(e), str(e)
else:
    raise AssertionError("no SandboxError")
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: a path-traversal key in files is refused before anything runs" {
	# a fake runtime that records being run: it must never be
	local fake=$BATS_TEST_TMPDIR/fake-sbx-oci
	printf '#!/bin/sh\ntouch %s/invoked\nexit 0\n' "$BATS_TEST_TMPDIR" >"$fake"
	chmod +x "$fake"
	FAKE=$fake client <<'EOF'
for key in ("../x", "a/../../x", "..", "/etc/evil", "ok/../x", ""):
    try:
        sandbox("print(1)", files={"fine.txt": "1", key: "pwned"}, sbx_oci=os.environ["FAKE"])
    except ValueError as e:
        assert "files" in str(e), str(e)
    else:
        raise AssertionError(f"{key!r} was accepted")
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
	[ ! -e "$BATS_TEST_TMPDIR/invoked" ]
	[ ! -e "$CLIENT_TMP/x" ] && [ ! -e "$BATS_TEST_TMPDIR/x" ]
	[ ! -e "$SBX_ROOT" ] # sbx-oci never ran, so it never made its state root
}

@test "contrib-python: symlinks the code plants are not followed when reading back" {
	client <<'EOF'
code = r'''
import os
os.symlink("/etc/passwd", "passwd")
os.symlink("/etc", "etc")
os.mkdir("d"); os.symlink("../../../../../../etc/passwd", "d/deep")
os.mkfifo("fifo")  # would block a reader that did not open it O_NONBLOCK
open("real.txt", "w").write("mine")
'''
r = sandbox(code)
assert r.ok, r
assert r.files == {"real.txt": b"mine"}, r.files
assert set(r.files_skipped) == {"passwd", "etc", "d/deep", "fifo"}, r.files_skipped
assert "symlink" in r.files_skipped["passwd"], r.files_skipped
# defence in depth: a path whose parent is a symlink (the runtime's listing never has
# one, as it does not follow links either) is refused by the reader itself
import tempfile
d = tempfile.mkdtemp()
os.symlink("/etc", os.path.join(d, "etc"))
os.symlink("/etc/passwd", os.path.join(d, "pw"))
got, skipped = sbx_sandbox._read_back(d, [{"path": "etc/passwd", "change": "created", "type": "file"},
                                          {"path": "pw", "change": "created", "type": "file"}])
assert got == {} and set(skipped) == {"etc/passwd", "pw"}, (got, skipped)
sbx_sandbox._remove_tree(d)
assert os.path.exists("/etc/passwd")
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: the CLI prints the result JSON and exits with the program's status" {
	run env PYTHONPATH= TMPDIR="$CLIENT_TMP" python3 "$CONTRIB/sbx_sandbox.py" --sbx-oci "$SBX_OCI" --root "$SBX_ROOT" \
		-c 'print(6*7); open("o.txt", "w").write("out")'
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$(jq -r .stdout <<<"$output")" = 42 ]
	[ "$(jq -r '.files_content["o.txt"]' <<<"$output")" = out ]
	run env TMPDIR="$CLIENT_TMP" python3 "$CONTRIB/sbx_sandbox.py" --sbx-oci "$SBX_OCI" --root "$SBX_ROOT" \
		-c 'raise SystemExit(3)'
	[ "$status" -eq 3 ]
}

@test "contrib-python: the agent example runs and exits 0" {
	run env SBX_OCI="$SBX_OCI" SBX_ROOT="$SBX_ROOT" TMPDIR="$CLIENT_TMP" python3 "$CONTRIB/agent_example.py"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[[ "$output" == *"agent: done"* ]]
	[[ "$output" == *"KeyError: 'amont'"* ]]
}
