#!/bin/bash
# Issue 42's load rows: contrib/mcp/bench/http-load.js against one node (the HTTP MCP
# server and an `sbx-oci serve --max-runs 8` of this bench), beside the CLI's warm
# print(1) to the same serve: results/mcp-http.tsv. Needs node and npm (Debian's),
# and runs `npm ci` in contrib/mcp when its packages are not there.
source "$(dirname "$0")/lib.sh"
mcp=$BENCH_SRC/../../contrib/mcp
command -v node >/dev/null && command -v npm >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
[ -d "$mcp/node_modules/@modelcontextprotocol/sdk" ] || (cd "$mcp" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
SOCK=$W/mcp-http.sock
LOG=$RESULTS/mcp-http-serve.log
rm -f "$SOCK"
"${SBX[@]}" serve --socket "$SOCK" --max-runs 8 --memory 2048M --network loopback >"$LOG" 2>&1 &
server=$!
trap 'kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 600); do
	grep -q "listening on" "$LOG" && break
	kill -0 "$server" 2>/dev/null || { cat "$LOG" >&2 && exit 1; }
	sleep 0.1
done
echo "=== mcp-http ==="
node "$mcp/bench/http-load.js" "$SOCK" "$SBX_OCI" "$RESULTS/mcp-http.tsv"
