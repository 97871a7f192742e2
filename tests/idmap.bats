#!/usr/bin/env bats
# Idmapped bind mounts (config.md "idmap"/"ridmap", mounts[].uidMappings).

load helpers

setup_idmap_dir() {
	IDM=$BATS_TEST_TMPDIR/idm
	mkdir -p "$IDM"
	echo data >"$IDM/owned-by-host-root"
	chown 0:0 "$IDM" "$IDM/owned-by-host-root"
	chmod 755 "$IDM"
}

@test "idmap: with the container's user namespace, host root's files are the container root's" {
	requires userns
	use_userns
	setup_idmap_dir
	update_config --arg s "$IDM" '.mounts += [{"destination":"/work","type":"bind","source":$s,"options":["rbind","idmap"]}]'
	set_args sh -c 'stat -c "%u:%g" /work/owned-by-host-root; touch /work/made-inside; grep " /work " /proc/self/mountinfo'
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "0:0" ]
	[[ "${lines[1]}" == *idmapped* ]]
	# written by container root (host uid 100000), stored as host uid 0 through the idmap
	[ "$(stat -c %u "$IDM/made-inside")" = 0 ]
}

@test "idmap: a mount's own uidMappings/gidMappings apply" {
	requires userns
	use_userns
	setup_idmap_dir
	update_config --arg s "$IDM" '.mounts += [{"destination":"/work","type":"bind","source":$s,"options":["rbind","idmap"],
		"uidMappings":[{"containerID":0,"hostID":100005,"size":1}],"gidMappings":[{"containerID":0,"hostID":100007,"size":1}]}]'
	set_args stat -c "%u:%g" /work/owned-by-host-root
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# as in runc and crun, the mappings are a user namespace's: on-disk (containerID) 0
	# is seen through the mount as host 100005/100007, which the container's userns shows as 5:7
	[ "$output" = "5:7" ]
}

@test "idmap: a mount's uidMappings without the idmap option still make an idmapped mount (as crun; config.md: SHOULD give the option)" {
	requires userns
	use_userns
	setup_idmap_dir
	update_config --arg s "$IDM" '.mounts += [{"destination":"/work","type":"bind","source":$s,"options":["rbind"],
		"uidMappings":[{"containerID":0,"hostID":100005,"size":1}],"gidMappings":[{"containerID":0,"hostID":100007,"size":1}]}]'
	set_args stat -c "%u:%g" /work/owned-by-host-root
	sbx run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "5:7" ]
}

@test "idmap: without a user namespace or mappings the config is refused" {
	setup_idmap_dir
	update_config --arg s "$IDM" '.mounts += [{"destination":"/work","type":"bind","source":$s,"options":["rbind","idmap"]}]'
	sbx_split run --bundle "$BUNDLE" "$ID"
	assert_one_line_error "idmap"
	assert_no_state "$ID"
}

@test "idmap: crun's idmap=uids=...;gids=... option syntax is refused naming the option, never dropped as a data option" {
	requires userns
	use_userns
	setup_idmap_dir
	for o in "idmap=uids=0-1-10;gids=0-1-10" "ridmap=uids=0-1-10"; do
		update_config --arg s "$IDM" --arg o "$o" '.mounts = [.mounts[] | select(.destination != "/work")] + [{"destination":"/work","type":"bind","source":$s,"options":["rbind",$o]}]'
		sbx_split run --bundle "$BUNDLE" "$ID"
		assert_one_line_error "options[1]: '$o' is crun's mapping syntax"
		assert_no_state "$ID"
	done
}
