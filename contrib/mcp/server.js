#!/usr/bin/env node
// sbx-oci-mcp: an MCP server (stdio) whose tools run Python in sbx-oci sandboxes.
//
//   sbx-oci-mcp [--socket PATH] [--sbx-oci PATH] [--preload MODS] [--memory SIZE]
//               [--timeout S] [--network none|loopback|full] [--max-output SIZE]
//
// Without --socket it starts an `sbx-oci serve` of its own (stopped when the MCP
// client closes the connection), with --memory, --network, --timeout and
// --max-output as that server's defaults and --preload its preloaded modules. The
// same options are the ceilings of every call: a tool call may ask for less time,
// memory or network, never more. Defaults: 1G, 60 s, no network, 256K of output.
// With --socket it reaches a running `sbx-oci serve` of this user, and passes the
// ceilings with every call.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { parseArgs } from "node:util";
import { Limits } from "./lib/sbx.js";
import { startServe } from "./lib/serve.js";
import { registerTools } from "./lib/tools.js";

const USAGE = "usage: sbx-oci-mcp [--socket PATH] [--sbx-oci PATH] [--preload MODS] [--memory SIZE] "
  + "[--timeout S] [--network none|loopback|full] [--max-output SIZE]";

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      socket: { type: "string" }, "sbx-oci": { type: "string" }, preload: { type: "string" },
      memory: { type: "string" }, timeout: { type: "string" }, network: { type: "string" },
      "max-output": { type: "string" }, root: { type: "string" }, help: { type: "boolean" },
    },
  });
  return values;
}

async function main() {
  let o;
  let limits;
  try {
    o = options(process.argv.slice(2));
    if (o.help) {
      process.stdout.write(USAGE + "\n");
      return;
    }
    limits = new Limits({
      memory: o.memory ?? "1G", timeout: o.timeout !== undefined ? Number(o.timeout) : 60,
      network: o.network ?? "none", maxOutput: o["max-output"] ?? "256K",
    });
  } catch (e) {
    process.stderr.write(`sbx-oci-mcp: ${e.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const sbxOci = o["sbx-oci"] ?? process.env.SBX_OCI ?? "sbx-oci";
  let serve = null;
  let socket = o.socket;
  if (!socket) {
    try {
      serve = await startServe(sbxOci, limits, { preload: o.preload ?? "", root: o.root ?? null });
    } catch (e) {
      process.stderr.write(`sbx-oci-mcp: ${e.message}\n`);
      process.exit(1);
    }
    socket = serve.socket;
  }
  // Through our own server its defaults are the ceilings; through another's, every
  // call names them.
  const force = !serve;
  const ctx = {
    sbxOci, socket, limits, force, prefix: `mcp${process.pid}-`,
    sessionSandbox: force ? ["--memory", limits.memory, "--network", limits.network] : [],
  };
  const server = new McpServer({ name: "sbx-oci", version: "0.1.0" });
  registerTools(server, ctx);
  const transport = new StdioServerTransport();
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    if (serve) await serve.stop();
    process.exit(0);
  };
  transport.onclose = shutdown;
  process.stdin.on("end", shutdown);
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, shutdown);
  await server.connect(transport);
}

main();
