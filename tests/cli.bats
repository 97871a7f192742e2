#!/usr/bin/env bats
# The command line: global options, --help and --version, usage errors, logging,
# spec, features, list, checkpoint/restore.

load helpers

COMMANDS="create start run state kill delete list spec features checkpoint restore"

# The runtime without the helpers' --root (for tests of the global options).
raw_split() {
	local out err
	out=$(mktemp) err=$(mktemp)
	set +e
	"$SBX_OCI" "$@" </dev/null >"$out" 2>"$err"
	status=$?
	set -e
	stdout=$(cat "$out") stderr=$(cat "$err")
	rm -f "$out" "$err"
}

# A usage error: exit status 2 and one line on stderr naming $1.
assert_usage_error() {
	assert_one_line_error "$1"
	[ "$status" -eq 2 ] || { echo "expected exit status 2, got $status" >&2; return 1; }
}

# Start a detached container with raw global options; the container keeps stdio
# open, so its output goes to a file.
raw_detached() {
	local log=$BATS_TEST_TMPDIR/detached.$RANDOM
	set +e
	"$SBX_OCI" "$@" </dev/null >"$log" 2>&1
	status=$?
	set -e
	output=$(cat "$log")
	[ "$status" -eq 0 ] || { echo "sbx-oci $* failed with status $status: $output" >&2; return 1; }
}

# The pid of a container from `state`.
container_pid() {
	"$SBX_OCI" --root "$SBX_ROOT" state "$1" | jq -r .pid
}

RFC3339='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$'

# ------------------------------------------------------------ version, help

@test "cli: --version prints 'sbx-oci version X.Y.Z' first, and the spec version" {
	for opt in --version -v; do
		raw_split "$opt"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$(head -n 1 <<<"$stdout")" =~ ^sbx-oci\ version\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
		grep -qx 'spec: 1.3.0' <<<"$stdout"
	done
}

@test "cli: --help and -h print Usage and every command on stdout, exit 0" {
	for opt in --help -h; do
		raw_split "$opt"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$(head -n 1 <<<"$stdout")" == "Usage: sbx-oci "* ]]
		for cmd in $COMMANDS; do
			grep -qE "^  $cmd " <<<"$stdout" || { echo "--help does not list $cmd" >&2; return 1; }
		done
	done
}

@test "cli: COMMAND --help and COMMAND -h exit 0 with Usage for every command, and do nothing else" {
	cd "$BATS_TEST_TMPDIR"
	for cmd in $COMMANDS; do
		for opt in --help -h; do
			raw_split --root "$SBX_ROOT" "$cmd" "$opt"
			[ "$status" -eq 0 ] || { echo "$cmd $opt: status $status: $stderr" >&2; return 1; }
			[[ "$(head -n 1 <<<"$stdout")" == "Usage: sbx-oci $cmd"* ]] || { echo "$cmd $opt: $stdout" >&2; return 1; }
			grep -q -- '--help' <<<"$stdout"
			[ -z "$stderr" ]
		done
	done
	# `spec --help` wrote no config.json, `run --help` created no container
	[ ! -e "$BATS_TEST_TMPDIR/config.json" ]
	[ ! -d "$SBX_ROOT" ] || [ -z "$(ls -A "$SBX_ROOT")" ]
}

@test "cli: --help of create, run, kill, delete, list and spec lists their options" {
	raw_split create --help
	for o in --bundle --pid-file --console-socket --preserve-fds --no-pivot --no-new-keyring --config; do
		grep -q -- "$o" <<<"$stdout" || { echo "create --help lacks $o" >&2; return 1; }
	done
	raw_split run --help
	for o in --bundle --detach --keep --pid-file; do grep -q -- "$o" <<<"$stdout"; done
	raw_split kill --help
	grep -q -- --all <<<"$stdout"
	raw_split delete --help
	grep -q -- --force <<<"$stdout"
	raw_split list --help
	grep -q -- --format <<<"$stdout"
	grep -q -- --quiet <<<"$stdout"
	raw_split spec --help
	for o in --bundle --file --rootless; do grep -q -- "$o" <<<"$stdout"; done
}

