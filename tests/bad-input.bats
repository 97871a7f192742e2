#!/usr/bin/env bats
# Bad input: every test feeds one malformed config, bundle, id or argument and
# checks the error contract: non-zero exit, exactly one line on stderr that names
# the bad field or argument, and nothing left behind (no state dir here; teardown
# also checks host mounts and cgroups).

load helpers

# The config in $BUNDLE is refused by `create` and by `run`, with one line on
# stderr that contains every NEEDLE given, and leaves no state dir.
refuse_config() {
	local cmd needle
	for cmd in create run; do
		sbx_split "$cmd" --bundle "$BUNDLE" "$ID"
		assert_one_line_error "$1" || { echo "($cmd)" >&2; return 1; }
		for needle in "$@"; do
			[[ "$stderr" == *"$needle"* ]] || { echo "$cmd: stderr does not mention '$needle': $stderr" >&2; return 1; }
		done
		[[ "$stderr" == "sbx-oci: "* ]] || { echo "$cmd: error line does not start with 'sbx-oci: ': $stderr" >&2; return 1; }
		# a crash (signal) is not a refusal
		[ "$status" -lt 126 ] || { echo "$cmd: exit status $status" >&2; return 1; }
		[ -z "$stdout" ] || { echo "$cmd: unexpected stdout: $stdout" >&2; return 1; }
		assert_no_state "$ID"
		[ ! -d "$SBX_ROOT" ] || [ -z "$(ls -A "$SBX_ROOT")" ] || { echo "state root not empty: $(ls -A "$SBX_ROOT")" >&2; return 1; }
	done
}

# Replace config.json with raw bytes (printf format and arguments).
write_config() {
	# shellcheck disable=SC2059
	printf "$@" >"$BUNDLE/config.json"
}

# N copies of the character C, without a newline.
repeat() {
	head -c "$2" /dev/zero | tr '\0' "$1"
}

# Prepend `"KEY": VALUE,` to the top-level object of config.json, where VALUE is
# N nested arrays; raw text, because jq cannot build deeper than its own limits.
prepend_nested_arrays() {
	local key=$1 n=$2 cfg=$BUNDLE/config.json
	jq -c . "$cfg" >"$cfg.compact"
	{
		printf '{"%s": ' "$key"
		repeat '[' "$n"
		repeat ']' "$n"
		printf ', '
		tail -c +2 "$cfg.compact"
	} >"$cfg"
	rm -f "$cfg.compact"
}

mount_count() {
	jq '.mounts | length' "$BUNDLE/config.json"
}

# ------------------------------------------------------------ malformed JSON

@test "bad input: a truncated config.json is refused with a line and column" {
	head -c 300 "$BUNDLE/config.json" >"$BUNDLE/config.json.cut"
	mv "$BUNDLE/config.json.cut" "$BUNDLE/config.json"
	refuse_config "config.json: parse error at line" " col "
	[[ "$stderr" =~ line\ [0-9]+\ col\ [0-9]+ ]]
}

@test "bad input: a truncated config.json: the error position is where the input ends" {
	# four lines, cut in the middle of a string on line 4: the parser can only
	# notice the premature end at the end of the input (line 4)
	write_config '{\n  "ociVersion": "1.3.0",\n  "root": {"path": "rootfs"},\n  "process": {"cwd": "/", "args": ["/bin/tr'
	refuse_config "config.json: parse error at line 4 col"
}

@test "bad input: trailing garbage after the JSON object is refused" {
	jq -c . "$BUNDLE/config.json" >"$BUNDLE/c" && { cat "$BUNDLE/c"; echo '{}'; } >"$BUNDLE/config.json"
	refuse_config "config.json: parse error at line 2"
}

@test "bad input: malformed JSON inside linux.seccomp.syscalls (parsed only when compiled) is refused with its line" {
	# the runtime finds that array without parsing it and parses it only when its
	# compiled filter is not cached: the error must still name the place
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["XBADX"], "action": "SCMP_ACT_ERRNO"}]}'
	sed -i 's/XBADX/b\\q/' "$BUNDLE/config.json"
	grep -qF '"b\q"' "$BUNDLE/config.json"
	local line
	line=$(grep -nF '"b\q"' "$BUNDLE/config.json" | cut -d: -f1)
	refuse_config "config.json: parse error at line $line col" "invalid escape"
}

@test "bad input: an empty config.json is refused" {
	: >"$BUNDLE/config.json"
	refuse_config "config.json: parse error"
}

