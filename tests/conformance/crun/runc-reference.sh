#!/bin/bash
# runc-reference.sh RUNC ARGS...: runs runc with the command line crun's suite writes
# for crun, translated where runc has the same feature under another spelling, so that
# runc's points measure runc rather than its option parser:
#   --cgroup-manager cgroupfs   (global) dropped: runc's only non-systemd manager
#   --cgroup-manager systemd    (global) --systemd-cgroup
#   run/create --config FILE    dropped when FILE is the bundle's config.json (the
#                               suite runs from the bundle); any other FILE is kept,
#                               and runc refuses it, as it has no such option
# Everything else goes through unchanged.
set -euo pipefail
runc=$1
shift
args=()
cmd=
while [ $# -gt 0 ]; do
	a=$1
	shift
	if [ -z "$cmd" ]; then
		case $a in
		--cgroup-manager | --cgroup-manager=*)
			v=${a#--cgroup-manager}
			v=${v#=}
			if [ -z "$v" ]; then
				v=${1:-}
				shift
			fi
			[ "$v" = systemd ] && args+=(--systemd-cgroup)
			continue
			;;
		--root | --log | --log-format | --criu | --rootless)
			args+=("$a" "${1:-}")
			shift
			continue
			;;
		-*) ;;
		*) cmd=$a ;;
		esac
	elif [ "$cmd" = run ] || [ "$cmd" = create ]; then
		case $a in
		--config | --config=*)
			v=${a#--config}
			v=${v#=}
			if [ -z "$v" ]; then
				v=${1:-}
				shift
			fi
			if [ "$(realpath -m "$v")" = "$(realpath -m config.json)" ]; then
				continue
			fi
			args+=(--config "$v")
			continue
			;;
		esac
	fi
	args+=("$a")
done
exec "$runc" "${args[@]}"