@test "cli: no command at all is a usage error (exit 2, usage on stderr)" {
	raw_split
	[ "$status" -eq 2 ]
	[ -z "$stdout" ]
	grep -q '^Usage: sbx-oci' <<<"$stderr"
}

# ------------------------------------------------------------ usage errors

@test "cli: an unknown command exits 2 with one line naming it" {
	raw_split --root "$SBX_ROOT" frobnicate "$ID"
	assert_usage_error "frobnicate"
	[ -z "$stdout" ]
	[ ! -d "$SBX_ROOT" ] || [ -z "$(ls -A "$SBX_ROOT")" ]
}

@test "cli: an unknown global option exits 2 with one line naming it" {
	raw_split --frobnicate list
	assert_usage_error "--frobnicate"
	raw_split --frobnicate=1 list
	assert_usage_error "--frobnicate"
	raw_split -Z list
	assert_usage_error "-Z"
}

@test "cli: an unknown option of every command exits 2 with one line naming it" {
	for cmd in $COMMANDS; do
		raw_split --root "$SBX_ROOT" "$cmd" --no-such-option "$ID"
		assert_usage_error "--no-such-option" || { echo "($cmd)" >&2; return 1; }
		[ -z "$stdout" ]
	done
	assert_no_state "$ID"
}

@test "cli: an unknown short option of a command exits 2 with one line naming it" {
	raw_split --root "$SBX_ROOT" create -Z --bundle "$BUNDLE" "$ID"
	assert_usage_error "-Z"
	assert_no_state "$ID"
}

@test "cli: an option missing its argument exits 2 with one line" {
	raw_split --root
	assert_usage_error "--root"
	raw_split --root "$SBX_ROOT" create "$ID" --bundle
	assert_usage_error "--bundle"
	assert_no_state "$ID"
}

@test "cli: bad values of --log-format, --cgroup-manager, --rootless and --root are usage errors" {
	raw_split --log-format yaml list
	assert_usage_error "yaml"
	raw_split --cgroup-manager bogus list
	assert_usage_error "bogus"
	raw_split --rootless=maybe list
	assert_usage_error "maybe"
	raw_split --root= list
	assert_usage_error "--root"
}

@test "cli: create with no id or two ids is a usage error" {
	sbx_split create --bundle "$BUNDLE"
	assert_usage_error "create"
	sbx_split create --bundle "$BUNDLE" "$ID" "$ID-2"
	assert_usage_error "create"
	assert_no_state "$ID"
	assert_no_state "$ID-2"
}

# -------------------------------------------------------------- global options

@test "cli: --root=DIR and --root DIR both select the state root" {
	local other=$BATS_TEST_TMPDIR/other-root
	set_args sleep 100
	raw_detached --root="$SBX_ROOT" run -d --bundle "$BUNDLE" "$ID-eq"
	raw_detached --root "$SBX_ROOT" run -d --bundle "$BUNDLE" "$ID-sp"
	[ -f "$SBX_ROOT/$ID-eq/state.json" ]
	[ -f "$SBX_ROOT/$ID-sp/state.json" ]
	[ ! -e "/run/sbx-oci/$ID-eq" ] && [ ! -e "/run/sbx-oci/$ID-sp" ]
	# each form finds both containers
	raw_split --root="$SBX_ROOT" state "$ID-sp"
	[ "$status" -eq 0 ]
	[ "$(jq -r .status <<<"$stdout")" = running ]
	raw_split --root "$SBX_ROOT" state "$ID-eq"
	[ "$status" -eq 0 ]
	[ "$(jq -r .status <<<"$stdout")" = running ]
	raw_split --root="$SBX_ROOT" list -q
	[ "$(sort <<<"$stdout")" = "$(printf '%s\n' "$ID-eq" "$ID-sp" | sort)" ]
	# another root does not see them
	raw_split --root="$other" state "$ID-eq"
	assert_one_line_error "does not exist"
	raw_split --root "$other" list -q
	[ -z "$stdout" ]
}

@test "cli: --root=DIR works for a foreground run, which leaves nothing in DIR" {
	set_args echo ran
	raw_split --root="$SBX_ROOT" run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
	[ -d "$SBX_ROOT" ]
	[ -z "$(ls -A "$SBX_ROOT")" ]
}

