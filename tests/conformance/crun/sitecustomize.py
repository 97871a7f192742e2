"""Loaded by every Python started with this directory on PYTHONPATH (run.sh does so).

crun's suite has no per-test timeout: a runtime that never connects a seccomp
listenerPath, never exits or never closes a pipe blocks its file forever, and the
outer `timeout` of run.sh would then lose every later case of the file. Here each wait
without a timeout gets one, so only the hanging case fails:
- sockets get a default timeout (socket.setdefaulttimeout), SBX_CONFORMANCE_SOCKET_TIMEOUT
  seconds (default 15: the suite's own socket waits set 5-10 s, and the one that sets
  none, the seccomp listenerPath accept, would otherwise cost a whole minute to a
  runtime that never connects);
- subprocess.run/call/check_call/check_output, Popen.communicate and Popen.wait get
  SBX_CONFORMANCE_CALL_TIMEOUT seconds (default 60) when the caller gave none. When
  that default expires in communicate/wait the child is killed too (run() does so by
  itself), since a caller that asked for no timeout would otherwise leave it running.

It also makes the suite clean up after itself: tests_utils.py removes its private
state root (.testsuite-run-PID) with shutil.rmtree before each case and at the end,
which would drop the state of containers a failed case left running and orphan their
processes and cgroups. Before such an rmtree:
- the suite's named cgroups that this run created (not listed in the file
  $SBX_CONFORMANCE_CGROUPS_BEFORE) are thawed: test_delete freezes a container in
  "frozen" and leaves it so, and no runtime can delete a frozen container;
- every container in that root is deleted with `$OCI_RUNTIME --root ROOT delete -f ID`;
- a root still holding a container that could not be deleted is moved into
  $SBX_CONFORMANCE_KEEP instead of being removed, for run.sh to retry after the file.

Only active when SBX_CONFORMANCE_SITE=1 (run.sh sets it), so a stray PYTHONPATH cannot
change an unrelated Python.
"""

import os