@test "bad input: a config.json that is not an object at the top level is refused" {
	echo '["ociVersion", "1.3.0"]' >"$BUNDLE/config.json"
	refuse_config "config.json: expected a JSON object at the top level, got an array"
}

@test "bad input: a /* comment */ in config.json is refused (comments are not JSON)" {
	jq . "$BUNDLE/config.json" | sed '1a\  /* comment */' >"$BUNDLE/c"
	mv "$BUNDLE/c" "$BUNDLE/config.json"
	sed -n 2p "$BUNDLE/config.json" | grep -qF '/* comment */'
	refuse_config "config.json: parse error at line 2 col" "comment"
}

@test "bad input: an embedded NUL byte in config.json is refused with its position" {
	write_config '{\n  "ociVersion": "1.3.0",\n  "ho\0stname": "x"}'
	refuse_config "config.json: parse error at line 3 col 6" "NUL"
}

@test "bad input: a JSON string holding \\u0000 is refused" {
	update_config '.hostname = "PLACEHOLDER"'
	sed -i 's/PLACEHOLDER/a\\u0000b/' "$BUNDLE/config.json"
	grep -qF 'a\u0000b' "$BUNDLE/config.json"
	refuse_config "config.json: parse error at line" "NUL"
}

@test "bad input: an object key holding \\u0000 is refused" {
	update_config '.PLACEHOLDER = "x"'
	sed -i 's/"PLACEHOLDER"/"a\\u0000b"/' "$BUNDLE/config.json"
	refuse_config "config.json: parse error at line" "NUL"
}

@test "bad input: a duplicate object key is refused" {
	jq -c . "$BUNDLE/config.json" >"$BUNDLE/c"
	sed 's/^{/{"hostname":"a","hostname":"b",/' "$BUNDLE/c" >"$BUNDLE/config.json"
	refuse_config "config.json: parse error at line 1" "duplicate"
}

# --------------------------------------------------------------- wrong types

@test "bad input: process.args as a string is refused" {
	update_config '.process.args = "/bin/true"'
	refuse_config "process.args: expected an array, got a string"
}

@test "bad input: process.args holding a number is refused" {
	update_config '.process.args = ["/bin/true", 7]'
	refuse_config "process.args[1]: expected a string, got a number"
}

@test "bad input: process.user.uid as a string is refused" {
	update_config '.process.user.uid = "0"'
	refuse_config "process.user.uid:" "got a string"
}

@test "bad input: root as a string is refused" {
	update_config '.root = "rootfs"'
	refuse_config "root: expected an object, got a string"
}

@test "bad input: process.terminal as a string is refused" {
	update_config '.process.terminal = "false"'
	refuse_config "process.terminal: expected a boolean, got a string"
}

# ------------------------------------------------------------ missing fields

@test "bad input: a config without ociVersion is refused" {
	update_config 'del(.ociVersion)'
	refuse_config "ociVersion: required field is missing"
}

@test "bad input: a config without root.path is refused" {
	update_config 'del(.root.path)'
	refuse_config "root.path: required field is missing"
}

@test "bad input: a config without root is refused" {
	update_config 'del(.root)'
	refuse_config "root: required field is missing"
}

@test "bad input: a process without cwd is refused" {
	update_config 'del(.process.cwd)'
	refuse_config "process.cwd: required field is missing"
}

@test "bad input: a relative process.cwd is refused" {
	update_config '.process.cwd = "tmp"'
	refuse_config "process.cwd: 'tmp' must be an absolute path"
}

@test "bad input: empty process.args is refused" {
	update_config '.process.args = []'
	refuse_config "process.args: must contain at least one entry"
}

@test "bad input: a mount without destination is refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"type": "tmpfs", "source": "tmpfs"}]'
	refuse_config "mounts[$n].destination: required field is missing"
}

@test "bad input: a mount with an empty destination is refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"destination": "", "type": "tmpfs", "source": "tmpfs"}]'
	refuse_config "mounts[$n].destination: must not be empty"
}

# ---------------------------------------------------------------- namespaces

@test "bad input: an unknown namespace type is refused" {
	update_config '.linux.namespaces[0].type = "netx"'
	refuse_config "linux.namespaces[0].type: unknown namespace 'netx'"
}

@test "bad input: a duplicate namespace is refused" {
	local n
	n=$(jq '.linux.namespaces | length' "$BUNDLE/config.json")
	update_config '.linux.namespaces += [{"type": "ipc"}]'
	refuse_config "linux.namespaces[$n].type: duplicate namespace 'ipc'"
}