@test "cli: --log FILE --log-format json writes an error line with level, msg and an RFC3339 time" {
	local log=$BATS_TEST_TMPDIR/log.json
	raw_split --root "$SBX_ROOT" --log "$log" --log-format json state "$ID"
	assert_one_line_error "container $ID does not exist"
	[ -s "$log" ]
	# every line is one JSON object
	while IFS= read -r line; do
		jq -e 'type == "object"' <<<"$line" >/dev/null || { echo "not a JSON object: $line" >&2; return 1; }
	done <"$log"
	jq -e -s --arg id "$ID" --arg re "$RFC3339" '
		map(select(.level == "error")) | length == 1
		and (.[0].msg | type == "string" and contains("container " + $id + " does not exist"))
		and (.[0].time | type == "string" and test($re))' "$log"
	# the time is now (within a minute)
	local t now
	t=$(jq -r -s 'map(select(.level == "error"))[0].time | sub("\\.[0-9]+"; "") | fromdateiso8601' "$log")
	now=$(date +%s)
	[ $((now - t)) -lt 60 ] && [ $((t - now)) -lt 60 ]
}

@test "cli: --log=FILE --log-format=json (= form) appends a line per failing command" {
	local log=$BATS_TEST_TMPDIR/log.json
	raw_split --root="$SBX_ROOT" --log="$log" --log-format=json state "$ID"
	[ "$status" -ne 0 ]
	raw_split --root="$SBX_ROOT" --log="$log" --log-format=json kill "$ID"
	[ "$status" -ne 0 ]
	[ "$(wc -l <"$log")" -eq 2 ]
	jq -e -s 'length == 2 and all(.[]; .level == "error" and (.msg | length > 0) and (.time | length > 0))' "$log"
}

@test "cli: --log-format text writes level=error msg=\"...\" with a time" {
	local log=$BATS_TEST_TMPDIR/log.txt
	raw_split --root "$SBX_ROOT" --log "$log" --log-format text delete "$ID"
	assert_one_line_error "does not exist"
	[ "$(wc -l <"$log")" -eq 1 ]
	grep -E "^time=\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^\"]+\" level=error msg=\"[^\"]*container $ID does not exist[^\"]*\"$" "$log"
}

@test "cli: --log without --log-format writes text" {
	local log=$BATS_TEST_TMPDIR/log.txt
	raw_split --root "$SBX_ROOT" --log "$log" start "$ID"
	[ "$status" -ne 0 ]
	grep -q "level=error msg=\".*does not exist" "$log"
	! jq -e . "$log" >/dev/null 2>&1
}

@test "cli: --log-format json still logs an error whose message holds a non-UTF-8 byte" {
	# file names are bytes, not UTF-8: the error must reach the log as valid JSON
	local log=$BATS_TEST_TMPDIR/log.json
	raw_split --root "$SBX_ROOT" --log "$log" --log-format json run --bundle "$BATS_TEST_TMPDIR/no-bundle-"$'\xff' "$ID"
	assert_one_line_error "no-bundle-"
	[ -s "$log" ] || { echo "nothing was written to the log file; stderr said: $stderr" >&2; return 1; }
	jq -e -s 'length == 1 and .[0].level == "error" and (.[0].msg | contains("no-bundle-"))' "$log"
}

@test "cli: a successful command writes no error to the log" {
	local log=$BATS_TEST_TMPDIR/log.json
	set_args echo ran
	raw_split --root "$SBX_ROOT" --log "$log" --log-format json run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
	[ ! -s "$log" ] || ! jq -e -s 'any(.[]; .level == "error")' "$log"
}

@test "cli: --debug is accepted and does not change the container's output" {
	set_args echo ran
	raw_split --root "$SBX_ROOT" --debug run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
	assert_no_state "$ID"
}

@test "cli: --cgroup-manager cgroupfs puts the container in a cgroup named after it" {
	set_args sleep 100
	raw_detached --root "$SBX_ROOT" --cgroup-manager cgroupfs run -d --bundle "$BUNDLE" "$ID"
	local pid
	pid=$(container_pid "$ID")
	cat "/proc/$pid/cgroup"
	grep -qE ":/sbx-oci/$ID\$" "/proc/$pid/cgroup"
	sbx_ok delete --force "$ID"
}