if os.environ.get("SBX_CONFORMANCE_SITE") == "1":
    import functools
    import shutil
    import socket
    import subprocess
    import sys

    _CALL_TIMEOUT = float(os.environ.get("SBX_CONFORMANCE_CALL_TIMEOUT", "60"))
    _SOCKET_TIMEOUT = float(os.environ.get("SBX_CONFORMANCE_SOCKET_TIMEOUT", "15"))

    socket.setdefaulttimeout(_SOCKET_TIMEOUT)

    def _note(msg):
        # stderr is the file's .log: say why a case ended, in TAP's comment syntax.
        try:
            sys.stderr.write("# sitecustomize: %s\n" % msg)
            sys.stderr.flush()
        except Exception:
            pass

    def _with_default_timeout(fn, pos):
        """Wrap a function whose `timeout` parameter is positional number `pos`
        (counting self) or keyword; fill it in when missing or None."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if len(args) > pos:
                if args[pos] is not None:
                    return fn(*args, **kwargs)
                args = args[:pos] + (_CALL_TIMEOUT,) + args[pos + 1:]
            elif kwargs.get("timeout") is None:
                kwargs["timeout"] = _CALL_TIMEOUT
            else:
                return fn(*args, **kwargs)
            try:
                return fn(*args, **kwargs)
            except subprocess.TimeoutExpired as e:
                _note("no timeout given, killed after %gs: %s" % (_CALL_TIMEOUT, e.cmd))
                raise

        return wrapper

    def _popen_method(fn, pos):
        """Like _with_default_timeout, for Popen methods: also kill the child when the
        default (not a caller's) timeout expires."""

        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            defaulted = False
            if len(args) > pos:
                if args[pos] is None:
                    args = args[:pos] + (_CALL_TIMEOUT,) + args[pos + 1:]
                    defaulted = True
            elif kwargs.get("timeout") is None:
                kwargs["timeout"] = _CALL_TIMEOUT
                defaulted = True
            try:
                return fn(self, *args, **kwargs)
            except subprocess.TimeoutExpired:
                if defaulted:
                    _note("no timeout given, killed after %gs: %s" % (_CALL_TIMEOUT, self.args))
                    try:
                        self.kill()
                    except OSError:
                        pass
                raise

        return wrapper

    # run(*popenargs, input=None, capture_output=False, timeout=None, check=False, **kw)
    # and the others take timeout only as a keyword: pos is past any positional use.
    for _name in ("run", "call", "check_call", "check_output"):
        setattr(subprocess, _name, _with_default_timeout(getattr(subprocess, _name), 1 << 30))
    # communicate(self, input=None, timeout=None), wait(self, timeout=None); pos
    # counts the arguments after self.
    subprocess.Popen.communicate = _popen_method(subprocess.Popen.communicate, 1)
    subprocess.Popen.wait = _popen_method(subprocess.Popen.wait, 0)

    _real_rmtree = shutil.rmtree

    def _cgroup_roots():
        roots = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ")[0] in ("cgroup", "cgroup2"):
                    roots.append(left.split(" ")[4])
        return roots

    def _thaw_new_cgroups():
        # The same names and the same rule as run.sh: only what this run created.
        try:
            with open(os.environ["SBX_CONFORMANCE_CGROUPS_BEFORE"]) as f:
                before = set(f.read().split("\n"))
        except (KeyError, OSError):
            return
        for root in _cgroup_roots():
            try:
                names = os.listdir(root)
            except OSError:
                continue
            for name in names:
                top = os.path.join(root, name)
                if not (name in ("frozen", "cgrouptest", "testdir") or name.startswith("test")):
                    continue
                if top in before or not os.path.isdir(top):
                    continue
                for d, _, files in os.walk(top):
                    for fn, frozen, thawed in (("freezer.state", "FROZEN", "THAWED"),
                                               ("cgroup.freeze", "1", "0")):
                        if fn not in files:
                            continue
                        try:
                            with open(os.path.join(d, fn)) as f:
                                if f.read().strip() != frozen:
                                    continue
                            with open(os.path.join(d, fn), "w") as f:
                                f.write(thawed)
                            _note("thawed %s" % d)
                        except OSError:
                            pass

    def _delete_containers(state_root):
        """Deletes every container in state_root; returns how many remain."""
        runtime = os.environ.get("OCI_RUNTIME")
        if not runtime or not os.path.isdir(state_root):
            return 0
        _thaw_new_cgroups()
        ids = set()
        try:
            out = subprocess.run([runtime, "--root", state_root, "list", "-q"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 timeout=30).stdout.decode(errors="replace")
            ids.update(x.strip() for x in out.splitlines() if x.strip())
        except Exception:
            pass
        # The directory too, in case `list` itself is what misbehaves; names with @ or
        # a dot are the runtimes' own caches and locks, not containers.
        for name in os.listdir(state_root):
            if name[0] not in "@." and os.path.isdir(os.path.join(state_root, name)):
                ids.add(name)
        left = 0
        for cid in sorted(ids):
            try:
                r = subprocess.run([runtime, "--root", state_root, "delete", "-f", cid],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=30)
                if r.returncode == 0:
                    _note("deleted leftover container %s" % cid)
                    continue
                _note("could not delete leftover container %s: %s"
                      % (cid, r.stderr.decode(errors="replace").strip()))
            except Exception as e:
                _note("could not delete leftover container %s: %s" % (cid, e))
            # Gone anyway (a runtime's own failure may have removed it)?
            if os.path.isdir(os.path.join(state_root, cid)):
                left += 1
        return left

    @functools.wraps(_real_rmtree)
    def _rmtree(path, *args, **kwargs):
        try:
            path_s = os.fspath(path).rstrip("/")
            if os.path.basename(path_s).startswith(".testsuite-run-"):
                state_root = os.path.join(path_s, "root")
                keep = os.environ.get("SBX_CONFORMANCE_KEEP")
                if _delete_containers(state_root) and keep and os.path.isdir(keep):
                    # Removing it would orphan what is left: keep it for run.sh.
                    dest = os.path.join(keep, "%s-%d" % (os.path.basename(path_s), len(os.listdir(keep))))
                    shutil.move(state_root, dest)
                    _note("kept state root %s as %s" % (state_root, dest))
        except Exception as e:
            _note("cleanup before rmtree failed: %s" % e)
        return _real_rmtree(path, *args, **kwargs)

    shutil.rmtree = _rmtree