@test "bad input: a network namespace path that is an ipc namespace is refused" {
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/ipc" else . end)'
	refuse_config "linux.namespaces" "/proc/self/ns/ipc is not a network namespace"
}

@test "bad input: a namespace path that is not a namespace file is refused" {
	update_config '.linux.namespaces |= map(if .type == "uts" then .path = "/etc/hostname" else . end)'
	refuse_config "linux.namespaces" "/etc/hostname is not a uts namespace"
}

@test "bad input: a namespace path that does not exist is refused" {
	update_config '.linux.namespaces |= map(if .type == "ipc" then .path = "/proc/self/ns/no-such-ns" else . end)'
	refuse_config "linux.namespaces" "/proc/self/ns/no-such-ns"
}

@test "bad input: a relative namespace path is refused" {
	local i
	i=$(jq '.linux.namespaces | map(.type) | index("network")' "$BUNDLE/config.json")
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "proc/self/ns/net" else . end)'
	refuse_config "linux.namespaces[$i].path: 'proc/self/ns/net' must be an absolute path"
}

@test "bad input: a config without a mount namespace is refused" {
	update_config '.linux.namespaces |= map(select(.type != "mount"))'
	refuse_config "linux.namespaces" "mount namespace"
}

# ---------------------------------------------------------- user namespaces

@test "bad input: uidMappings hostID -1 is refused" {
	use_userns
	update_config '.linux.uidMappings[0].hostID = -1'
	refuse_config "linux.uidMappings[0].hostID: -1 is not an integer in [0, 4294967295]"
}

@test "bad input: uidMappings hostID 4294967296 is refused" {
	use_userns
	update_config '.linux.uidMappings[0].hostID = 4294967296'
	refuse_config "linux.uidMappings[0].hostID: 4294967296 is not an integer"
}

@test "bad input: uidMappings hostID 1.5 is refused" {
	use_userns
	update_config '.linux.uidMappings[0].hostID = 1.5'
	refuse_config "linux.uidMappings[0].hostID: 1.5 is not an integer"
}

@test "bad input: gidMappings size 0 is refused" {
	use_userns
	update_config '.linux.gidMappings[0].size = 0'
	refuse_config "linux.gidMappings[0].size: must be greater than zero"
}

@test "bad input: a mapping whose range overflows 32 bits is refused" {
	use_userns
	update_config '.linux.uidMappings[0].hostID = 4294967295 | .linux.uidMappings[0].size = 2'
	refuse_config "linux.uidMappings[0]: range overflows 32 bits"
}

@test "bad input: a user namespace with uidMappings but no gidMappings is refused" {
	update_config '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 1}]'
	refuse_config "linux.gidMappings" "needs both uidMappings and gidMappings"
}

@test "a user namespace without any mapping maps the caller to the container's root, one id (as crun)" {
	update_config '.linux.namespaces += [{"type": "user"}]'
	set_args sh -c 'cat /proc/self/uid_map /proc/self/gid_map'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(echo ${lines[0]})" = "0 $(id -u) 1" ]
	[ "$(echo ${lines[1]})" = "0 $(id -g) 1" ]
}

@test "bad input: gidMappings alone without a user namespace: the error names linux.gidMappings" {
	update_config '.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	refuse_config "linux.gidMappings" "no user namespace"
}

@test "bad input: uid/gid mappings without a user namespace are refused" {
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	refuse_config "linux.uidMappings" "no user namespace"
}

@test "bad input: overlapping container ranges in uidMappings are refused" {
	use_userns
	update_config '.linux.uidMappings += [{"containerID": 1000, "hostID": 300000, "size": 10}]'
	refuse_config "linux.uidMappings[1]: overlaps linux.uidMappings[0]"
}

@test "bad input: overlapping host ranges in uidMappings are refused" {
	use_userns
	update_config '.linux.uidMappings += [{"containerID": 70000, "hostID": 100500, "size": 10}]'
	refuse_config "linux.uidMappings[1]: overlaps linux.uidMappings[0]"
}

# -------------------------------------------------------------------- mounts

@test "bad input: mount destination ../../etc is refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"destination": "../../etc", "type": "tmpfs", "source": "tmpfs"}]'
	refuse_config "mounts[$n].destination: '../../etc' must not contain '..'"
}

@test "bad input: mount destination /tmp/../../etc is refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"destination": "/tmp/../../etc", "type": "tmpfs", "source": "tmpfs"}]'
	refuse_config "mounts[$n].destination: '/tmp/../../etc' must not contain '..'"
}

