#!/usr/bin/env bats
# contrib/python/sbx_sandbox.py, the stdlib-only Python client of `sbx-oci python`
# (blocking and asyncio), and its installable package, driven against the real binary
# ($SBX_OCI) with this test's state root ($SBX_ROOT), so the teardown's leak checks
# (state dirs, mounts, cgroups) cover its runs too. Every sandbox id the client asks for
# contains "-$$-" (see client), which is what our_cgroups looks for. The client runs
# under Debian's interpreter ($PY), not whatever PATH finds first (a pyenv shim...).

load helpers

CONTRIB=$BATS_TEST_DIRNAME/../contrib/python

setup() {
	requires root
	PY=/usr/bin/python3
	[ -x "$PY" ] || skip "needs $PY to run the client"
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
	# a server a failed test left running
	if [ -n "${SERVE_PID:-}" ]; then serve_stop || true; fi
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
SBX_OCI, SBX_ROOT = "$SBX_OCI", "$SBX_ROOT"
_ids = itertools.count()
def new_id():
    return "py-t${BATS_SUITE_TEST_NUMBER:-0}-$$-%d" % next(_ids)
def _defaults(kw):
    kw.setdefault("sbx_oci", SBX_OCI)
    kw.setdefault("root", SBX_ROOT)
    kw.setdefault("sandbox_id", new_id())
    return kw
def sandbox(code, **kw):
    return run_python(code, **_defaults(kw))
def sandbox_async(code, **kw):  # a coroutine: run_python_async
    return run_python_async(code, **_defaults(kw))
def leftovers():
    """What is left of past runs: state dirs, workdirs (the teardown checks cgroups)."""
    state = sorted(e for e in os.listdir(SBX_ROOT) if not e.startswith("@")) if os.path.isdir(SBX_ROOT) else []
    return state + sorted(os.listdir(os.environ["TMPDIR"]))
EOF
	)
	run env PYTHONPATH="$CONTRIB" TMPDIR="$CLIENT_TMP" "$PY" -c "$prelude
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
	run env PYTHONPATH= TMPDIR="$CLIENT_TMP" "$PY" "$CONTRIB/sbx_sandbox.py" --sbx-oci "$SBX_OCI" --root "$SBX_ROOT" \
		-c 'print(6*7); open("o.txt", "w").write("out")'
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$(jq -r .stdout <<<"$output")" = 42 ]
	[ "$(jq -r '.files_content["o.txt"]' <<<"$output")" = out ]
	run env TMPDIR="$CLIENT_TMP" "$PY" "$CONTRIB/sbx_sandbox.py" --sbx-oci "$SBX_OCI" --root "$SBX_ROOT" \
		-c 'raise SystemExit(3)'
	[ "$status" -eq 3 ]
}

@test "contrib-python: the agent example runs and exits 0" {
	run env SBX_OCI="$SBX_OCI" SBX_ROOT="$SBX_ROOT" TMPDIR="$CLIENT_TMP" "$PY" "$CONTRIB/agent_example.py"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[[ "$output" == *"agent: done"* ]]
	[[ "$output" == *"KeyError: 'amont'"* ]]
}

