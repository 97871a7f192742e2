#!/bin/bash
# The mcp stage of `make check` (issue 32): contrib/mcp's MCP server, driven by real
# MCP clients against the built binary:
#   - the official SDK's Client over stdio (StdioClientTransport): contrib/mcp/test/
#     (initialize, tools/list, every tool, bad input, a killed server, the timing);
#   - the same Client over Streamable HTTP (StreamableHTTPClientTransport, issue 42):
#     contrib/mcp/test/http.test.js (tokens, sessions per MCP session, DELETE, idle
#     expiry, busy answers, bad and slow requests, TLS);
#   - tests/mcp/fleet.sh: three nodes in network namespaces behind Debian's nginx with
#     contrib/mcp/fleet/nginx.conf, 30 agents holding sessions, a node lost and back;
#   - the MCP Inspector's CLI mode (npm's @modelcontextprotocol/inspector, no browser):
#     tools/list and a tools/call, as a user would check a server by hand.
# Node 20 and the packages come from Debian's nodejs/npm and the npm registry
# (`npm ci` from contrib/mcp/package-lock.json; npm's cache keeps them between runs).
#   SBX_OCI=path   the runtime under test (default: the checkout's ./sbx-oci)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export SBX_OCI=${SBX_OCI:-$repo/sbx-oci}
SBX_OCI=$(realpath "$SBX_OCI")
[ "$(id -u)" = 0 ] || { echo "mcp: needs root (the sandboxes' cgroups)" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
}
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "mcp: Node $(node --version) is too old (18 or later)" >&2; exit 1; }
cd "$repo/contrib/mcp"
start=$SECONDS
npm ci --no-audit --no-fund --loglevel=error >/dev/null
echo "mcp: npm ci in $((SECONDS - start)) s (node $(node --version))"

rc=0
node --test --test-reporter=tap test/ || rc=1

# The Inspector's CLI, as a user runs it against the server
inspect() { npx --no-install mcp-inspector --cli node server.js --sbx-oci "$SBX_OCI" --timeout 20 "$@"; }
out=$(inspect --method tools/list) || { echo "mcp: inspector tools/list failed: $out" >&2; rc=1; }
for t in run_python session_run session_put_file session_get_file session_list_files session_end; do
	grep -q "\"$t\"" <<<"$out" || { echo "mcp: inspector's tools/list lacks $t" >&2; rc=1; }
done
out=$(inspect --method tools/call --tool-name run_python --tool-arg 'code=print(6*7)') ||
	{ echo "mcp: inspector tools/call failed: $out" >&2; rc=1; }
grep -q '42' <<<"$out" || { echo "mcp: inspector's run_python did not print 42: $out" >&2; rc=1; }
# three nodes behind nginx, one lost and back (issue 42)
"$here/fleet.sh" || rc=1
[ "$rc" = 0 ] && echo "mcp: the SDK client's tests, the Inspector CLI and the fleet passed"
exit $rc