@test "bad input: a bind mount without source is refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"destination": "/mnt", "type": "bind", "options": ["rbind", "ro"]}]'
	refuse_config "mounts[$n].source: a bind mount needs a source"
}

@test "bad input: an unknown option on a bind mount is refused" {
	local n
	n=$(mount_count)
	update_config --arg s "$BATS_TEST_TMPDIR" \
		'.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "frobnicate"]}]'
	refuse_config "mounts[$n].options[1]: unknown option 'frobnicate' for a bind mount"
}

@test "bad input: a non-bind mount without type is refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"destination": "/mnt", "source": "tmpfs"}]'
	refuse_config "mounts[$n].type: required for a mount that is not a bind mount"
}

@test "bad input: mount options that are not strings are refused" {
	local n
	n=$(mount_count)
	update_config '.mounts += [{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs", "options": [true]}]'
	refuse_config "mounts[$n].options[0]: expected a string, got a boolean"
}

# ------------------------------------------------------------------- rlimits

@test "bad input: an unknown rlimit type is refused" {
	local n
	n=$(jq '.process.rlimits | length' "$BUNDLE/config.json")
	update_config '.process.rlimits += [{"type": "RLIMIT_FROB", "soft": 1, "hard": 1}]'
	refuse_config "process.rlimits[$n].type: unknown rlimit 'RLIMIT_FROB'"
}

@test "bad input: an rlimit with soft > hard is refused" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 2048, "hard": 1024}]'
	refuse_config "process.rlimits[0]: soft limit 2048 is greater than hard limit 1024"
}

@test "bad input: a duplicate rlimit is refused" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 10, "hard": 10},
		{"type": "RLIMIT_CORE", "soft": 0, "hard": 0}, {"type": "RLIMIT_NOFILE", "soft": 20, "hard": 20}]'
	refuse_config "process.rlimits[2].type: duplicate rlimit 'RLIMIT_NOFILE'"
}

@test "bad input: a negative rlimit is refused" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": -1, "hard": 1024}]'
	refuse_config "process.rlimits[0].soft: -1 is not an integer"
}

# --------------------------------------------------- linux fields, misc checks

@test "bad input: hostname without a uts namespace is refused" {
	update_config '.hostname = "box" | .linux.namespaces |= map(select(.type != "uts"))'
	refuse_config "hostname: setting it needs a UTS namespace"
}

@test "bad input: a relative masked path is refused" {
	local n
	n=$(jq '.linux.maskedPaths | length' "$BUNDLE/config.json")
	update_config '.linux.maskedPaths += ["proc/kcore"]'
	refuse_config "linux.maskedPaths[$n]: 'proc/kcore' must be an absolute path"
}

@test "bad input: a relative readonly path is refused" {
	update_config '.linux.readonlyPaths = ["/proc/sys", "proc/bus"]'
	refuse_config "linux.readonlyPaths[1]: 'proc/bus' must be an absolute path"
}

@test "bad input: a non-namespaced sysctl (kernel.panic) is refused" {
	local before
	before=$(cat /proc/sys/kernel/panic)
	update_config '.linux.sysctl = {"kernel.panic": "17"}'
	refuse_config "linux.sysctl.kernel.panic: not a namespaced sysctl"
	[ "$(cat /proc/sys/kernel/panic)" = "$before" ]
}

@test "bad input: a net sysctl without a network namespace is refused" {
	update_config '.linux.namespaces |= map(select(.type != "network"))
		| .linux.sysctl = {"net.ipv4.ip_forward": "1"}'
	refuse_config "linux.sysctl.net.ipv4.ip_forward: needs a network namespace"
}

@test "bad input: a kernel.hostname sysctl is refused (the hostname field sets it), kernel.domainname when it contradicts domainname (as runc and crun)" {
	update_config '.linux.sysctl = {"kernel.hostname": "x"}'
	refuse_config "linux.sysctl.kernel.hostname: not allowed, it conflicts with the hostname field"
	update_config '.domainname = "a" | .linux.sysctl = {"kernel.domainname": "b"}'
	refuse_config "linux.sysctl.kernel.domainname: 'b' conflicts with the domainname field ('a')"
	update_config '.domainname = "same" | .linux.sysctl = {"kernel.domainname": "same"}'
	set_args cat /proc/sys/kernel/domainname
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = same ]
}

@test "bad input: a net sysctl in a joined network namespace that is the runtime's own (the host's) is refused" {
	local before
	before=$(cat /proc/sys/net/ipv4/ping_group_range)
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/net" else . end)
		| .linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}'
	refuse_config "linux.sysctl.net.ipv4.ping_group_range: the network namespace joined at /proc/self/ns/net is the runtime's own"
	[ "$(cat /proc/sys/net/ipv4/ping_group_range)" = "$before" ]
}

