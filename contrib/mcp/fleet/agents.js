#!/usr/bin/env node
// Agents of a fleet, for tests/mcp/fleet.sh: N MCP clients (the SDK's Client over
// StreamableHTTPClientTransport) each hold a session through the proxy and run cells.
//
//   agents.js URL N          (the token in SBX_OCI_MCP_TOKEN)
//
// The phases, each begun by a line on stdin and ended by one on stdout:
//   (start)        every agent: a session, x = 7 * i, then x + 1       -> "READY n1=.. n2=.."
//   "lost NODE"    every agent reads x: NODE's get a clear MCP error, the others their
//                  own x; 10 new sessions all work, none on NODE       -> "LOST-OK"
//   "back NODE"    new sessions until one is on NODE (at most 20)      -> "BACK-OK"
// then every session is ended (DELETE). Any other outcome: "FAIL why", status 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createInterface } from "node:readline";

const [url, count] = [new URL(process.argv[2]), Number(process.argv[3])];
const token = process.env.SBX_OCI_MCP_TOKEN;
const CALL = { timeout: 60000 }; // no call may hang: past this it is a failure

function fail(why) {
  process.stdout.write(`FAIL ${why}\n`);
  process.exit(1);
}

async function connect() {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "fleet-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, node: transport.sessionId.split(".")[0] };
}

const value = (r) => r.structuredContent?.value;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A tool call, tried again after a second while the node answers busy (503,
 * Retry-After: 1), as a well-behaved client does; 30 at most. */
async function call(a, name, args) {
  for (let i = 0; ; i++) {
    try {
      return await a.client.callTool({ name, arguments: args }, undefined, CALL);
    } catch (e) {
      if (!/busy:/.test(e.message) || i >= 30) throw e;
      a.busy = (a.busy ?? 0) + 1;
      await sleep(1000);
    }
  }
}
const cell = (a, code) => call(a, "session_run", { session: "s", code });

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function next(expect) {
  const { value: line, done } = await lines.next();
  if (done || !line.startsWith(expect)) fail(`expected '${expect}' on stdin, got '${line}'`);
  return line.split(" ")[1];
}

function perNode(agents) {
  const n = {};
  for (const a of agents) n[a.node] = (n[a.node] ?? 0) + 1;
  return Object.entries(n).sort().map(([k, v]) => `${k}=${v}`).join(" ");
}

async function start() {
  const agents = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const a = await connect();
    a.i = i;
    await cell(a, `x = 7 * ${i}`);
    const r = await cell(a, "x + 1");
    if (value(r) !== String(7 * i + 1)) fail(`agent ${i}: x + 1 gave ${value(r)}`);
    return a;
  }));
  const busy = agents.reduce((n, a) => n + (a.busy ?? 0), 0);
  process.stdout.write(`READY ${perNode(agents)} (${busy} busy answers, each tried again a second later)\n`);
  return agents;
}

async function lost(agents, node) {
  let gone = 0;
  await Promise.all(agents.map(async (a) => {
    if (a.node === node) {
      const e = await cell(a, "x").then(() => null, (err) => err);
      if (!e) fail(`agent ${a.i}: its node ${node} is gone, yet its cell ran`);
      if (!/is gone: start a new session/.test(e.message)) fail(`agent ${a.i}: an unclear error: ${e.message}`);
      gone++;
    } else {
      const r = await cell(a, "x");
      if (value(r) !== String(7 * a.i)) fail(`agent ${a.i} on ${a.node}: x is ${value(r)} after ${node} went`);
    }
  }));
  if (!gone) fail(`no agent was on ${node}`);
  const fresh = await Promise.all(Array.from({ length: 10 }, async () => {
    const a = await connect();
    const r = await call(a, "run_python", { code: "6 * 7" });
    if (value(r) !== "42") fail(`a new session on ${a.node}: ${JSON.stringify(r)}`);
    if (a.node === node) fail(`a new session went to ${node}, which is gone`);
    return a;
  }));
  process.stdout.write(`LOST-OK ${gone} ended, new: ${perNode(fresh)}\n`);
  return agents.filter((a) => a.node !== node).concat(fresh);
}

async function back(agents, node) {
  for (let i = 0; i < 20; i++) {
    const a = await connect();
    agents.push(a);
    const r = await cell(a, "7 * 6");
    if (value(r) !== "42") fail(`a new session on ${a.node}: ${JSON.stringify(r)}`);
    if (a.node === node) {
      process.stdout.write(`BACK-OK after ${i + 1} new session(s)\n`);
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  fail(`20 new sessions and none on ${node}, which is back`);
}

async function main() {
  let agents = await start();
  agents = await lost(agents, await next("lost"));
  await back(agents, await next("back"));
  await Promise.all(agents.map((a) => a.transport.terminateSession().catch(() => {}).then(() => a.client.close())));
  process.exit(0);
}

main().catch((e) => fail(e.stack?.split("\n").slice(0, 3).join(" | ") ?? e));