@test "cli: --cgroup-manager=disabled runs the container without a cgroup of its own" {
	set_args sleep 100
	raw_detached --root "$SBX_ROOT" --cgroup-manager=disabled run -d --bundle "$BUNDLE" "$ID"
	local pid
	pid=$(container_pid "$ID")
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = running ]
	cat "/proc/$pid/cgroup"
	refute grep -q "$ID" "/proc/$pid/cgroup"
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$ID*" 2>/dev/null)" ]
	sbx_ok delete --force "$ID"
}

@test "cli: --cgroup-manager disabled: a foreground run works" {
	set_args echo ran
	raw_split --root "$SBX_ROOT" --cgroup-manager disabled run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$stdout" = ran ]
}

@test "cli: --systemd-cgroup where systemd is not running is refused, naming the flag, and leaves nothing" {
	# As runc does ("systemd not running on this host"): the cgroup would be written
	# behind no one's back, but a client that asked for systemd's would not get it.
	# tests/vm/systemd-check.sh drives the driver where systemd is PID 1.
	[ ! -d /run/systemd/system ] || skip "systemd runs here: tests/vm/systemd-check.sh covers it"
	update_config --arg id "$ID" '.linux.cgroupsPath = "system.slice:sbxtest:" + $id'
	set_args echo ran
	for how in "run -d" run create; do
		raw_split --root "$SBX_ROOT" --systemd-cgroup $how --bundle "$BUNDLE" "$ID"
		[ "$status" -ne 0 ]
		[[ "$stderr" == *"--systemd-cgroup: systemd is not running on this host"* ]]
		[ "$(wc -l <<<"$stderr")" -eq 1 ]
		[ ! -e "$SBX_ROOT/$ID" ]
	done
	raw_split --root "$SBX_ROOT" --cgroup-manager systemd run --bundle "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"systemd is not running"* ]]
	[ -z "$(find /sys/fs/cgroup -maxdepth 4 -name "sbxtest-$ID.scope" 2>/dev/null)" ]
}

@test "cli: --rootless, --rootless=true|false|auto are accepted" {
	set_args echo ran
	for opt in --rootless --rootless=true --rootless=false --rootless=auto; do
		raw_split --root "$SBX_ROOT" "$opt" run --bundle "$BUNDLE" "$ID"
		[ "$status" -eq 0 ] || { echo "$opt: status $status: $stderr" >&2; return 1; }
		[ "$stdout" = ran ]
	done
	assert_no_state "$ID"
}

