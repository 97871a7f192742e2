// The MCP server over Streamable HTTP (issue 42), as an MCP client reaches it: the SDK's
// own Client with StreamableHTTPClientTransport, and raw HTTP for what a client must
// not be able to do (no token, a huge or malformed body, a byte a second). Against the
// built sbx-oci (SBX_OCI, as root), each server on a port of its own on loopback.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import https from "node:https";

const here = dirname(fileURLToPath(import.meta.url));
const SERVER = join(here, "..", "server.js");
const SBX_OCI = process.env.SBX_OCI ?? "sbx-oci";
const TOKEN = "test-token-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "sbx-mcp-http-"));
const tokenFile = join(dir, "tokens");
writeFileSync(tokenFile, `# one a line\n${TOKEN}\nother-token-0123456789abcdef\n`, { mode: 0o600 });

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A free port on loopback. */
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** An MCP server with --http on a free port: {url, log(), stop()} once it listens. */
async function startServer(args = [], { scheme = "http", env = {} } = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER, "--sbx-oci", SBX_OCI, "--timeout", "30",
    "--http", `127.0.0.1:${port}`, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (b) => { log += b; });
  const exited = new Promise((r) => child.on("exit", r));
  for (let i = 0; i < 400 && !log.includes("listening on"); i++) {
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  assert.match(log, /listening on/, `the server listens: ${log}`);
  return {
    url: new URL(`${scheme}://127.0.0.1:${port}/mcp`), port, log: () => log, child,
    stop: async () => { child.kill("SIGTERM"); await exited; },
  };
}

