#!/bin/bash
# matrix.sh LABEL TAP-UNDER-TEST TAP-REFERENCE: the same bats suite run with the runtime
# under test and with a reference (runc), side by side, one line per case. Fails when
# the reference passes a case that the runtime under test fails or skips: a client flow
# that works with runc must work with sbx-oci (issue 20). Cases only the reference fails
# are listed, not counted against us.
set -euo pipefail
label=$1 ours=$2 theirs=$3

# TAP "ok 3 name in 120ms # skip (why)" -> "name<TAB>pass|skip|fail"
results() {
	sed -nE 's/^(not )?ok [0-9]+ (.*)$/\1|\2/p' "$1" | while IFS='|' read -r neg rest; do
		name=${rest%% # skip*}
		name=$(sed -E 's/ in [0-9]+ms$//' <<<"$name")
		if [ -n "$neg" ]; then st=fail; elif [[ $rest == *" # skip"* ]]; then st=skip; else st=pass; fi
		printf '%s\t%s\n' "$name" "$st"
	done
}

declare -A mine ref
while IFS=$'\t' read -r n s; do mine[$n]=$s; done < <(results "$ours")
while IFS=$'\t' read -r n s; do ref[$n]=$s; done < <(results "$theirs")
[ ${#mine[@]} -gt 0 ] || { echo "matrix $label: no results in $ours" >&2; exit 1; }

bad=0 both=0 only_ref_fails=0
printf '=== matrix %s: %-6s %-6s case\n' "$label" ours ref
while IFS= read -r n; do
	m=${mine[$n]:-absent} r=${ref[$n]:-absent}
	mark=
	if [ "$r" = pass ] && [ "$m" != pass ]; then
		mark='  <-- runc passes, we do not'
		bad=$((bad + 1))
	elif [ "$m" = pass ] && [ "$r" = pass ]; then
		both=$((both + 1))
	elif [ "$m" = pass ]; then
		only_ref_fails=$((only_ref_fails + 1))
	fi
	printf '%-6s %-6s %s%s\n' "$m" "$r" "$n" "$mark"
done < <(printf '%s\n' "${!mine[@]}" "${!ref[@]}" | sort -u)
echo "matrix $label: ${#mine[@]} cases; both pass $both; only the reference fails $only_ref_fails; reference passes and we do not: $bad"
[ "$bad" = 0 ]
