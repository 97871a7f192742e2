#!/usr/bin/env node
// http-load.js SOCKET SBX_OCI OUT.tsv: the HTTP MCP server under load (issue 42), for
// `make bench` (tests/bench/run.sh mcp-http). One node: server.js --http on loopback
// with --socket SOCKET (the `sbx-oci serve` the bench started, --max-runs 8) and
// --max-calls 8, driven by the SDK's Client over StreamableHTTPClientTransport.
//   1. steady: SESSIONS (50) MCP sessions, each with a session of its own, send cells
//      (x += 1) at RATE (20) calls a second in all for SECONDS (20): a call's p50 and p99,
//      beside the CLI's warm print(1) (`sbx-oci python --connect`) to the same serve,
//      timed in the same run, one after the other;
//   2. past capacity: the same sessions all call at once, back to back, for SECONDS:
//      how many calls were answered, how many were busy (503, answered at once) and how
//      many hung (no answer in 60 s). None may hang: the status is 1 if one did.
// Rows: what, calls, p50 ms, p99 ms, busy, hung, failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import net from "node:net";

const [socket, sbxOci, out] = process.argv.slice(2);
if (!socket || !sbxOci || !out) {
  process.stderr.write("usage: http-load.js SOCKET SBX_OCI OUT.tsv\n");
  process.exit(2);
}
const SESSIONS = Number(process.env.MCP_LOAD_SESSIONS ?? 50);
const RATE = Number(process.env.MCP_LOAD_RATE ?? 20);
const SECONDS = Number(process.env.MCP_LOAD_SECONDS ?? 20);
const HANG_MS = 60000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const token = randomBytes(24).toString("hex");
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const server = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), "..", "server.js"),
  "--socket", socket, "--sbx-oci", sbxOci, "--memory", "2048M", "--network", "loopback", "--http",
  `127.0.0.1:${port}`, "--max-calls", "8", "--max-sessions-per-token", String(SESSIONS + 1)],
{ env: { ...process.env, SBX_OCI_MCP_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] });
let log = "";
server.stderr.on("data", (b) => { log += b; });
for (let i = 0; i < 200 && !log.includes("listening on"); i++) await sleep(50);
if (!log.includes("listening on")) throw new Error(`the HTTP MCP server did not start: ${log}`);
const url = new URL(`http://127.0.0.1:${port}/mcp`);

async function connect() {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "sbx-oci-load", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

/** One cell: {ms, outcome: ok|busy|hung|failed}. */
async function cell(a) {
  const t0 = performance.now();
  let timer;
  const hang = new Promise((r) => { timer = setTimeout(() => r("hung"), HANG_MS); });
  const call = a.client.callTool({ name: "session_run", arguments: { session: "s", code: "x += 1" } }, undefined,
    { timeout: HANG_MS * 2 }).then((r) => (r.isError ? "failed" : "ok"), (e) => (/busy:/.test(e.message) ? "busy" : "failed"));
  const outcome = await Promise.race([call, hang]);
  clearTimeout(timer);
  return { ms: performance.now() - t0, outcome };
}

function row(what, results) {
  const ok = results.filter((r) => r.outcome === "ok").map((r) => r.ms);
  const n = (o) => results.filter((r) => r.outcome === o).length;
  return [what, ok.length, pct(ok, 50).toFixed(1), pct(ok, 99).toFixed(1), n("busy"), n("hung"), n("failed")].join("\t");
}

const agents = [];
for (let i = 0; i < SESSIONS; i++) {
  const a = await connect();
  const r = await a.client.callTool({ name: "session_run", arguments: { session: "s", code: "x = 0" } });
  if (r.isError) throw new Error(`a session could not start: ${JSON.stringify(r.content)}`);
  agents.push(a);
}

// 1. steady: one call every 1/RATE s, the sessions in turn
const steady = [];
const pending = [];
const t0 = performance.now();
for (let i = 0; performance.now() - t0 < SECONDS * 1000; i++) {
  pending.push(cell(agents[i % SESSIONS]).then((r) => steady.push(r)));
  const next = t0 + ((i + 1) * 1000) / RATE;
  await sleep(Math.max(0, next - performance.now()));
}
await Promise.all(pending);

// the CLI's warm print(1) to the same serve, now
const cli = [];
for (let i = 0; i < 41; i++) {
  const s = performance.now();
  execFileSync(sbxOci, ["python", "--connect", socket, "-c", "print(1)"], { stdio: ["ignore", "pipe", "pipe"] });
  cli.push({ ms: performance.now() - s, outcome: "ok" });
  await sleep(50);
}

// 2. past capacity: every session calls at once, back to back
const burst = [];
const end = performance.now() + SECONDS * 1000;
await Promise.all(agents.map(async (a) => {
  while (performance.now() < end) {
    const r = await cell(a);
    burst.push(r);
    if (r.outcome === "busy") await sleep(100);
  }
}));

const rows = ["what\tcalls\tp50_ms\tp99_ms\tbusy\thung\tfailed",
  row(`HTTP MCP session cell, ${SESSIONS} sessions, ${RATE} calls/s for ${SECONDS} s`, steady),
  row("sbx-oci python --connect -c print(1), the same serve", cli),
  row(`HTTP MCP session cell, ${SESSIONS} sessions all at once for ${SECONDS} s (past --max-calls 8)`, burst)];
writeFileSync(out, rows.join("\n") + "\n");
process.stdout.write(rows.join("\n") + "\n");
await Promise.all(agents.map((a) => a.transport.terminateSession().catch(() => {})));
server.kill("SIGTERM");
process.exit(burst.some((r) => r.outcome === "hung") || steady.some((r) => r.outcome === "hung") ? 1 : 0);