@test "contrib-python: pip installs it offline as a typed package that imports and runs from anywhere" {
	if ! "$PY" -c 'import importlib.util as u; assert all(u.find_spec(m) for m in ("pip", "setuptools", "wheel"))' 2>/dev/null; then
		[ "${SBX_MUST_WORK:-0}" != 1 ] || { echo "needs pip, setuptools and wheel (python3-pip)" >&2; return 1; }
		skip "needs pip, setuptools and wheel (python3-pip)"
	fi
	local src=$BATS_TEST_TMPDIR/src site=$BATS_TEST_TMPDIR/site elsewhere=$BATS_TEST_TMPDIR/elsewhere version
	version=$("$SBX_OCI" --version | awk 'NR == 1 { print $3 }')
	# a copy of the directory, as setuptools builds in the tree it is given (build/,
	# *.egg-info): the checkout stays as it is, and nothing stale is reused
	cp -a "$CONTRIB" "$src"
	rm -rf "$src/build" "$src"/*.egg-info "$src"/__pycache__
	run "$PY" -m pip install --no-index --no-build-isolation --target "$site" "$src"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ -f "$site/sbx_sandbox/py.typed" ]                # PEP 561
	[ -f "$site/sbx_sandbox/__init__.py" ] && [ ! -L "$site/sbx_sandbox/__init__.py" ]
	[ -d "$site/sbx_sandbox-$version.dist-info" ]     # the version is sbx-oci's
	[ ! -e "$site/agent_example.py" ]
	mkdir "$elsewhere"
	# the installed copy alone: another cwd, no source dir on the path, no user site
	cd "$elsewhere"
	run env -i PATH=/usr/bin:/bin PYTHONPATH="$site" TMPDIR="$CLIENT_TMP" SITE="$site" VERSION="$version" \
		CONTRIB="$CONTRIB" "$PY" -s -c '
import inspect, os, sys, typing
import sbx_sandbox
site, contrib = os.path.realpath(os.environ["SITE"]), os.path.realpath(os.environ["CONTRIB"])
assert os.path.realpath(sbx_sandbox.__file__).startswith(site + "/"), sbx_sandbox.__file__
assert not any(os.path.realpath(p or ".").startswith(contrib) for p in sys.path), sys.path
assert sbx_sandbox.__version__ == os.environ["VERSION"], sbx_sandbox.__version__
# the public API is annotated all through, and the annotations resolve
for f in (sbx_sandbox.run_python, sbx_sandbox.run_python_async, sbx_sandbox.SandboxError.__init__):
    hints = typing.get_type_hints(f)
    missing = set(inspect.signature(f).parameters) - set(hints) - {"self"}
    assert not missing and "return" in hints, (f, missing)
assert typing.get_type_hints(sbx_sandbox.Result)["files"] == typing.Dict[str, bytes]
assert inspect.iscoroutinefunction(sbx_sandbox.run_python_async)
r = sbx_sandbox.run_python("print(6*7); raise SystemExit(3)", sbx_oci=sys.argv[1], root=sys.argv[2],
                           sandbox_id=sys.argv[3])
assert (r.stdout, r.exit_code, r.ok) == ("42\n", 3, False), r
print("ok")
' "$SBX_OCI" "$SBX_ROOT" "py-t${BATS_SUITE_TEST_NUMBER:-0}-$$-installed"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
	# and its command line, as python3 -m sbx_sandbox
	run env -i PATH=/usr/bin:/bin PYTHONPATH="$site" TMPDIR="$CLIENT_TMP" "$PY" -s -m sbx_sandbox \
		--sbx-oci "$SBX_OCI" --root "$SBX_ROOT" -c 'print(6*7); raise SystemExit(3)'
	[ "$status" -eq 3 ] || { echo "$output" >&2; false; }
	[ "$(jq -r .stdout <<<"$output")" = 42 ]
}

@test "contrib-python: run_python_async returns what run_python does, and runs concurrently" {
	client <<'EOF'
import asyncio, dataclasses, time
code = r'''
import os, sys
print("out", sys.argv, os.getcwd(), os.environ.get("A"))
print("err", file=sys.stderr)
os.makedirs("out")
open("out/made.txt", "w").write(open("in.txt").read() * 2)
open("in.txt", "a").write("+")
os.symlink("/etc/passwd", "pw")
raise SystemExit(4)
'''
kw = dict(files={"in.txt": "x", "sub/data.bin": bytes(range(256))}, env={"A": "1"}, network="none")
s = sandbox(code, **kw)
a = asyncio.run(sandbox_async(code, **kw))
assert type(a) is Result and a.exit_code == 4 and not a.ok, a
assert a.stdout == "out ['-c'] /work 1\n" and a.stderr == "err\n", a
assert a.files == {"out/made.txt": b"xx", "in.txt": b"x+"} and set(a.files_skipped) == {"pw"}, a
volatile = {"wall_ms", "cpu_user_ms", "cpu_sys_ms", "peak_memory_bytes", "raw"}
def same(r):
    d = {k: v for k, v in dataclasses.asdict(r).items() if k not in volatile}
    raw = {k: v for k, v in r.raw.items() if k not in volatile | {"id", "workdir", "files"}}
    return d, raw, sorted((f["path"], f["change"], f["type"]) for f in r.raw["files"])
assert same(a) == same(s), (same(a), same(s))
# the same exceptions: a sandbox that cannot be set up, an argument refused before anything
for bad in (dict(python="/nonexistent"), dict(sbx_oci="/nonexistent/sbx-oci")):
    errors = []
    for call in (lambda: sandbox("print(1)", **bad), lambda: asyncio.run(sandbox_async("print(1)", **bad))):
        try:
            call()
        except SandboxError as e:
            errors.append((str(e), e.returncode))
    assert len(errors) == 2 and errors[0] == errors[1], errors
try:
    asyncio.run(sandbox_async("print(1)", files={"../x": "1"}))
except ValueError as e:
    assert "files" in str(e)
else:
    raise AssertionError("../x was accepted")
# the loop goes on while sandboxes run: two 2 s runs at once overlap (each says when it
# slept; the sandboxes share the host's clock), rather than one after the other
async def two():
    return await asyncio.gather(*(sandbox_async(
        f"import time; a = time.time(); time.sleep(2); print({i}, a, time.time())") for i in range(2)))
rs = asyncio.run(two())
spans = [r.stdout.split() for r in rs]
assert [s[0] for s in spans] == ["0", "1"], rs
assert max(float(s[1]) for s in spans) < min(float(s[2]) for s in spans), spans
assert leftovers() == [], leftovers()
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: cancelling run_python_async ends the sandbox at once and leaves nothing" {
	# the runtime through a wrapper that records its pid (exec keeps it)
	local wrap=$BATS_TEST_TMPDIR/pid-sbx-oci
	printf '#!/bin/sh\necho $$ >>%s/runtime-pids\nexec "%s" "$@"\n' "$BATS_TEST_TMPDIR" "$SBX_OCI" >"$wrap"
	chmod +x "$wrap"
	WRAP=$wrap PIDS=$BATS_TEST_TMPDIR/runtime-pids client <<'EOF'
import asyncio, json, subprocess, time

def container_pid(sid):
    s = subprocess.run([SBX_OCI, "--root", SBX_ROOT, "state", sid], capture_output=True, text=True)
    if s.returncode == 0 and json.loads(s.stdout)["status"] == "running":
        return json.loads(s.stdout)["pid"]
    return None

def gone(pids, within=5.0):
    end = time.monotonic() + within
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    return [p for p in pids if os.path.exists(f"/proc/{p}")] == []

def handles_term(pid):
    """Whether a process of the container (PID: its init) catches or ignores SIGTERM:
    the program has set its handler, so a SIGTERM now reaches it."""
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            status = open(f"/proc/{p}/status").read()
            todo += [int(c) for c in open(f"/proc/{p}/task/{p}/children").read().split()]
        except OSError:
            continue
        fields = dict(l.split(":", 1) for l in status.splitlines() if ":" in l)
        if fields["Name"].strip().startswith("python") and \
                (int(fields["SigCgt"], 16) | int(fields["SigIgn"], 16)) & (1 << 14):
            return True
    return False

async def cancel_running(code, wait_for_handler=False):
    """Start code, cancel it ~1 s later once its sandbox runs (and, with
    wait_for_handler, once the program handles SIGTERM: on a slow machine "running"
    may come before the program's first line): (seconds the cancel took, pids)."""
    sid = new_id()
    task = asyncio.ensure_future(sandbox_async(code, sandbox_id=sid, sbx_oci=os.environ["WRAP"],
                                               files={"in.txt": "x"}))
    t0 = time.monotonic()
    pid = None
    while pid is None and time.monotonic() - t0 < 20 and not task.done():
        await asyncio.sleep(0.05)
        pid = container_pid(sid)
    assert pid is not None, ("never running", task)
    while wait_for_handler and not handles_term(pid) and time.monotonic() - t0 < 20 and not task.done():
        await asyncio.sleep(0.05)
    assert not wait_for_handler or handles_term(pid), ("never handled SIGTERM", task)
    await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
    assert not task.done()
    t1 = time.monotonic()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the task was not cancelled")
    return time.monotonic() - t1, [pid] + [int(p) for p in open(os.environ["PIDS"]).read().split()]

# SIGTERM: sbx-oci ends the program and tears the sandbox down, long before the grace period
sbx_sandbox.STOP_GRACE_SECONDS = 20
took, pids = asyncio.run(cancel_running("import time; time.sleep(30)"))
assert took < 3, took
assert gone(pids), pids
assert leftovers() == [], leftovers()
# it is SIGTERM the program gets, and it may take a moment to end
took, pids = asyncio.run(cancel_running(
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: (time.sleep(1.5), sys.exit(0)))\n"
    "time.sleep(30)", wait_for_handler=True))
assert 1.5 <= took < 5, took
assert gone(pids), pids
assert leftovers() == [], leftovers()
# a program that ignores SIGTERM: SIGKILL after the grace period, and delete --force
sbx_sandbox.STOP_GRACE_SECONDS = 1
took, pids = asyncio.run(cancel_running(
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)", wait_for_handler=True))
assert 1 <= took < 8, took
assert gone(pids), pids
assert leftovers() == [], leftovers()
# cancelled early (asyncio.wait_for), while the workdir is written or sbx-oci sets up
sbx_sandbox.STOP_GRACE_SECONDS = 20
async def early(delay):
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(sandbox_async("import time; time.sleep(30)", files={"f": "1"}), delay)
    except asyncio.TimeoutError:
        return time.monotonic() - t0
    raise AssertionError("not cancelled")
for delay in (0.0005, 0.001, 0.002, 0.003, 0.005, 0.008, 0.012, 0.02, 0.03, 0.05, 0.1, 0.2):
    took = asyncio.run(early(delay))
    assert took < 5, (delay, took)
    assert leftovers() == [], (delay, leftovers())
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
	# the teardown checks that no cgroup, mount or container of the runs is left
}

@test "contrib-python: run_python_async kills a runtime that outlives the guard and deletes its container" {
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
import asyncio, time
sbx_sandbox.GUARD_SECONDS = 1
t0 = time.monotonic()
try:
    asyncio.run(sandbox_async("import time; time.sleep(60)", timeout=0.5, sbx_oci=os.environ["WRAP"]))
except SandboxError as e:
    assert "did not finish" in str(e) and "deleted" in str(e), str(e)
else:
    raise AssertionError("no SandboxError")
assert time.monotonic() - t0 < 15
assert leftovers() == [], leftovers()
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
}

@test "contrib-python: a cancel during the runtime's setup sends SIGTERM only once the runtime blocks it" {
	# sbx-oci handles SIGTERM (passes it on to the program) from when it blocks it, just
	# before it starts the program; before that, the signal kills it mid-setup and may
	# leave a cgroup that nothing names. A fake runtime with a long setup tells which
	# one it got: it must be the blocked one.
	local fake=$BATS_TEST_TMPDIR/slow-setup-sbx-oci
	cat >"$fake" <<EOF
#!$PY
import json, os, signal, sys, time
log = open("$BATS_TEST_TMPDIR/fake.log", "a")
if "delete" in sys.argv:
    log.write("delete\n")
    sys.exit(0)
def during_setup(*_):
    log.write("SIGTERM during setup\n")
    sys.exit(1)
signal.signal(signal.SIGTERM, during_setup)
time.sleep(1.5)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
log.write("blocked\n"); log.flush()
while signal.SIGTERM not in signal.sigpending():  # blocked all along, as under signalfd
    time.sleep(0.01)
signal.sigwait({signal.SIGTERM})
log.write("SIGTERM passed on\n")
print(json.dumps({"error": None, "exit_code": 143, "signal": "SIGTERM", "files": []}))
sys.exit(143)
EOF
	chmod +x "$fake"
	FAKE=$fake client <<'EOF'
import asyncio, time
async def main():
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(sandbox_async("print(1)", sbx_oci=os.environ["FAKE"]), 0.5)
    except asyncio.TimeoutError:
        return time.monotonic() - t0
took = asyncio.run(main())
assert took is not None and 1.4 < took < 5, took
assert leftovers() == [], leftovers()
print("ok")
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
	[ "$(cat "$BATS_TEST_TMPDIR/fake.log")" = "$(printf 'blocked\nSIGTERM passed on')" ]
}

@test "contrib-python: connect= runs through sbx-oci serve: the same Result, files both ways, refusals, cancel" {
	load helpers/sandbox
	# no standbys: their containers would count as what the runs left (the client's
	# runs take none: each names its --id)
	serve_start --preload decimal --standby 0
	SOCK=$SERVE_SOCKET client <<'EOF2'
import asyncio, time
sock = os.environ["SOCK"]
def via(code, **kw):
    return run_python(code, connect=sock, sandbox_id=new_id(), **kw)
r = via("import sys, decimal; print('decimal' in sys.modules, 6*7); open('out.bin', 'wb').write(open('in.txt', 'rb').read() * 2)",
        files={"in.txt": "ab"})
assert r.ok and r.stdout == "True 42\n", r
assert r.files == {"out.bin": b"abab"}, r.files
assert r.raw["limits"]["memory_bytes"] == 2048 << 20 and r.raw["network"] == "loopback", r.raw
r = via("import sys; sys.exit(3)")
assert r.exit_code == 3 and not r.ok, r
r = via("while True: pass", timeout=1)
assert r.timed_out and r.exit_code == 137 and r.signal == "SIGKILL", r
# what the server cannot give: refused before anything ran
try:
    via("pass", python="/nonexistent/python3")
except SandboxError as e:
    assert "--python" in e.message and e.returncode == 125, e
else:
    raise AssertionError("a different interpreter was accepted")
try:
    run_python("pass", connect=sock, root="/tmp")
except ValueError:
    pass
else:
    raise AssertionError("root= with connect= was accepted")
try:
    run_python("pass", connect=sock + ".missing")
except SandboxError as e:
    assert "cannot reach" in e.message, e
# cancelling ends the run at once; nothing of it stays
async def cancelled():
    t = asyncio.ensure_future(run_python_async("import time; time.sleep(30)", connect=sock, sandbox_id=new_id()))
    await asyncio.sleep(1.0)
    t0 = time.monotonic()
    t.cancel()
    try:
        await t
    except asyncio.CancelledError:
        return time.monotonic() - t0
    raise AssertionError("not cancelled")
assert asyncio.run(cancelled()) < 3
r = asyncio.run(run_python_async("print(1)", connect=sock, sandbox_id=new_id()))
assert r.stdout == "1\n", r
end = time.monotonic() + 5
while leftovers() and time.monotonic() < end:
    time.sleep(0.1)
assert leftovers() == [], leftovers()
print("ok")
EOF2
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "$output" = ok ]
	serve_stop
}