@test "bad input: oomScoreAdj 1001 is refused" {
	update_config '.process.oomScoreAdj = 1001'
	refuse_config "process.oomScoreAdj: 1001 is not an integer in [-1000, 1000]"
}

@test "bad input: oomScoreAdj -1001 is refused" {
	update_config '.process.oomScoreAdj = -1001'
	refuse_config "process.oomScoreAdj: -1001 is not an integer in [-1000, 1000]"
}

@test "bad input: unsupported ociVersion 2.0.0 is refused" {
	update_config '.ociVersion = "2.0.0"'
	refuse_config "ociVersion: '2.0.0' is not supported"
}

@test "bad input: ociVersion 1.4.0 (newer than the runtime) is refused" {
	update_config '.ociVersion = "1.4.0"'
	refuse_config "ociVersion: '1.4.0' is not supported"
}

@test "bad input: an ociVersion that is not a semantic version is refused" {
	update_config '.ociVersion = "latest"'
	refuse_config "ociVersion: 'latest' is not a semantic version"
}

@test "bad input: process.terminal true without --console-socket is refused by create and run -d" {
	update_config '.process.terminal = true'
	local cmd
	for cmd in create "run -d"; do
		# shellcheck disable=SC2086 # two words for run -d
		sbx_split $cmd --bundle "$BUNDLE" "$ID"
		assert_one_line_error "process.terminal"
		[[ "$stderr" == *"use --console-socket"* ]]
		assert_no_state "$ID"
	done
	# said before anything else of the process is read (crun's test-detach-tty has a
	# number in args)
	update_config '.process.args = ["/bin/true", 0]'
	sbx_split run -d --bundle "$BUNDLE" "$ID"
	assert_one_line_error "use --console-socket"
	assert_no_state "$ID"
}

@test "bad input: run.oci.keep_original_groups with additionalGids is refused naming both" {
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [5]} | .annotations["run.oci.keep_original_groups"] = "1"'
	refuse_config "run.oci.keep_original_groups" "additionalGids"
}

@test "bad input: an env entry without '=' is refused" {
	update_config '.process.env += ["JUSTANAME"]'
	refuse_config "process.env[" "'JUSTANAME' is not of the form NAME=VALUE"
}

# ---------------------------------------------------------- size and nesting

@test "bad input: 100 levels of nesting in an annotation value are refused" {
	# annotations must be an object: build {"org.example.deep": [[[...]]]} by hand
	jq -c 'del(.annotations)' "$BUNDLE/config.json" >"$BUNDLE/c"
	{
		printf '{"annotations": {"org.example.deep": '
		repeat '[' 100
		repeat ']' 100
		printf '}, '
		tail -c +2 "$BUNDLE/c"
	} >"$BUNDLE/config.json"
	refuse_config "config.json: parse error at line 1" "nesting"
}

@test "bad input: 100 levels of nesting in an unknown field are refused" {
	prepend_nested_arrays org.example.future 100
	refuse_config "config.json: parse error at line 1" "nesting"
}

@test "bad input: 1,000,000 levels of nesting do not crash the runtime and fail fast" {
	prepend_nested_arrays org.example.future 1000000
	local start end
	for cmd in create run; do
		start=$(date +%s%N)
		set +e
		timeout -s KILL 20 "$SBX_OCI" --root "$SBX_ROOT" "$cmd" --bundle "$BUNDLE" "$ID" </dev/null \
			>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err"
		status=$?
		set -e
		end=$(date +%s%N)
		stdout=$(cat "$BATS_TEST_TMPDIR/out") stderr=$(cat "$BATS_TEST_TMPDIR/err")
		echo "$cmd: status $status after $(((end - start) / 1000000)) ms: $stderr"
		[ "$status" -ne 124 ] # not timed out
		[ "$status" -lt 126 ] # not killed by a signal
		assert_one_line_error "nesting"
		[ $(((end - start) / 1000000)) -lt 5000 ]
		assert_no_state "$ID"
	done
}

