# bash completion for sbx-oci                                  -*- shell-script -*-
#
# Install as /usr/share/bash-completion/completions/sbx-oci, or source it. It needs
# nothing from the bash-completion package.
#
# The option tables are data, one array per command, so that tests/packaging.bats
# can compare them with `sbx-oci COMMAND --help` (and _sbx-oci, the zsh completion,
# has the same tables with descriptions). Each entry is 'NAMES|VALUE': the option's
# spellings, and what its value completes to:
#   (empty)                 the option takes no value
#   dir, file               a directory, a file
#   value                   a value with nothing to complete
#   words:A,B               one of these words
#   optional-words:A,B      an optional value, given only as --opt=A

_sbx_oci_commands=(create start run exec state kill delete list ps pause resume update
	events spec features checkpoint restore python bundle check serve)

# the commands whose first argument is an existing container's id
_sbx_oci_id_commands=(start exec state kill delete ps pause resume update events
	checkpoint restore)

# kill's SIGNAL (a name with or without SIG, RTMIN+N, or a number)
_sbx_oci_signals=(HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM
	STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS RTMIN
	RTMAX)

# the commands whose options end at their first argument (it starts the command line
# of a program, or the signal follows it)
_sbx_oci_options_first=(exec kill ps python bundle)

_sbx_oci_opts_global=(
	'--root|dir'
	'--log|file'
	'--log-format|words:text,json'
	'--debug|'
	'--systemd-cgroup|'
	'--cgroup-manager|words:cgroupfs,systemd,disabled'
	'--rootless|optional-words:true,false,auto'
	'-v --version|'
	'-h --help|'
)

_sbx_oci_opts_create=(
	'-b --bundle|dir'
	'-f --config|file'
	'--pid-file|file'
	'--console-socket|file'
	'--preserve-fds|value'
	'--no-pivot|'
	'--no-new-keyring|'
	'-h --help|'
)

_sbx_oci_opts_start=(
	'-h --help|'
)

_sbx_oci_opts_run=(
	'-b --bundle|dir'
	'-f --config|file'
	'--pid-file|file'
	'--console-socket|file'
	'--preserve-fds|value'
	'--no-pivot|'
	'--no-new-keyring|'
	'-d --detach|'
	'--keep|'
	'-h --help|'
)

_sbx_oci_opts_exec=(
	'-p --process|file'
	'--cwd|value'
	'-e --env|value'
	'-u --user|value'
	'-g --additional-gids|value'
	'-c --cap|value'
	'--no-new-privs|'
	'-t --tty|'
	'--console-socket|file'
	'-d --detach|'
	'--pid-file|file'
	'--preserve-fds|value'
	'--process-label|value'
	'--apparmor|value'
	'--ignore-paused|'
	'--cgroup|value'
	'-h --help|'
)

_sbx_oci_opts_state=(
	'-h --help|'
)

_sbx_oci_opts_kill=(
	'-a --all|'
	'-h --help|'
)

_sbx_oci_opts_delete=(
	'-f --force|'
	'-r --regex|value'
	'-h --help|'
)

_sbx_oci_opts_list=(
	'-f --format|words:table,json'
	'-q --quiet|'
	'-h --help|'
)

_sbx_oci_opts_ps=(
	'-f --format|words:table,json'
	'-h --help|'
)

_sbx_oci_opts_pause=(
	'-h --help|'
)

_sbx_oci_opts_resume=(
	'-h --help|'
)

_sbx_oci_opts_update=(
	'-r --resources|file'
	'-m --memory|value'
	'--memory-reservation|value'
	'--memory-swap|value'
	'--cpu-share|value'
	'--cpu-quota|value'
	'--cpu-period|value'
	'--cpu-rt-period|value'
	'--cpu-rt-runtime|value'
	'--cpuset-cpus|value'
	'--cpuset-mems|value'
	'--pids-limit|value'
	'--blkio-weight|value'
	'-h --help|'
)

_sbx_oci_opts_events=(
	'--stats|'
	'--interval|value'
	'-h --help|'
)

_sbx_oci_opts_spec=(
	'-b --bundle|dir'
	'-f --file|file'
	'--rootless|'
	'-h --help|'
)

_sbx_oci_opts_features=(
	'-h --help|'
)

_sbx_oci_opts_checkpoint=(
	'--image-path|dir'
	'--work-path|dir'
	'--leave-running|'
	'-h --help|'
)