async function connect(url, token = TOKEN) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
  });
  const client = new Client({ name: "sbx-oci-mcp-http-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** POST a raw body to the endpoint: {status, headers, body}. */
async function post(url, body, headers = {}) {
  const r = await fetch(url, { method: "POST", body, headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream", ...headers } });
  return { status: r.status, headers: r.headers, body: await r.text() };
}

const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
  protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });

/** The processes of the sbx-oci serve this MCP server started: its workers, one per
 * sandbox it holds (a session's among them), and its warm interpreter. */
function serveChildren(s) {
  const ps = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" }).trim().split("\n")
    .map((l) => l.trim().split(/\s+/));
  const serve = ps.find((f) => f[1] === String(s.child.pid) && f.includes("serve"));
  return serve ? ps.filter((f) => f[1] === serve[0]).length : -1;
}

/** Waits until the serve holds BASE children again (its sessions' sandboxes gone). */
async function settles(s, base) {
  let n;
  for (let i = 0; i < 100 && (n = serveChildren(s)) !== base; i++) await sleep(100);
  return n;
}

let srv;
before(async () => {
  srv = await startServer(["--token-file", tokenFile, "--session-idle", "3", "--max-sessions-per-token", "4",
    "--max-body", "2M", "--request-timeout", "3"]);
});
after(async () => {
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("over HTTP: tools/list and every tool, with the SDK's Streamable HTTP client", async () => {
  const { client, transport } = await connect(srv.url);
  assert.ok(transport.sessionId, "the server gave an Mcp-Session-Id");
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["run_python", "session_end", "session_get_file", "session_list_files", "session_put_file",
    "session_run"]);
  let r = await client.callTool({ name: "run_python", arguments: { code: "print('hi')\n6 * 7" } });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.value, "42");
  r = await client.callTool({ name: "session_put_file", arguments: { session: "s", path: "d/a.txt", text: "abc" } });
  assert.ok(!r.isError, text(r));
  assert.match(text(r), /wrote \/work\/d\/a\.txt \(3 bytes\)/);
  r = await client.callTool({ name: "session_run", arguments: { session: "s", code: "open('d/a.txt').read().upper()" } });
  assert.equal(r.structuredContent.value, "'ABC'");
  r = await client.callTool({ name: "session_list_files", arguments: { session: "s" } });
  assert.ok(r.structuredContent.entries.some((e) => e.path === "d/a.txt"), text(r));
  r = await client.callTool({ name: "session_get_file", arguments: { session: "s", path: "d/a.txt" } });
  assert.equal(text(r), "abc");
  r = await client.callTool({ name: "session_end", arguments: { session: "s" } });
  assert.match(text(r), /ended/);
  await client.close();
});

test("a session's state is kept across calls, and each MCP session has sessions of its own", async () => {
  const a = await connect(srv.url);
  const b = await connect(srv.url);
  await a.client.callTool({ name: "session_run", arguments: { session: "work", code: "x = 41" } });
  let r = await a.client.callTool({ name: "session_run", arguments: { session: "work", code: "x + 1" } });
  assert.equal(r.structuredContent.value, "42");
  // the same name in another MCP session is another sbx-oci session
  r = await b.client.callTool({ name: "session_run", arguments: { session: "work", code: "x" } });
  assert.equal(r.isError, true);
  assert.match(text(r), /NameError/);
  await a.transport.terminateSession();
  await b.transport.terminateSession();
  await a.client.close();
  await b.client.close();
});

test("no token, a wrong token: 401 with WWW-Authenticate, and the attempt is logged", async () => {
  await assert.rejects(connect(srv.url, null), /a bearer token is needed/);
  await assert.rejects(connect(srv.url, "wrong-token-0123456789abcdef"), /a bearer token is needed/);
  const r = await post(srv.url, initialize, { Authorization: "Bearer nope" });
  assert.equal(r.status, 401);
  assert.match(r.headers.get("www-authenticate"), /^Bearer/);
  assert.match(srv.log(), /refused POST from 127\.0\.0\.1:\d+: no bearer token/);
  assert.match(srv.log(), /refused POST from 127\.0\.0\.1:\d+: a wrong token/);
  // the second token of the file is as good as the first
  const c = await connect(srv.url, "other-token-0123456789abcdef");
  await c.transport.terminateSession();
  await c.client.close();
});

test("a session's id is no good with another token", async () => {
  const a = await connect(srv.url);
  const r = await post(srv.url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    { Authorization: "Bearer other-token-0123456789abcdef", "Mcp-Session-Id": a.transport.sessionId,
      "Mcp-Protocol-Version": "2025-03-26" });
  assert.equal(r.status, 404);
  await a.transport.terminateSession();
  await a.client.close();
});

test("DELETE ends the MCP session and the sbx-oci sessions it made; its id is unknown after", async () => {
  const base = await settles(srv, serveChildren(srv));
  const a = await connect(srv.url);
  await a.client.callTool({ name: "session_run", arguments: { session: "gone", code: "y = 1" } });
  await a.client.callTool({ name: "session_run", arguments: { session: "gone2", code: "y = 2" } });
  assert.ok(serveChildren(srv) >= base + 2, "two sessions' sandboxes held");
  const id = a.transport.sessionId;
  await a.transport.terminateSession();
  for (let i = 0; i < 100 && !srv.log().includes(`session ${id} ended`); i++) await sleep(50);
  assert.match(srv.log(), new RegExp(`session ${id} ended \\(DELETE\\): 2 sbx-oci session`));
  assert.equal(await settles(srv, base), base, "the sessions' sandboxes are gone");
  const r = await post(srv.url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    { Authorization: `Bearer ${TOKEN}`, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-03-26" });
  assert.equal(r.status, 404);
  await a.client.close();
});

test("an idle MCP session expires (--session-idle 3): its next call fails, a new session works", async () => {
  const base = await settles(srv, serveChildren(srv));
  const a = await connect(srv.url);
  await a.client.callTool({ name: "session_run", arguments: { session: "idle", code: "z = 1" } });
  const id = a.transport.sessionId;
  for (let i = 0; i < 200 && !srv.log().includes(`session ${id} ended`); i++) await sleep(50);
  assert.match(srv.log(), new RegExp(`session ${id} ended \\(idle for 3 s\\): 1 sbx-oci session`));
  assert.equal(await settles(srv, base), base, "the session's sandbox is gone");
  await assert.rejects(a.client.callTool({ name: "run_python", arguments: { code: "1" } }), /404|Session not found|no such MCP session/);
  await a.client.close();
  const b = await connect(srv.url);
  const r = await b.client.callTool({ name: "run_python", arguments: { code: "2 + 2" } });
  assert.equal(r.structuredContent.value, "4");
  await b.transport.terminateSession();
  await b.client.close();
});

test("at most --max-sessions-per-token MCP sessions a token: the next is 429, the other token is not held up", async () => {
  const held = [];
  for (let i = 0; i < 4; i++) held.push(await connect(srv.url));
  await assert.rejects(connect(srv.url), /429|the most it may/);
  const other = await connect(srv.url, "other-token-0123456789abcdef");
  for (const c of [...held, other]) {
    await c.transport.terminateSession();
    await c.client.close();
  }
});

test("bad input: a body over --max-body is 413, a malformed one 400, a first request not initialize 400", async () => {
  const auth = { Authorization: `Bearer ${TOKEN}` };
  let r = await post(srv.url, "x".repeat(3 << 20), auth);
  assert.equal(r.status, 413);
  r = await post(srv.url, "{not json", auth);
  assert.equal(r.status, 400);
  r = await post(srv.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), auth);
  assert.equal(r.status, 400);
  r = await fetch(new URL("/other", srv.url), { headers: auth });
  assert.equal(r.status, 404);
  // the server still answers
  const c = await connect(srv.url);
  await c.transport.terminateSession();
  await c.client.close();
});

test("a client sending a byte a second is cut off (--request-timeout 3) and holds up no one", async () => {
  const slow = net.connect(srv.port, "127.0.0.1");
  await new Promise((r) => slow.once("connect", r));
  let closed = false;
  slow.on("close", () => { closed = true; });
  slow.on("error", () => {});
  const head = `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n`
    + `Content-Length: 100000\r\n\r\n`;
  slow.write(head);
  const drip = setInterval(() => { if (!closed) slow.write("x"); }, 1000);
  // meanwhile another client is served at once
  const t0 = Date.now();
  const c = await connect(srv.url);
  const r = await c.client.callTool({ name: "run_python", arguments: { code: "print(1)" } });
  assert.equal(r.isError, false);
  assert.ok(!closed, "the slow client is still sending while the other was served");
  await c.transport.terminateSession();
  await c.client.close();
  for (let i = 0; i < 200 && !closed; i++) await sleep(50);
  clearInterval(drip);
  assert.ok(closed, "the slow client was cut off");
  assert.ok(Date.now() - t0 < 10000, "within the request timeout, not its 100000 bytes");
  slow.destroy();
});

test("busy is an answer: past --max-calls a tool call gets 503 with Retry-After at once", async () => {
  const s = await startServer(["--max-calls", "1"], { env: { SBX_OCI_MCP_TOKEN: TOKEN } });
  try {
    const a = await connect(s.url);
    const b = await connect(s.url);
    const long = a.client.callTool({ name: "run_python", arguments: { code: "import time; time.sleep(4); 'done'" } });
    await sleep(1000);
    const t0 = Date.now();
    await assert.rejects(b.client.callTool({ name: "run_python", arguments: { code: "1" } }), /503|busy/);
    assert.ok(Date.now() - t0 < 2000, "refused at once, not queued");
    const raw = await post(s.url, JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call",
      params: { name: "run_python", arguments: { code: "1" } } }), { Authorization: `Bearer ${TOKEN}`,
      "Mcp-Session-Id": b.transport.sessionId, "Mcp-Protocol-Version": "2025-03-26" });
    assert.equal(raw.status, 503);
    assert.equal(raw.headers.get("retry-after"), "1");
    assert.equal((await long).structuredContent.value, "'done'");
    // the place is free again
    const r = await b.client.callTool({ name: "run_python", arguments: { code: "3" } });
    assert.equal(r.structuredContent.value, "3");
    for (const c of [a, b]) {
      await c.transport.terminateSession();
      await c.client.close();
    }
  } finally {
    await s.stop();
  }
});

test("busy is an answer: with less memory available than --min-available, 503 with Retry-After", async () => {
  // a floor above any machine's memory: every new session and call is refused, at once
  const s = await startServer(["--min-available", "1T"], { env: { SBX_OCI_MCP_TOKEN: TOKEN } });
  try {
    const r = await post(s.url, initialize, { Authorization: `Bearer ${TOKEN}` });
    assert.equal(r.status, 503);
    assert.equal(r.headers.get("retry-after"), "10");
    assert.match(r.body, /MiB of memory available, less than the 1048576 MiB this server keeps free/);
  } finally {
    await s.stop();
  }
});

test("the token never comes from the command line, and --http without one refuses to start", async () => {
  const env = { ...process.env };
  delete env.SBX_OCI_MCP_TOKEN;
  let r = spawnSync(["--http", "127.0.0.1:1", "--token", TOKEN], env);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /token/);
  r = spawnSync(["--http", "127.0.0.1:1"], env);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--http needs a token: --token-file FILE or SBX_OCI_MCP_TOKEN/);
  r = spawnSync(["--http", "127.0.0.1:1"], { ...env, SBX_OCI_MCP_TOKEN: "short" });
  assert.match(r.stderr, /a token of 5 characters \(16 at least\)/);
});

test("SBX_OCI_MCP_TOKEN, and TLS from a certificate file", async () => {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
  const s = await startServer(["--tls-cert", cert, "--tls-key", key], { scheme: "https",
    env: { SBX_OCI_MCP_TOKEN: TOKEN } });
  try {
    const ca = (await import("node:fs")).readFileSync(cert);
    const status = await new Promise((resolve, reject) => {
      const req = https.request(s.url, { method: "POST", ca, headers: { Authorization: `Bearer ${TOKEN}`,
        "Content-Type": "application/json", Accept: "application/json, text/event-stream" } }, (res) => {
        res.resume();
        resolve([res.statusCode, res.headers["mcp-session-id"]]);
      });
      req.on("error", reject);
      req.end(initialize);
    });
    assert.equal(status[0], 200);
    assert.ok(status[1], "an Mcp-Session-Id over TLS");
  } finally {
    await s.stop();
  }
});

function spawnSync(args, env) {
  try {
    const stdout = execFileSync(process.execPath, [SERVER, "--sbx-oci", SBX_OCI, ...args],
      { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 20000 });
    return { status: 0, stdout, stderr: "" };
  } catch (e) {
    return { status: e.status, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}