@test "bad input: 150,000 annotation keys (2.4 MB) are handled within seconds, not minutes" {
	# an object's keys are checked for duplicates; done pairwise, this many keys
	# take the runtime minutes of CPU (a denial of service under the size limit)
	jq -n '[range(150000)] | map({key: "k\(.)", value: ""}) | from_entries' >"$BATS_TEST_TMPDIR/ann"
	update_config --slurpfile a "$BATS_TEST_TMPDIR/ann" '.annotations = $a[0]'
	[ "$(stat -c %s "$BUNDLE/config.json")" -lt $((4 * 1024 * 1024)) ]
	local start end ms
	start=$(date +%s%N)
	set +e
	timeout -s KILL 20 "$SBX_OCI" --root "$SBX_ROOT" run --bundle "$BUNDLE" "$ID" </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1
	status=$?
	set -e
	end=$(date +%s%N)
	ms=$(((end - start) / 1000000))
	echo "status $status after $ms ms: $(head -c 300 "$BATS_TEST_TMPDIR/out")"
	[ "$status" -lt 124 ] || { echo "killed after 20 s (status $status)" >&2; return 1; }
	[ "$ms" -lt 10000 ] || { echo "took $ms ms" >&2; return 1; }
	assert_no_state "$ID"
}

@test "bad input: nesting well below the limit in an unknown field is accepted" {
	prepend_nested_arrays org.example.future 30
	set_args echo ran
	sbx_split run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
}

@test "bad input: a config larger than 4 MiB is refused" {
	repeat a $((4 * 1024 * 1024 + 1)) >"$BATS_TEST_TMPDIR/big"
	update_config --rawfile big "$BATS_TEST_TMPDIR/big" '.annotations["org.example.big"] = $big'
	[ "$(stat -c %s "$BUNDLE/config.json")" -gt $((4 * 1024 * 1024)) ]
	refuse_config "config.json: file is larger than the 4194304 byte limit"
}

@test "bad input: a config with a 2 MiB annotation is refused, or the container stays manageable" {
	# under the 4 MiB config limit: either create refuses it, or state/delete work on
	# the container it created (runtime.md: state carries the config's annotations)
	repeat a $((2 * 1024 * 1024)) >"$BATS_TEST_TMPDIR/big"
	update_config --rawfile big "$BATS_TEST_TMPDIR/big" '.annotations["org.example.big"] = $big'
	set_args sleep 100
	local pidfile=$BATS_TEST_TMPDIR/pid create_status state_status state_len delete_status alive=no pid
	set +e
	"$SBX_OCI" --root "$SBX_ROOT" create --bundle "$BUNDLE" --pid-file "$pidfile" "$ID" </dev/null \
		>"$BATS_TEST_TMPDIR/create.log" 2>&1
	create_status=$?
	set -e
	if [ "$create_status" -ne 0 ]; then
		[ "$(grep -c . "$BATS_TEST_TMPDIR/create.log")" -eq 1 ]
		assert_no_state "$ID"
		return 0
	fi
	pid=$(cat "$pidfile")
	sbx_split state "$ID"
	state_status=$status
	state_len=$(jq -r '.annotations["org.example.big"] | length' <<<"$stdout" 2>/dev/null || echo none)
	echo "state: status $state_status, annotation length $state_len, stderr: $stderr"
	sbx_split delete --force "$ID"
	delete_status=$status
	echo "delete --force: status $delete_status, stderr: $stderr"
	sleep 0.2
	if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status"; then alive=yes; fi
	echo "container init $pid still alive after delete --force: $alive"
	# clean up whatever the runtime left, so that the assertions below report the bug
	# and the next tests start clean
	local cg
	for cg in $(find /sys/fs/cgroup -depth -type d -name "$ID" 2>/dev/null); do
		xargs -r kill -9 <"$cg/cgroup.procs" 2>/dev/null || true
	done
	kill -9 "$pid" 2>/dev/null || true
	sleep 0.2
	find /sys/fs/cgroup -depth -type d -name "$ID" -exec rmdir {} \; 2>/dev/null || true
	"$SBX_OCI" --root "$SBX_ROOT" delete --force "$ID" >/dev/null 2>&1 || rm -rf "${SBX_ROOT:?}/$ID"

	[ "$state_status" -eq 0 ] || { echo "state failed on a container that create accepted" >&2; return 1; }
	[ "$state_len" = $((2 * 1024 * 1024)) ]
	[ "$delete_status" -eq 0 ]
	[ "$alive" = no ] || { echo "delete --force left the container's init running" >&2; return 1; }
}

# -------------------------------------------------------------------- bundle

@test "bad input: a bundle whose rootfs does not exist is refused" {
	update_config '.root.path = "no-such-rootfs"'
	refuse_config "root.path" "no-such-rootfs"
}

@test "bad input: a bundle whose rootfs is a file is refused" {
	touch "$BUNDLE/rootfs-file"
	update_config '.root.path = "rootfs-file"'
	refuse_config "root.path" "rootfs-file"
}