_sbx_oci_opts_restore=(
	'--image-path|dir'
	'--work-path|dir'
	'--leave-running|'
	'-h --help|'
)

# -c and -m start the program part of the command line (its Usage line names them)
_sbx_oci_opts_python=(
	'--python|file'
	'--rootfs|dir'
	'--workdir|dir'
	'--memory|value'
	'--cpu-time|value'
	'--pids|value'
	'--nofile|value'
	'--fsize|value'
	'--tmp-size|value'
	'--network|words:none,loopback,full'
	'--timeout|value'
	'--env|value'
	'--ro|file'
	'--rw|file'
	'--allow-degraded|'
	'--host-id|value'
	'--max-output|value'
	'--result|file'
	'--id|value'
	'--die-with-parent|'
	'--no-subprocess|'
	'--connect|file'
	'--session|value'
	'--end-session|'
	'--show-value|'
	'--put-file|value'
	'--get-file|value'
	'--list-files|value'
	'--remove-file|value'
	'-c|value'
	'-m|value'
	'-h --help|'
)

_sbx_oci_opts_bundle=(
	'--python|dir'
	'--interpreter|file'
	'--rootfs|dir'
	'--workdir|dir'
	'--memory|value'
	'--cpu-time|value'
	'--pids|value'
	'--nofile|value'
	'--fsize|value'
	'--tmp-size|value'
	'--network|words:none,loopback,full'
	'--timeout|value'
	'--env|value'
	'--ro|file'
	'--rw|file'
	'--allow-degraded|'
	'--host-id|value'
	'-h --help|'
)

_sbx_oci_opts_check=(
	'--python|file'
	'--allow-degraded|'
	'--no-subprocess|'
	'-h --help|'
)

# the server takes no argument: each program comes with a `python --connect`
_sbx_oci_opts_serve=(
	'--socket|file'
	'--preload|value'
	'--max-runs|value'
	'--queue|value'
	'--recycle|value'
	'--standby|value'
	'--session-idle|value'
	'--max-sessions|value'
	'--python|file'
	'--workdir|dir'
	'--rootfs|dir'
	'--memory|value'
	'--cpu-time|value'
	'--pids|value'
	'--nofile|value'
	'--fsize|value'
	'--tmp-size|value'
	'--network|words:none,loopback,full'
	'--env|value'
	'--ro|file'
	'--rw|file'
	'--host-id|value'
	'--timeout|value'
	'--allow-degraded|'
	'--max-output|value'
	'-h --help|'
)

# The VALUE of option $2 in table $1 ("global" or a command), on stdout; fails when
# the table has no such option.
_sbx_oci_value_of() {
	local table="_sbx_oci_opts_$1[@]" entry name
	for entry in "${!table}"; do
		for name in ${entry%%|*}; do
			if [[ $name == "$2" ]]; then
				printf '%s\n' "${entry#*|}"
				return 0
			fi
		done
	done
	return 1
}

# Whether word $2 is an option of table $1 whose value is the next word.
_sbx_oci_takes_next() {
	local v
	[[ $2 == -* && $2 != *=* ]] || return 1
	v=$(_sbx_oci_value_of "$1" "$2") || return 1
	[[ -n $v && $v != optional-words:* ]]
}

_sbx_oci_in() {
	local w
	for w in "${@:2}"; do [[ $w == "$1" ]] && return 0; done
	return 1
}

# Complete a value of kind $1, the text to replace being $2.
_sbx_oci_complete_value() {
	case $1 in
	dir)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$2")
		;;
	file)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$2")
		;;
	words:* | optional-words:*)
		local list=${1#*:}
		mapfile -t COMPREPLY < <(compgen -W "${list//,/ }" -- "$2")
		;;
	*) COMPREPLY=() ;;
	esac
}

_sbx_oci_complete_options() {
	local table="_sbx_oci_opts_$1[@]" entry names=() spellings
	for entry in "${!table}"; do
		read -ra spellings <<<"${entry%%|*}"
		names+=("${spellings[@]}")
	done
	mapfile -t COMPREPLY < <(compgen -W "${names[*]}" -- "$2")
}