@test "cli: options accept both --opt value and --opt=value (create --bundle= --pid-file=)" {
	set_args sleep 100
	raw_detached --root "$SBX_ROOT" create --bundle="$BUNDLE" --pid-file="$BATS_TEST_TMPDIR/pid" "$ID"
	[ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$(container_pid "$ID")" ]
	raw_split --root "$SBX_ROOT" list --format=json
	jq -e --arg id "$ID" 'length == 1 and .[0].id == $id and .[0].status == "created"' <<<"$stdout"
	raw_split --root "$SBX_ROOT" list --format json
	jq -e --arg id "$ID" '.[0].id == $id' <<<"$stdout"
}

# ---------------------------------------------------------------------- spec

@test "spec: writes config.json in the current directory, a valid OCI config" {
	local dir=$BATS_TEST_TMPDIR/specdir
	mkdir "$dir"
	cd "$dir"
	raw_split spec
	[ "$status" -eq 0 ]
	[ -z "$stdout" ]
	jq -e '.ociVersion == "1.3.0" and .root.path == "rootfs" and (.process.args | length > 0)
		and .process.cwd == "/" and (.linux.namespaces | map(.type) | index("mount") != null)' "$dir/config.json"
}

@test "spec: refuses to overwrite an existing config.json, which stays unchanged" {
	local dir=$BATS_TEST_TMPDIR/specdir
	mkdir "$dir"
	echo '{"marker": "keep me"}' >"$dir/config.json"
	cp "$dir/config.json" "$BATS_TEST_TMPDIR/before"
	cd "$dir"
	raw_split spec
	assert_one_line_error "already exists"
	cmp "$dir/config.json" "$BATS_TEST_TMPDIR/before"
	raw_split spec --bundle "$dir"
	assert_one_line_error "already exists"
	cmp "$dir/config.json" "$BATS_TEST_TMPDIR/before"
	raw_split spec -f "$dir/config.json"
	assert_one_line_error "already exists"
	cmp "$dir/config.json" "$BATS_TEST_TMPDIR/before"
}

@test "spec -b DIR writes DIR/config.json; -f FILE writes FILE" {
	local dir=$BATS_TEST_TMPDIR/specdir
	mkdir "$dir"
	raw_split spec -b "$dir"
	[ "$status" -eq 0 ]
	jq -e '.ociVersion == "1.3.0"' "$dir/config.json"
	raw_split spec --file="$dir/other.json"
	[ "$status" -eq 0 ]
	jq -e '.ociVersion == "1.3.0"' "$dir/other.json"
	cmp "$dir/config.json" "$dir/other.json"
}

@test "spec -f - prints valid JSON on stdout and writes no file" {
	local dir=$BATS_TEST_TMPDIR/specdir
	mkdir "$dir"
	cd "$dir"
	raw_split spec -f -
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	jq -e '.ociVersion == "1.3.0" and (.mounts | length > 0)' <<<"$stdout"
	[ -z "$(ls -A "$dir")" ]
	# the same document `spec` writes into a bundle
	(cd "$dir" && "$SBX_OCI" spec)
	[ "$(jq -S . "$dir/config.json")" = "$(jq -S . <<<"$stdout")" ]
}

@test "spec as root without --rootless has no user namespace" {
	requires root
	raw_split spec -f -
	jq -e '(.linux.namespaces | map(.type) | index("user")) == null and .linux.uidMappings == null' <<<"$stdout"
}

@test "spec --rootless -f -: user namespace, own uid/gid mapped, no gid=5" {
	raw_split spec --rootless -f -
	[ "$status" -eq 0 ]
	jq -e --argjson uid "$(id -u)" --argjson gid "$(id -g)" '
		(.linux.namespaces | map(.type) | index("user")) != null
		and (.linux.uidMappings | length >= 1) and .linux.uidMappings[0].hostID == $uid
		and (.linux.gidMappings | length >= 1) and .linux.gidMappings[0].hostID == $gid' <<<"$stdout"
	! grep -q 'gid=5' <<<"$stdout"
}

@test "spec --rootless as an unprivileged user maps that user's uid and gid" {
	requires root
	local out
	out=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$SBX_OCI" spec --rootless -f -)
	jq -e '(.linux.namespaces | map(.type) | index("user")) != null
		and .linux.uidMappings == [{"containerID": 0, "hostID": 65534, "size": 1}]
		and .linux.gidMappings == [{"containerID": 0, "hostID": 65534, "size": 1}]' <<<"$out"
	! grep -q 'gid=5' <<<"$out"
}

@test "spec --rootless: the generated config runs" {
	"$SBX_OCI" spec --rootless -f - | jq '.process.args = ["id", "-u"]' >"$BUNDLE/config.json"
	sbx_split run --bundle "$BUNDLE" "$ID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$stdout" = 0 ]
}

@test "spec with an argument is a usage error" {
	local dir=$BATS_TEST_TMPDIR/specdir
	mkdir "$dir"
	cd "$dir"
	raw_split spec extra
	assert_usage_error "spec"
	[ ! -e "$dir/config.json" ]
}

# ------------------------------------------------------------------ features

@test "features: JSON with the version range, hooks, namespaces, capabilities and mount options" {
	raw_split features
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	jq -e '
		.ociVersionMin == "1.0.0" and .ociVersionMax == "1.3.0"
		and (.hooks | sort) == (["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"] | sort)
		and (["pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time"] - .linux.namespaces) == []
		and (["CAP_CHOWN", "CAP_SYS_ADMIN"] - .linux.capabilities) == []
		and (["rbind", "rro", "nosymfollow"] - .mountOptions) == []' <<<"$stdout"
}