@test "bad input: a bundle directory that does not exist is refused" {
	for cmd in create run; do
		sbx_split "$cmd" --bundle "$BATS_TEST_TMPDIR/no-such-bundle" "$ID"
		assert_one_line_error "no-such-bundle"
		assert_no_state "$ID"
	done
}

@test "bad input: a bundle without config.json is refused" {
	rm "$BUNDLE/config.json"
	refuse_config "config.json" "No such file"
}

# ------------------------------------------------------------- unknown fields

@test "unknown fields at the top level and inside process, linux and root are ignored" {
	update_config '.["org.example.future"] = {"nested": [1, 2, {"x": null}]}
		| .process["futureKnob"] = true
		| .linux["futureKnob"] = {"level": 3}
		| .root["futureKnob"] = "x"'
	set_args echo ran
	sbx_split run --bundle "$BUNDLE" "$ID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
	assert_no_state "$ID"
}

# -------------------------------------------------------------- container ids

# The id is refused with "invalid container id" by every command that takes one,
# and nothing appears in the state root.
refuse_id_everywhere() {
	local id=$1
	mkdir -p "$SBX_ROOT"
	sbx_split create --bundle "$BUNDLE" -- "$id"
	assert_one_line_error "invalid container id" || { echo "(create)" >&2; return 1; }
	sbx_split run --bundle "$BUNDLE" -- "$id"
	assert_one_line_error "invalid container id" || { echo "(run)" >&2; return 1; }
	sbx_split run -d --bundle "$BUNDLE" -- "$id"
	assert_one_line_error "invalid container id" || { echo "(run -d)" >&2; return 1; }
	sbx_split state -- "$id"
	assert_one_line_error "invalid container id" || { echo "(state)" >&2; return 1; }
	[ -z "$stdout" ]
	sbx_split kill -- "$id" KILL
	assert_one_line_error "invalid container id" || { echo "(kill)" >&2; return 1; }
	sbx_split delete -- "$id"
	assert_one_line_error "invalid container id" || { echo "(delete)" >&2; return 1; }
	sbx_split delete --force -- "$id"
	assert_one_line_error "invalid container id" || { echo "(delete --force)" >&2; return 1; }
	sbx_split start -- "$id"
	assert_one_line_error "invalid container id" || { echo "(start)" >&2; return 1; }
	[ -z "$(ls -A "$SBX_ROOT")" ]
}

@test "bad input: container id '..' is refused by every command; delete -f .. removes nothing" {
	mkdir -p "$SBX_ROOT" "$SBX_ROOT/../canary"
	echo keep >"$SBX_ROOT/../canary/file"
	echo keep >"$SBX_ROOT/../canary.txt"
	refuse_id_everywhere ..
	sbx_split delete -f ..
	assert_one_line_error "invalid container id"
	[ -d "$SBX_ROOT" ]
	[ "$(cat "$SBX_ROOT/../canary/file")" = keep ]
	[ "$(cat "$SBX_ROOT/../canary.txt")" = keep ]
}

@test "bad input: container id '.' is refused by every command; delete -f . removes nothing" {
	refuse_id_everywhere .
	echo keep >"$SBX_ROOT/canary"
	sbx_split delete -f .
	assert_one_line_error "invalid container id"
	[ "$(cat "$SBX_ROOT/canary")" = keep ]
	rm "$SBX_ROOT/canary"
}

@test "bad input: container id 'a/b' is refused by every command" {
	refuse_id_everywhere a/b
	mkdir -p "$SBX_ROOT/a/b"
	echo keep >"$SBX_ROOT/a/b/state.json"
	sbx_split delete -f a/b
	assert_one_line_error "invalid container id"
	[ "$(cat "$SBX_ROOT/a/b/state.json")" = keep ]
	rm -r "${SBX_ROOT:?}/a"
}

@test "bad input: an absolute path as container id is refused; delete -f of it removes nothing" {
	refuse_id_everywhere /x
	mkdir -p "$BATS_TEST_TMPDIR/abs-canary"
	echo keep >"$BATS_TEST_TMPDIR/abs-canary/file"
	sbx_split delete -f "$BATS_TEST_TMPDIR/abs-canary"
	assert_one_line_error "invalid container id"
	[ "$(cat "$BATS_TEST_TMPDIR/abs-canary/file")" = keep ]
}

@test "bad input: an empty container id is refused by every command" {
	refuse_id_everywhere ""
}

@test "bad input: container id '-rf' is refused by every command" {
	refuse_id_everywhere -rf
}