# The ids of the containers in the state root that the line names (--root), else in
# the default one. The line's own binary is asked, so that a build tree's ./sbx-oci
# completes from where it keeps its state.
_sbx_oci_complete_ids() {
	local root=() i ids
	for ((i = 1; i < cmd_at; i++)); do
		case ${words[i]} in
		--root=?*) root=(--root "${words[i]#--root=}") ;;
		--root) ((i + 1 < cmd_at)) && root=(--root "${words[i + 1]}") ;;
		esac
	done
	ids=$(command "${words[0]}" "${root[@]}" list -q 2>/dev/null)
	mapfile -t COMPREPLY < <(compgen -W "$ids" -- "$1")
}

_sbx_oci() {
	local words=() cword=0 i w
	# readline splits "--opt=value", "KEY=VALUE" and "PATH:DEST" at '=' and ':': join
	# them again, so that each option and each value is one word
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if ((i > 1)) && [[ $w == [=:] || ${COMP_WORDS[i - 1]} == [=:] ]]; then
			words[-1]+=$w
		else
			words+=("$w")
		fi
		((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
	done
	local cur=${words[cword]}
	# what readline replaces: the text after the last '=' or ':'
	local text=${COMP_WORDS[COMP_CWORD]}
	[[ $text == [=:] ]] && text=
	COMPREPLY=()

	# the command: the first word after the global options and their values
	local cmd='' cmd_at=$cword
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if _sbx_oci_takes_next global "$w"; then
			((i++))
		elif [[ $w != -* ]]; then
			cmd=$w cmd_at=$i
			break
		fi
	done

	local table=global
	[[ -n $cmd ]] && table=$cmd
	if [[ -n $cmd ]] && ! _sbx_oci_in "$cmd" "${_sbx_oci_commands[@]}"; then
		return 0
	fi

	# the words between the command and the cursor: options, their values, arguments
	local nargs=0 program=0 start=$((cmd_at + 1))
	[[ -z $cmd ]] && start=1
	for ((i = start; i < cword; i++)); do
		w=${words[i]}
		if ((program)); then
			((nargs++))
			continue
		fi
		case $cmd:$w in
		python:-c | python:-m)
			# the code or module, then the program's own arguments
			program=1
			((i++))
			continue
			;;
		python:- | python:-- | bundle:--)
			program=1
			continue
			;;
		esac
		if ((nargs > 0)) && _sbx_oci_in "$cmd" "${_sbx_oci_options_first[@]}"; then
			((nargs++))
		elif _sbx_oci_takes_next "$table" "$w"; then
			((i++))
		elif [[ $w != -* ]]; then
			((nargs++))
			[[ $cmd == python ]] && program=1
		fi
	done

	# the value of an option
	local prev=${words[cword - 1]}
	if ((cword > 1 && !program)) && _sbx_oci_takes_next "$table" "$prev" &&
		! { ((nargs > 0)) && _sbx_oci_in "$cmd" "${_sbx_oci_options_first[@]}"; }; then
		_sbx_oci_complete_value "$(_sbx_oci_value_of "$table" "$prev")" "$text"
		return 0
	fi
	if ((!program)) && [[ $cur == --*=* ]]; then
		local v
		v=$(_sbx_oci_value_of "$table" "${cur%%=*}") && _sbx_oci_complete_value "$v" "$text"
		return 0
	fi

	if ((program)); then
		# the program's arguments are its own business; a script is a file
		[[ $cmd == python && $prev != -[cm] ]] && _sbx_oci_complete_value file "$text"
		return 0
	fi
	if [[ $cur == -* ]]; then
		if ! { ((nargs > 0)) && _sbx_oci_in "$cmd" "${_sbx_oci_options_first[@]}"; }; then
			_sbx_oci_complete_options "$table" "$cur"
		fi
		return 0
	fi
	if [[ -z $cmd ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${_sbx_oci_commands[*]}" -- "$cur")
		return 0
	fi
	case $cmd in
	python) ((nargs == 0)) && _sbx_oci_complete_value file "$text" ;;
	run) ((nargs == 0)) && _sbx_oci_complete_value dir "$text" ;;
	kill)
		if ((nargs == 0)); then
			_sbx_oci_complete_ids "$cur"
		elif ((nargs == 1)); then
			mapfile -t COMPREPLY < <(compgen -W "${_sbx_oci_signals[*]}" -- "${cur#SIG}")
		fi
		;;
	*)
		if ((nargs == 0)) && _sbx_oci_in "$cmd" "${_sbx_oci_id_commands[@]}"; then
			_sbx_oci_complete_ids "$cur"
		fi
		;;
	esac
	return 0
}

complete -F _sbx_oci sbx-oci