@test "features: has no duplicate entries and every capability is a CAP_ name" {
	raw_split features
	jq -e '(.hooks | length) == (.hooks | unique | length)
		and (.linux.namespaces | length) == (.linux.namespaces | unique | length)
		and (.mountOptions | length) == (.mountOptions | unique | length)
		and all(.linux.capabilities[]; startswith("CAP_"))' <<<"$stdout"
}

@test "features with an argument is a usage error" {
	raw_split features extra
	assert_usage_error "features"
	[ -z "$stdout" ]
}

# ------------------------------------------------------ checkpoint / restore

@test "checkpoint --help exits 0; checkpoint ID fails with one line 'not supported'" {
	raw_split checkpoint --help
	[ "$status" -eq 0 ]
	[[ "$stdout" == "Usage: sbx-oci checkpoint"* ]]
	set_args sleep 100
	sbx_detached run -d --bundle "$BUNDLE" "$ID"
	sbx_split checkpoint "$ID"
	assert_one_line_error "not supported"
	sbx_split checkpoint --image-path "$BATS_TEST_TMPDIR/img" --leave-running "$ID"
	assert_one_line_error "not supported"
	[ ! -e "$BATS_TEST_TMPDIR/img" ]
	# the container is untouched
	sbx_ok state "$ID"
	[ "$(jq -r .status <<<"$output")" = running ]
}

@test "restore --help exits 0; restore ID fails with one line 'not supported'" {
	raw_split restore --help
	[ "$status" -eq 0 ]
	[[ "$stdout" == "Usage: sbx-oci restore"* ]]
	sbx_split restore --bundle "$BUNDLE" "$ID"
	assert_one_line_error "not supported"
	assert_no_state "$ID"
}

# ---------------------------------------------------------------------- list

@test "list on an empty root prints only the header" {
	mkdir -p "$SBX_ROOT"
	sbx_split list
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(wc -l <<<"$stdout")" -eq 1 ]
	[[ "$stdout" =~ ^ID\ +PID\ +STATUS\ +BUNDLE\ +CREATED\ +OWNER\ *$ ]]
}

@test "list -q on an empty root prints nothing" {
	mkdir -p "$SBX_ROOT"
	sbx_split list -q
	[ "$status" -eq 0 ]
	[ -z "$stdout" ]
	[ -z "$stderr" ]
	sbx_split list --quiet
	[ "$status" -eq 0 ]
	[ -z "$stdout" ]
}

@test "list --format json on an empty root prints []" {
	mkdir -p "$SBX_ROOT"
	for opt in "--format json" "--format=json" "-f json"; do
		# shellcheck disable=SC2086
		sbx_split list $opt
		[ "$status" -eq 0 ]
		[ "$stdout" = "[]" ] || { echo "list $opt: $stdout" >&2; return 1; }
	done
}

@test "list on a state root that does not exist: header only, -q nothing, json []" {
	[ ! -e "$SBX_ROOT" ]
	sbx_split list
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$stdout")" -eq 1 ]
	[[ "$stdout" == ID* ]]
	sbx_split list -q
	[ "$status" -eq 0 ]
	[ -z "$stdout" ]
	sbx_split list --format json
	[ "$status" -eq 0 ]
	[ "$stdout" = "[]" ]
}

@test "list --format table is the default; a bad --format is a usage error" {
	mkdir -p "$SBX_ROOT"
	sbx_split list --format table
	[ "$status" -eq 0 ]
	[[ "$stdout" == ID* ]]
	sbx_split list --format yaml
	assert_usage_error "yaml"
}

@test "list shows a created container in the table, -q and json formats" {
	mkdir -p "$SBX_ROOT"
	set_args sleep 100
	sbx_detached create --bundle "$BUNDLE" "$ID"
	sbx_split list -q
	[ "$stdout" = "$ID" ]
	sbx_split list --format json
	jq -e --arg id "$ID" 'length == 1 and .[0].id == $id and .[0].status == "created" and (.[0].pid > 0)' <<<"$stdout"
	sbx_split list
	[ "$(wc -l <<<"$stdout")" -eq 2 ]
	[[ "$(sed -n 2p <<<"$stdout")" == "$ID "*created*"$BUNDLE"* ]]
}

