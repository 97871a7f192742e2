#!/bin/bash
# phase.sh RUNTIME ID BUNDLE none|created|stopped: puts container ID in a state, for
# scenarios.sh phases (a hyperfine --prepare, not timed).
source "$(dirname "$0")/lib.sh"
r=$1 id=$2 bundle=$3
read -ra c <<<"$(rt "$r")"
c=("${c[@]:1}") # no idexec: the id is fixed
err=$W/phase.err
# The created init keeps the stdio it was given: never hand it hyperfine's pipes, or
# hyperfine would wait for it. Errors go to a file and are shown on failure.
create() {
	"${c[@]}" create --bundle "$bundle" "$id" </dev/null >/dev/null 2>"$err" ||
		{ cat "$err" >&2 && exit 1; }
}
"${c[@]}" delete -f "$id" >/dev/null 2>&1 || true
case $4 in
none) ;;
created) create ;;
stopped)
	create
	"${c[@]}" start "$id"
	for _ in $(seq 500); do
		"${c[@]}" state "$id" | grep -q '"status": *"stopped"' && exit 0
		sleep 0.01
	done
	echo "phase.sh: $r container $id did not stop" >&2
	exit 1
	;;
esac
