#!/usr/bin/env node
// roundtrip.js SOCKET SBX_OCI [N]: the MCP round trips that `make bench` reports
// (tests/bench/interpreter.py runs it beside the CLI's warm print(1), against the same
// `sbx-oci serve`): the SDK's Client over stdio drives server.js with --socket SOCKET,
// and times N (default 41) calls of run_python print(1) and of a session cell print(1),
// with a 50 ms pause between calls as an agent's come. Prints "what<TAB>median ms".
// The MCP server passes its ceilings with every call through a server not its own:
// they are that server's defaults (2048M, loopback), so each call takes a standby.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const [socket, sbxOci, n = "41"] = process.argv.slice(2);
if (!socket || !sbxOci) {
  process.stderr.write("usage: roundtrip.js SOCKET SBX_OCI [N]\n");
  process.exit(2);
}
const server = join(dirname(fileURLToPath(import.meta.url)), "..", "server.js");
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [server, "--socket", socket, "--sbx-oci", sbxOci, "--memory", "2048M", "--network", "loopback"],
});
const client = new Client({ name: "sbx-oci-bench", version: "1.0.0" });
await client.connect(transport);

async function median(call) {
  const check = (r) => {
    if (r.isError || r.structuredContent?.stdout !== "1\n") throw new Error(`a call failed: ${JSON.stringify(r.content)}`);
  };
  check(await call());
  const times = [];
  for (let i = 0; i < Number(n); i++) {
    const t0 = process.hrtime.bigint();
    check(await call());
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await new Promise((r) => setTimeout(r, 50));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const run = await median(() => client.callTool({ name: "run_python", arguments: { code: "print(1)" } }));
const cell = await median(() => client.callTool({ name: "session_run", arguments: { session: "bench", code: "print(1)" } }));
await client.callTool({ name: "session_end", arguments: { session: "bench" } });
await client.close();
process.stdout.write(`MCP run_python print(1)\t${run.toFixed(2)}\nMCP session_run print(1)\t${cell.toFixed(2)}\n`);
