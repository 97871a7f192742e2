"""A pure-Python stand-in for util-linux's `libmount` binding (pylibmount).

crun's test_mounts.py imports `libmount` and, when it is missing, prints `1..0` and
runs nothing. Debian does not package the binding, so this module implements the part
of its API the suite uses: `Table(path)` parsing a mountinfo file, `Table.find_target`,
and the `Fs` attributes `vfs_options` / `fs_options` (plus the other mountinfo fields,
for diagnostics). The semantics follow libmount's mountinfo parser: fields are kept
verbatim after undoing the kernel's octal escapes, and find_target scans backwards
(the last mount on a path is the visible one) comparing paths without canonicalising
them (pylibmount tables have no cache by default).
"""

import re

__all__ = ["Table", "Fs", "MNT_ITER_FORWARD", "MNT_ITER_BACKWARD"]

MNT_ITER_FORWARD = 0
MNT_ITER_BACKWARD = 1

_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unmangle(s):
    # The kernel escapes space, tab, newline and backslash as \ooo in mountinfo.
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), s)


class Fs:
    """One mountinfo entry (the attribute names are pylibmount's)."""

    def __init__(self, line):
        left, sep, right = line.partition(" - ")
        if not sep:
            raise ValueError("mountinfo line without ' - ' separator: %r" % line)
        fields = left.split(" ")
        if len(fields) < 6:
            raise ValueError("short mountinfo line: %r" % line)
        self.id = int(fields[0])
        self.parent_id = int(fields[1])
        major, _, minor = fields[2].partition(":")
        self.devno = (int(major) << 8) | int(minor)  # like makedev() for small numbers
        self.root = _unmangle(fields[3])
        self.target = _unmangle(fields[4])
        self.vfs_options = _unmangle(fields[5])
        self.optional_fields = " ".join(fields[6:]) or None
        rest = right.split(" ")
        self.fstype = _unmangle(rest[0]) if rest else None
        self.source = _unmangle(rest[1]) if len(rest) > 1 else None
        self.fs_options = _unmangle(rest[2]) if len(rest) > 2 else None
        self.srcpath = self.source if self.source and self.source.startswith("/") else None

    @property
    def options(self):
        # libmount merges both lists into one string (VFS first), without repeats.
        seen = []
        for part in (self.vfs_options or "").split(",") + (self.fs_options or "").split(","):
            if part and part not in seen:
                seen.append(part)
        return ",".join(seen)

    @property
    def propagation(self):
        opt = self.optional_fields or ""
        if "shared:" in opt:
            return "shared"
        if "master:" in opt:
            return "slave"
        if "unbindable" in opt:
            return "unbindable"
        return "private"

    def __repr__(self):
        return "<libmount.Fs %s on %s type %s (%s)>" % (
            self.source, self.target, self.fstype, self.options)


class Table:
    """A mount table read from a file in /proc/self/mountinfo format."""

    def __init__(self, path=None, errcb=None):
        self._fs = []
        self._pos = 0
        self._errcb = errcb
        if path is not None:
            self.parse_file(path)

    def parse_file(self, path):
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for lineno, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                try:
                    self._fs.append(Fs(line))
                except ValueError:
                    # libmount calls the error callback and skips the line by default.
                    if self._errcb is not None:
                        self._errcb(self, path, lineno)
        return 0

    def parse_mtab(self, path="/proc/self/mountinfo"):
        return self.parse_file(path)

    def _ordered(self, direction):
        return reversed(self._fs) if direction == MNT_ITER_BACKWARD else iter(self._fs)

    def find_target(self, path, direction=MNT_ITER_BACKWARD):
        for fs in self._ordered(direction):
            if fs.target == path:
                return fs
        return None

    def find_source(self, source, direction=MNT_ITER_BACKWARD):
        for fs in self._ordered(direction):
            if fs.source == source:
                return fs
        return None

    def next_fs(self):
        if self._pos >= len(self._fs):
            return None
        fs = self._fs[self._pos]
        self._pos += 1
        return fs

    def reset_iter(self):
        self._pos = 0

    def is_empty(self):
        return not self._fs

    @property
    def nents(self):
        return len(self._fs)

    def __iter__(self):
        return iter(self._fs)

    def __len__(self):
        return len(self._fs)
