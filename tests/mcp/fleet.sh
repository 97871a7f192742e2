#!/bin/bash
# Three nodes on one machine (issue 42): three network namespaces of this test's own
# (veth pairs, 10.231.N.0/24), each with an sbx-oci-mcp --http (and the sbx-oci serve it
# starts), and Debian's nginx in front with contrib/mcp/fleet/nginx.conf as it is (its
# pid and temp paths moved into a scratch dir). contrib/mcp/fleet/agents.js: 30 agents
# each hold a session and run cells; node n2 is killed (its whole process group): its
# sessions get a clear MCP error, the others keep their state, new sessions go to n1
# and n3; n2 comes back and takes new sessions. Run by tests/mcp/run.sh.
#   SBX_OCI=path (required)   FLEET_AGENTS=30
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mcp=$(cd "$here/../../contrib/mcp" && pwd)
: "${SBX_OCI:?}"
n_agents=${FLEET_AGENTS:-30}
scratch=$(mktemp -d /tmp/sbx-fleet.XXXXXX)
chmod 711 "$scratch" # nginx's workers (nobody) reach their temp dirs in it
token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf '%s\n' "$token" >"$scratch/tokens"
chmod 600 "$scratch/tokens"
command -v ip >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
declare -A node_pid
nginx_pid=

# nginx from Debian's package, unpacked (installing it would start a system nginx)
nginx_bin() {
	local cache=${SBX_CACHE:-/var/cache/sbx-oci}/nginx
	if [ ! -x "$cache/usr/sbin/nginx" ]; then
		mkdir -p "$cache"
		(cd "$scratch" && apt-get download -q nginx >/dev/null && dpkg -x nginx_*.deb "$cache")
	fi
	echo "$cache/usr/sbin/nginx"
}

cleanup() {
	set +e
	for n in "${!node_pid[@]}"; do kill -TERM -- "-${node_pid[$n]}" 2>/dev/null; done
	[ -z "$nginx_pid" ] || kill -TERM "$nginx_pid" 2>/dev/null
	for n in "${!node_pid[@]}"; do
		for _ in $(seq 100); do kill -0 -- "-${node_pid[$n]}" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-${node_pid[$n]}" 2>/dev/null
	done
	for i in 1 2 3; do
		ip link del "sbxfl$i" 2>/dev/null
		ip netns del "sbxfleet-n$i" 2>/dev/null
	done
	[ -n "${FLEET_KEEP:-}" ] || rm -rf "$scratch"
}
trap cleanup EXIT

for i in 1 2 3; do
	ip netns del "sbxfleet-n$i" 2>/dev/null || true
	ip link del "sbxfl$i" 2>/dev/null || true
	ip netns add "sbxfleet-n$i"
	ip link add "sbxfl$i" type veth peer name eth0 netns "sbxfleet-n$i"
	ip addr add "10.231.$i.1/24" dev "sbxfl$i"
	ip link set "sbxfl$i" up
	ip -n "sbxfleet-n$i" addr add "10.231.$i.2/24" dev eth0
	ip -n "sbxfleet-n$i" link set eth0 up
	ip -n "sbxfleet-n$i" link set lo up
done

# node I: sbx-oci-mcp in its network namespace only (ip netns exec would also remount
# /sys, hiding the cgroups its serve needs), in a process group of its own
start_node() {
	local i=$1 log=$scratch/n$1.log
	: >"$log"
	setsid nsenter --net="/run/netns/sbxfleet-n$i" node "$mcp/server.js" --sbx-oci "$SBX_OCI" --timeout 30 \
		--http "10.231.$i.2:8808" --token-file "$scratch/tokens" --node-id "n$i" >/dev/null 2>"$log" &
	node_pid[n$i]=$!
	disown "$!" # its kill below is the test, not news
	for _ in $(seq 300); do
		grep -q "listening on" "$log" && return 0
		kill -0 "${node_pid[n$i]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "fleet: node n$i did not start: $(cat "$log")" >&2
	return 1
}
for i in 1 2 3; do start_node "$i"; done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
t=$scratch/nginx
mkdir -p "$t"
sed -e "s|^pid .*|pid $scratch/nginx/nginx.pid;|" -e "s|listen 127.0.0.1:8800;|listen 127.0.0.1:$port;|" \
	-e "s|^http {|http {\n    client_body_temp_path $t/body; proxy_temp_path $t/proxy; fastcgi_temp_path $t/fcgi; uwsgi_temp_path $t/uwsgi; scgi_temp_path $t/scgi;|" \
	"$mcp/fleet/nginx.conf" >"$scratch/nginx.conf"
"$(nginx_bin)" -p "$scratch/nginx" -e stderr -c "$scratch/nginx.conf" -g 'daemon off;' 2>"$scratch/nginx.log" &
nginx_pid=$!
up=
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && up=1 && break
	kill -0 "$nginx_pid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$up" ] || { echo "fleet: nginx did not start: $(cat "$scratch/nginx.log")" >&2 && exit 1; }

coproc AG { SBX_OCI_MCP_TOKEN=$token exec node "$mcp/fleet/agents.js" "http://127.0.0.1:$port/mcp" "$n_agents" 2>&1; }
agents_pid=$AG_PID
expect() {
	local line
	read -r -t 300 line <&"${AG[0]}" || { echo "fleet: the agents said nothing (expected $1)" >&2 && return 1; }
	echo "fleet: $line"
	[[ $line == "$1"* ]] || { echo "fleet: expected $1 ($scratch/n*.log)" >&2 && tail -n 5 "$scratch"/n*.log "$scratch/nginx.log" >&2 && return 1; }
}
expect READY
# node n2 lost: its MCP server, its serve and its sandboxes, all at once
kill -KILL -- "-${node_pid[n2]}"
for _ in $(seq 100); do kill -0 -- "-${node_pid[n2]}" 2>/dev/null || break; sleep 0.1; done
echo "lost n2" >&"${AG[1]}"
expect LOST-OK
start_node 2
echo "back n2" >&"${AG[1]}"
expect BACK-OK
wait "$agents_pid" || { echo "fleet: the agents failed" >&2 && exit 1; }
grep -q "session n2\..* started" "$scratch/n2.log" || { echo "fleet: node n2 took no session once back" >&2 && exit 1; }
echo "fleet: $n_agents agents on three nodes behind nginx: a lost node ended only its sessions, and came back"