@test "cli: make install puts sbx-oci (0755, never setuid), the seccomp profiles, the man pages and the completions under the prefix" {
	requires build-tree
	dest=$BATS_TEST_TMPDIR/dest
	run make -s -C "$SBX_BUILD_DIR" install DESTDIR="$dest" prefix=/usr/local
	[ "$status" -eq 0 ]
	for page in sbx-oci sbx-oci-python; do
		head -c 4096 "$dest/usr/local/share/man/man8/$page.8" | grep -q '^\.TH'
		# man -l renders it without a warning
		[ -z "$(MANWIDTH=80 man -l "$dest/usr/local/share/man/man8/$page.8" 2>&1 >/dev/null)" ]
	done
	cmp "$dest/usr/local/share/bash-completion/completions/sbx-oci" "$BATS_TEST_DIRNAME/../contrib/completion/sbx-oci.bash"
	cmp "$dest/usr/local/share/zsh/site-functions/_sbx-oci" "$BATS_TEST_DIRNAME/../contrib/completion/_sbx-oci"
	[ "$(stat -c %a "$dest/usr/local/bin/sbx-oci")" = 755 ]
	cmp "$dest/usr/local/share/sbx-oci/seccomp/python.json" "$BATS_TEST_DIRNAME/../config/seccomp/python.json"
	cmp "$dest/usr/local/share/sbx-oci/seccomp/default.json" "$BATS_TEST_DIRNAME/../config/seccomp/default.json"
	"$dest/usr/local/bin/sbx-oci" --version | head -1 | grep -q '^sbx-oci version '
}

@test "cli: uid 0 of a user namespace (rootless podman) keeps its state under \$XDG_RUNTIME_DIR, not the host's /run (as runc)" {
	local xdg=$BATS_TEST_TMPDIR/xdg log=$BATS_TEST_TMPDIR/strace.log
	mkdir -p "$xdg"
	requires strace
	# a foreground run: the state dir is claimed and removed again;
	# LeakSanitizer cannot run under ptrace (the ASan stage)
	set_args true
	XDG_RUNTIME_DIR=$xdg ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run unshare --user --map-root-user --mount \
		strace -f -e trace=mkdir,mkdirat -o "$log" "$SBX_OCI" run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	grep -q "\"$xdg/sbx-oci\"" "$log" || { cat "$log" >&2; false; }
	refute grep -q '"/run/sbx-oci"' "$log"
	# real root still uses /run/sbx-oci, whatever XDG_RUNTIME_DIR says
	XDG_RUNTIME_DIR=$xdg ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run strace -f -e trace=mkdir,mkdirat,open,openat -o "$log" "$SBX_OCI" list
	grep -q '"/run/sbx-oci"' "$log"
}

@test "cli: uid 0 of a user namespace (rootless podman) runs a container: no cgroup, the host's device nodes bound, limits refused" {
	local xdg=$BATS_TEST_TMPDIR/xdg
	mkdir -p "$xdg"
	set_args sh -c 'stat -c "%t:%T %F" /dev/null; echo x > /dev/null && echo null-ok; exit 5'
	# the host's root as uid 0 of a user namespace of its own: not the host's root
	XDG_RUNTIME_DIR=$xdg ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run unshare --user --map-root-user --mount \
		"$SBX_OCI" run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 5 ] || { echo "$output" >&2; false; }
	[ "${lines[0]}" = "1:3 character special file" ]
	[ "${lines[1]}" = null-ok ]
	# no cgroup was made for it on any hierarchy
	[ -z "$(find /sys/fs/cgroup -maxdepth 3 -type d -name "$ID")" ]
	[ ! -e "$xdg/sbx-oci/$ID" ]
	# a limit would be enforced by nothing: refused, naming the field
	update_config '.linux.resources = {"memory": {"limit": 33554432}}'
	XDG_RUNTIME_DIR=$xdg ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run unshare --user --map-root-user --mount \
		"$SBX_OCI" run --bundle "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ $output == *"linux.resources: cgroup limits were requested but this user cannot manage cgroups (not root in the host's user namespace"* ]]
	[ ! -e "$xdg/sbx-oci/$ID" ]
}
