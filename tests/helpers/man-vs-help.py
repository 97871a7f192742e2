#!/usr/bin/env python3
"""Fail when the man pages and --help disagree on which options exist.

Usage: man-vs-help.py SBX_OCI_BINARY MAN_DIR

The commands are those `sbx-oci --help` lists. `python`, `bundle`, `check` and `serve`
are documented in MAN_DIR/sbx-oci-python.8.md, every other command and the global
options in MAN_DIR/sbx-oci.8.md. Every option named on one side and not the other is printed,
with the command and the side that lacks it; so is a command without a section, a
section for a command that does not exist, and a line that looks like an option entry
but is not one. Exit status: 1 if anything was printed, 0 if not, 2 if a --help could
not be read.

What is read of --help: the option names of each indented line that starts with '-'
("-b, --bundle DIR   bundle directory": -b and --bundle; the description is not
read), and the options the Usage line names (python's "-c CODE | -m MODULE").

The convention the man sources follow, so that they can be read this simply
(go-md2man warns about HTML comments, so it is written here rather than in them):
  - top-level sections are "## TITLE"; the global options are the entries under
    "## GLOBAL OPTIONS" (sbx-oci.8.md only);
  - each command is one "### NAME" heading under "## COMMANDS", in the page that
    documents it, and its section ends at the next heading of level 2 or 3;
  - each option is a definition-list entry: a line that starts with "**-", naming
    every spelling in bold ("**-b**, **--bundle** *DIR*"), and on the next line
    ": what it does". A bold word that is not an option ("**-**", stdin) names none;
  - prose that mentions an option writes it as code (`--keep`), never in bold at the
    start of a line, and an option --help does not list (one accepted only for
    runc's sake) is mentioned only in prose.
Fenced code blocks are skipped.

tests/packaging.bats also imports this file for help_commands() and help_options(),
so that the shell completions are compared with --help by the same reading.
"""

import os
import re
import subprocess
import sys

PYTHON_PAGE = "sbx-oci-python.8.md"
MAIN_PAGE = "sbx-oci.8.md"
PYTHON_COMMANDS = {"python", "bundle", "check", "serve"}
GLOBAL = None  # the key of the global options, as opposed to a command's

# an option spelling: -x or --long-name (not "-" or "--" alone, not the "-ARGS" of
# "PYTHON-ARGS")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")
SPELLING = re.compile(r"^(--?[A-Za-z0-9][A-Za-z0-9-]*)")
BOLD_OPTION = re.compile(r"\*\*(--?[A-Za-z0-9][A-Za-z0-9-]*)\*\*")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


class HelpError(Exception):
    pass


def run_help(binary, command=None):
    argv = [binary] + ([command] if command else []) + ["--help"]
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise HelpError("%s: %s" % (" ".join(argv), e))
    if p.returncode != 0:
        raise HelpError("%s exited with %d: %s" % (" ".join(argv), p.returncode, p.stderr.strip()))
    return p.stdout


def help_commands(binary):
    """The command names under "Commands:" in `sbx-oci --help`, in order."""
    names, inside = [], False
    for line in run_help(binary).splitlines():
        if line.strip() == "Commands:":
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            names.append(line.split()[0])
    if not names:
        raise HelpError("sbx-oci --help lists no commands")
    return names


def option_line_names(line):
    """The spellings at the start of one option line of --help.

    Spellings are separated by ", "; the last one is followed by its argument (or
    "[=...]") and the description, which may name other options and is not read."""
    names = []
    for word in line.split(" "):
        m = SPELLING.match(word)
        if not m:
            break
        names.append(m.group(1))
        if not word.endswith(","):
            break
    return names


def parse_help(text):
    options = set()
    for line in text.splitlines():
        if line.startswith("Usage:"):
            options.update(OPTION.findall(line[len("Usage:"):]))
        elif line[:1].isspace() and line.lstrip().startswith("-"):
            options.update(option_line_names(line.strip()))
    return options


def help_options(binary, command=GLOBAL):
    return parse_help(run_help(binary, command))


def read_man(path):
    """{GLOBAL or command: set of options} of one man source, and format problems."""
    sections, problems = {}, []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    top, current, fenced = None, "", False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        h = HEADING.match(line)
        if h:
            level, title = len(h.group(1)), h.group(2)
            if level <= 2:
                top = title.upper()
                current = GLOBAL if top == "GLOBAL OPTIONS" else ""
                if current is GLOBAL:
                    sections.setdefault(GLOBAL, set())
            elif level == 3:
                current = title if top == "COMMANDS" else ""
                if current:
                    if current in sections:
                        problems.append("%s:%d: a second section for %s" % (path, i + 1, current))
                    sections.setdefault(current, set())
            continue
        if not line.startswith("**-"):
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith(": "):
            problems.append("%s:%d: an option entry without a ': description' line after it: %s"
                            % (path, i + 1, line))
            continue
        if current == "":
            problems.append("%s:%d: an option entry outside GLOBAL OPTIONS and the command sections: %s"
                            % (path, i + 1, line))
            continue
        sections[current].update(BOLD_OPTION.findall(line))
    return sections, problems


def page_of(command):
    return PYTHON_PAGE if command in PYTHON_COMMANDS else MAIN_PAGE


def label(command):
    return "sbx-oci" if command is GLOBAL else "sbx-oci " + command


def compare(binary, man_dir):
    """Every disagreement, as lines to print."""
    out = []
    pages = {}
    for page in (MAIN_PAGE, PYTHON_PAGE):
        path = os.path.join(man_dir, page)
        try:
            pages[page], problems = read_man(path)
        except OSError as e:
            out.append("%s: %s" % (path, e.strerror))
            pages[page] = {}
            continue
        out.extend(problems)

    commands = help_commands(binary)
    keys = [GLOBAL] + commands
    for key in keys:
        page = MAIN_PAGE if key is GLOBAL else page_of(key)
        in_help = help_options(binary, key)
        if key not in pages[page]:
            where = "GLOBAL OPTIONS section" if key is GLOBAL else "'### %s' section under COMMANDS" % key
            out.append("%s: %s has no %s" % (label(key), page, where))
            continue
        in_man = pages[page][key]
        for opt in sorted(in_help - in_man):
            out.append("%s: %s is in --help but not in %s" % (label(key), opt, page))
        for opt in sorted(in_man - in_help):
            out.append("%s: %s is in %s but not in --help" % (label(key), opt, page))

    for page, sections in pages.items():
        for key in sections:
            if key is GLOBAL:
                if page != MAIN_PAGE:
                    out.append("%s: global options belong in %s" % (page, MAIN_PAGE))
            elif key not in commands:
                out.append("%s: %s documents a command that sbx-oci --help does not list" % (label(key), page))
            elif page_of(key) != page:
                out.append("%s: documented in %s, but its place is %s" % (label(key), page, page_of(key)))
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: %s SBX_OCI_BINARY MAN_DIR\n" % os.path.basename(argv[0]))
        return 2
    try:
        out = compare(argv[1], argv[2])
    except HelpError as e:
        sys.stderr.write("man-vs-help: %s\n" % e)
        return 2
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
