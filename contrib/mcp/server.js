#!/usr/bin/env node
// sbx-oci-mcp: an MCP server (stdio, or Streamable HTTP) whose tools run Python in
// sbx-oci sandboxes.
//
//   sbx-oci-mcp [--socket PATH] [--sbx-oci PATH] [--preload MODS] [--memory SIZE]
//               [--timeout S] [--network none|loopback|full] [--max-output SIZE]
//               [--http HOST:PORT --token-file FILE [--tls-cert F --tls-key F]
//                [--session-idle S] [--max-sessions N] [--max-sessions-per-token N]
//                [--max-calls N] [--max-body SIZE] [--request-timeout S] [--node-id NAME] [--min-available SIZE]]
//
// With --http it serves MCP's Streamable HTTP transport at http(s)://HOST:PORT/mcp to
// clients holding a token (lib/http.js); without it, one client on stdio.
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
import { Limits, parseSize } from "./lib/sbx.js";
import { startServe } from "./lib/serve.js";
import { httpOptions, serveHttp } from "./lib/http.js";
import { registerTools } from "./lib/tools.js";

const USAGE = "usage: sbx-oci-mcp [--socket PATH] [--sbx-oci PATH] [--preload MODS] [--memory SIZE] "
  + "[--timeout S] [--network none|loopback|full] [--max-output SIZE] "
  + "[--http HOST:PORT --token-file FILE [--tls-cert FILE --tls-key FILE] [--session-idle S] [--max-sessions N] "
  + "[--max-sessions-per-token N] [--max-calls N] [--max-body SIZE] [--request-timeout S] [--node-id NAME] [--min-available SIZE]]";

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      socket: { type: "string" }, "sbx-oci": { type: "string" }, preload: { type: "string" },
      memory: { type: "string" }, timeout: { type: "string" }, network: { type: "string" },
      "max-output": { type: "string" }, root: { type: "string" }, help: { type: "boolean" },
      http: { type: "string" }, "token-file": { type: "string" }, "tls-cert": { type: "string" },
      "tls-key": { type: "string" }, "session-idle": { type: "string" }, "max-sessions": { type: "string" },
      "max-sessions-per-token": { type: "string" }, "max-calls": { type: "string" }, "max-body": { type: "string" },
      "request-timeout": { type: "string" }, "node-id": { type: "string" },
      "min-available": { type: "string" },
    },
  });
  return values;
}

async function main() {
  let o;
  let limits;
  let web = null;
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
    if (o.http !== undefined) web = httpOptions(o, parseSize);
  } catch (e) {
    process.stderr.write(`sbx-oci-mcp: ${e.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const sbxOci = o["sbx-oci"] ?? process.env.SBX_OCI ?? "sbx-oci";
  let serve = null;
  let socket = o.socket;
  if (!socket) {
    try {
      serve = await startServe(sbxOci, limits, { preload: o.preload ?? "", root: o.root ?? null,
        maxRuns: web ? web.maxCalls : null });
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
  if (web) return serveOverHttp(web, ctx, serve);
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

/** MCP over HTTP until SIGTERM, SIGINT or SIGHUP: then every session ends with its sandboxes. */
async function serveOverHttp(web, ctx, serve) {
  const log = (line) => process.stderr.write(`sbx-oci-mcp: ${new Date().toISOString()} ${line}\n`);
  let front;
  try {
    front = await serveHttp({ ...web, ctx, log });
  } catch (e) {
    log(`cannot serve on ${web.listen.host}:${web.listen.port}: ${e.message}`);
    if (serve) await serve.stop();
    process.exit(1);
  }
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await front.stop();
    if (serve) await serve.stop();
    process.exit(0);
  };
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, shutdown);
}

main();
