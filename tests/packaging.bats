#!/usr/bin/env bats
# What is shipped beside the binary: the man pages (man/*.8.md, go-md2man sources)
# and the shell completions (contrib/completion/), each kept in step with --help.

load helpers

TOP=$BATS_TEST_DIRNAME/..
MAN=$TOP/man
CHECKER=$BATS_TEST_DIRNAME/helpers/man-vs-help.py
BASH_COMPLETION=$TOP/contrib/completion/sbx-oci.bash
ZSH_COMPLETION=$TOP/contrib/completion/_sbx-oci

# Nothing here runs a container: no bundle to build.
setup() {
	setup_state
}

# The options `sbx-oci [COMMAND] --help` names, one a line, read by the same code
# as the man page checker.
help_options() {
	python3 -B - "$SBX_OCI" "$CHECKER" "$@" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("man_vs_help", sys.argv[2])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
command = sys.argv[3] if len(sys.argv) > 3 else None
print("\n".join(sorted(m.help_options(sys.argv[1], command))))
EOF
}

help_commands() {
	"$SBX_OCI" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" { print $1 }'
}

# Drive the bash completion as readline would: complete the last of the words given,
# in a shell without any rc file; prints COMPREPLY, one a line.
complete_bash() {
	bash --norc -c '
		source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_sbx_oci
		if [ ${#COMPREPLY[@]} -gt 0 ]; then printf "%s\n" "${COMPREPLY[@]}"; fi
	' complete_bash "$BASH_COMPLETION" "$@"
}

# Both sides sorted, so that a difference shows as a diff.
assert_same_set() {
	local what=$1 expected=$2 actual=$3
	if [ "$(sort <<<"$expected")" != "$(sort <<<"$actual")" ]; then
		echo "$what differ (< expected, > got):" >&2
		diff <(sort <<<"$expected") <(sort <<<"$actual") >&2
		return 1
	fi
}

# ------------------------------------------------------------------ man pages

@test "packaging: the man pages document every option --help lists, and no other" {
	run python3 "$CHECKER" "$SBX_OCI" "$MAN"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "packaging: man-vs-help.py reports an option missing from either side" {
	local copy=$BATS_TEST_TMPDIR/man
	cp -r "$MAN" "$copy"
	# drop run's --keep entry, and add an option that exists nowhere
	python3 - "$copy/sbx-oci.8.md" <<'EOF'
import sys
path = sys.argv[1]
lines = open(path).read().split("\n")
i = lines.index("**--keep**")
del lines[i:i + 2]
i = lines.index("**--no-pivot**")
lines[i:i] = ["**--bogus-option**", ": does not exist", ""]
open(path, "w").write("\n".join(lines))
EOF
	rm "$copy/sbx-oci-python.8.md"
	run python3 "$CHECKER" "$SBX_OCI" "$copy"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -qx 'sbx-oci run: --keep is in --help but not in sbx-oci.8.md' <<<"$output"
	grep -q 'sbx-oci create: --bogus-option is in sbx-oci.8.md but not in --help' <<<"$output"
	grep -q 'sbx-oci-python.8.md' <<<"$output"
	grep -q "sbx-oci python: sbx-oci-python.8.md has no '### python' section" <<<"$output"
}

@test "packaging: each man page renders with go-md2man and groff without a warning" {
	requires go-md2man
	local page out
	for page in sbx-oci sbx-oci-python; do
		out=$BATS_TEST_TMPDIR/$page.8
		run go-md2man -in "$MAN/$page.8.md" -out "$out"
		echo "go-md2man $page.8.md: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ] # it warns on stderr about what it drops (HTML, for one)
		# the title block gives the name and the section
		grep -qx ".TH ${page^^} 8.*" "$out"
		if command -v groff >/dev/null; then
			run groff -man -Tutf8 -ww -z "$out"
		elif command -v mandoc >/dev/null; then
			run mandoc -T lint -W warning "$out"
		else
			requires groff
		fi
		echo "rendering $page.8: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

# ------------------------------------------------------------------ completions

@test "packaging: the bash completion sources cleanly and registers for sbx-oci" {
	run bash --norc -c 'source "$1" && complete -p sbx-oci' bash "$BASH_COMPLETION"
	[ "$status" -eq 0 ]
	[ "$output" = "complete -F _sbx_oci sbx-oci" ]
}

@test "packaging: bash completes 'sbx-oci ' to the commands and 'sbx-oci run --' to run's options" {
	run complete_bash sbx-oci ""
	[ "$status" -eq 0 ]
	assert_same_set "commands" "$(help_commands)" "$output"

	run complete_bash sbx-oci --root /x ""
	assert_same_set "commands after a global option" "$(help_commands)" "$output"

	run complete_bash sbx-oci run --
	[ "$status" -eq 0 ]
	assert_same_set "run's long options" "$(help_options run | grep -- '^--')" "$output"

	run complete_bash sbx-oci list --format ""
	assert_same_set "list --format values" "$(printf '%s\n' json table)" "$output"
}

@test "packaging: bash completes container ids from the state root that --root names" {
	local stub=$BATS_TEST_TMPDIR/stub log=$BATS_TEST_TMPDIR/stub.log
	# stands for sbx-oci: records how it was asked, answers with ids per root
	cat >"$stub" <<EOF
#!/bin/sh
echo "\$*" >>"$log"
case "\$*" in
"--root /r1 list -q") printf '%s\n' one-a one-b ;;
"list -q") echo default-c ;;
esac
EOF
	chmod +x "$stub"
	run complete_bash "$stub" --root /r1 state ""
	assert_same_set "ids under --root /r1" "$(printf '%s\n' one-a one-b)" "$output"
	run complete_bash "$stub" --debug --root=/r1 kill one-
	assert_same_set "ids under --root=/r1" "$(printf '%s\n' one-a one-b)" "$output"
	run complete_bash "$stub" exec ""
	assert_same_set "ids in the default root" default-c "$output"
	# a new container's id is not an existing one
	run complete_bash "$stub" create ""
	[ -z "$output" ]
	[ "$(cat "$log")" = "$(printf '%s\n' '--root /r1 list -q' '--root /r1 list -q' 'list -q')" ]
}

@test "packaging: the option tables of both completions match --help, command by command" {
	local cmd
	run python3 - "$BASH_COMPLETION" "$ZSH_COMPLETION" <<'EOF'
import re, sys
# Each file: NAME=( ... ) arrays whose every line is one '...' entry (the format the
# files' headers describe); print "FILE TABLE OPTION" for every spelling.
for path in sys.argv[1:]:
    table = None
    for n, line in enumerate(open(path), 1):
        s = line.strip()
        m = re.match(r"^_sbx_oci_opts_(\w+)=\($", s)
        if m:
            table = m.group(1)
            continue
        if table is None:
            continue
        if s == ")":
            table = None
            continue
        e = re.match(r"^'([^'|]*)\|[^']*'$", s)
        if not e:
            sys.exit("%s:%d: not a 'NAMES|...' entry: %s" % (path, n, s))
        for name in e.group(1).lstrip("*").split():
            print(path.rsplit("/", 1)[1], table, name)
EOF
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	local tables=$output
	for file in sbx-oci.bash _sbx-oci; do
		for cmd in global $(help_commands); do
			local want
			if [ "$cmd" = global ]; then want=$(help_options); else want=$(help_options "$cmd"); fi
			assert_same_set "$file: options of $cmd" "$want" \
				"$(awk -v f="$file" -v t="$cmd" '$1 == f && $2 == t { print $3 }' <<<"$tables")"
		done
		# and no table for a command that does not exist
		assert_same_set "$file: tables" "$(echo global; help_commands)" \
			"$(awk -v f="$file" '$1 == f { print $2 }' <<<"$tables" | sort -u)"
	done

	# the command lists
	local bash_cmds zsh_cmds
	bash_cmds=$(bash --norc -c 'source "$1" && printf "%s\n" "${_sbx_oci_commands[@]}"' bash "$BASH_COMPLETION")
	assert_same_set "sbx-oci.bash: commands" "$(help_commands)" "$bash_cmds"
	zsh_cmds=$(sed -n "/^_sbx_oci_commands=(/,/^)/{s/^[[:space:]]*'\([^:']*\):.*/\1/p}" "$ZSH_COMPLETION")
	assert_same_set "_sbx-oci: commands" "$(help_commands)" "$zsh_cmds"
}

@test "packaging: zsh parses its completion" {
	requires zsh
	run zsh -n "$ZSH_COMPLETION"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	head -n 1 "$ZSH_COMPLETION" | grep -qx '#compdef sbx-oci'
}

@test "packaging: the make dist tarball configures and builds on its own (./configure && make), man pages already rendered" {
	requires build-tree
	local src=$BATS_TEST_TMPDIR/src tarball
	run make -s -C "$SBX_BUILD_DIR" dist
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	tarball=$SBX_BUILD_DIR/sbx-oci-$("$SBX_OCI" --version | awk 'NR == 1 { print $3 }').tar.gz
	mkdir "$src"
	tar -C "$src" --strip-components=1 -xzf "$tarball"
	rm -f "$tarball"
	[ ! -e "$src/tests/.tmp" ]
	[ -f "$src/man/sbx-oci.8" ] && [ -f "$src/tests/cli.bats" ] && [ -f "$src/configure" ]
	# no autotools and no go-md2man needed by the one who builds it
	run sh -c "cd '$src' && PATH=/usr/bin:/bin GO_MD2MAN=/nonexistent ./configure -q && make -s -j2"
	[ "$status" -eq 0 ] || { echo "$output" | tail -n 30 >&2; false; }
	"$src/sbx-oci" --version | head -1 | grep -q '^sbx-oci version '
}