@test "bad input: a 1 KiB container id is refused by every command" {
	refuse_id_everywhere "$(repeat x 1024)"
}

@test "bad input: a container id of 256 characters is refused" {
	local id=$ID
	id=$id$(repeat x $((256 - ${#id})))
	[ "${#id}" -eq 256 ]
	sbx_split run --bundle "$BUNDLE" "$id"
	assert_one_line_error "invalid container id"
}

@test "a container id of 255 characters is accepted" {
	local id=$ID
	id=$id$(repeat x $((255 - ${#id})))
	[ "${#id}" -eq 255 ]
	set_args echo ran
	sbx_split run --bundle "$BUNDLE" "$id"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
	assert_no_state "$id"
}

@test "bad input: a container id with a newline is refused by every command, on one line" {
	refuse_id_everywhere $'a\nb'
	[[ "$stderr" != *$'\n'* ]]
}

@test "bad input: a container id with a space or a shell metacharacter is refused" {
	refuse_id_everywhere 'a b'
	refuse_id_everywhere 'a;b'
}

# ---------------------------------------------------- existing / missing ids

@test "bad input: a duplicate id is refused and the first container is left intact" {
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_ok state "$ID"
	local pid
	pid=$(jq -r .pid <<<"$output")
	for args in "create" "run" "run -d"; do
		# shellcheck disable=SC2086
		sbx_split $args --bundle "$BUNDLE" "$ID"
		assert_one_line_error "already exists" || { echo "($args)" >&2; return 1; }
		[[ "$stderr" == *"$ID"* ]]
	done
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = created ]
	[ "$(jq -r .pid <<<"$output")" = "$pid" ]
	[ -d "/proc/$pid" ]
	[ -p "$SBX_ROOT/$ID/exec.fifo" ]
	sbx_detached start "$ID"
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = running ]
}

@test "bad input: start, state, kill and delete of a missing container say it does not exist" {
	mkdir -p "$SBX_ROOT"
	sbx_split start "$ID"
	assert_one_line_error "container $ID does not exist"
	sbx_split state "$ID"
	assert_one_line_error "container $ID does not exist"
	[ -z "$stdout" ]
	sbx_split kill "$ID" KILL
	assert_one_line_error "container $ID does not exist"
	sbx_split delete "$ID"
	assert_one_line_error "container $ID does not exist"
	assert_no_state "$ID"
}

@test "bad input: state of a container in a state root that does not exist says it does not exist" {
	sbx_split state "$ID"
	assert_one_line_error "container $ID does not exist"
}

@test "bad input: kill with an invalid signal is refused and the container keeps running" {
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	for sig in SIGFOO FOO 0 65 -9 9x ""; do
		sbx_split kill "$ID" "$sig"
		assert_one_line_error "invalid signal '$sig'" || { echo "(signal '$sig')" >&2; return 1; }
		[ "$status" -eq 2 ]
	done
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = running ]
}

@test "bad input: kill with too many arguments is a usage error" {
	sbx_split kill "$ID" TERM extra
	assert_one_line_error "kill"
	[ "$status" -eq 2 ]
}

@test "bad input: --pid-file in a missing directory: create fails and leaves nothing behind" {
	set_args sleep 100
	sbx_split create --bundle "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/no-such-dir/pid" "$ID"
	assert_one_line_error "--pid-file"
	assert_no_state "$ID"
	# the container's init was killed: no process of this container remains
	sleep 0.2
	! pgrep -f -- "$ID" >/dev/null
}

@test "--preserve-fds naming more descriptors than are open: the open ones pass, the holes stay holes (no runtime fd fills them)" {
	set_args /bin/probe fds
	# (3 closed too: bats' own fd 3 would otherwise be open, and rightly passed)
	sbx_split run --preserve-fds 6 --bundle "$BUNDLE" "$ID" 3>&- 4</dev/null 6</dev/null
	[ "$status" -eq 0 ]
	# fds 4 and 6 were the caller's; 3, 5, 7 and 8 were not open and must not be
	grep -q '^4 -> /dev/null' <<<"$stdout"
	grep -q '^6 -> /dev/null' <<<"$stdout"
	refute grep -qE '^(3|5|7|8) ' <<<"$stdout" || { echo "$stdout" >&2; false; }
	assert_no_state "$ID"
}

@test "bad input: --preserve-fds that is not a number is refused" {
	sbx_split run --preserve-fds abc --bundle "$BUNDLE" "$ID"
	assert_one_line_error "--preserve-fds: 'abc'"
	assert_no_state "$ID"
}
