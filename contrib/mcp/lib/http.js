// The MCP server over Streamable HTTP (issue 42): `sbx-oci-mcp --http HOST:PORT`.
//
// Every request carries a bearer token (a line of --token-file, or SBX_OCI_MCP_TOKEN;
// never an argument, which any user could read in ps); a missing or wrong one gets 401
// and a line in the log. Each MCP session (Mcp-Session-Id) has a McpServer and a
// transport of its own, and owns the sbx-oci sessions its calls made: they end with it,
// by DELETE, by --session-idle, or when this server stops. Limits are answers, at
// once: sessions per token and in all (429 / 503), tool calls running at once and
// the machine's available memory below --min-available (503 with Retry-After), a request's size (413) and its time to arrive (408: a client
// sending a byte a second holds a socket, never the others' calls).
import http from "node:http";
import https from "node:https";
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { endSession, registerTools } from "./tools.js";

const MIN_TOKEN = 16; // characters: a token guessable in a few tries is no token

/** The accepted tokens, hashed: the lines of FILE, else SBX_OCI_MCP_TOKEN. */
export function readTokens(file) {
  let lines;
  if (file) lines = readFileSync(file, "utf8").split("\n");
  else if (process.env.SBX_OCI_MCP_TOKEN) lines = [process.env.SBX_OCI_MCP_TOKEN];
  else throw new Error("--http needs a token: --token-file FILE or SBX_OCI_MCP_TOKEN");
  const tokens = lines.map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  if (!tokens.length) throw new Error(`--token-file: ${file} holds no token`);
  const short = tokens.find((t) => t.length < MIN_TOKEN);
  if (short !== undefined) throw new Error(`--token-file: a token of ${short.length} characters (${MIN_TOKEN} at least)`);
  return tokens.map(digest);
}

function digest(token) {
  return createHash("sha256").update(token).digest();
}

/** The token's digest if the request's bearer token is one of TOKENS, else null. */
function authorized(req, tokens) {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  if (!m) return null;
  const d = digest(m[1]);
  return tokens.find((t) => timingSafeEqual(t, d)) ?? null;
}

/** serveHttp's options from the command line's (O: parseArgs's values). */
export function httpOptions(o, parseSize) {
  const count = (name, dflt, min = 1) => {
    const v = o[name] === undefined ? dflt : Number(o[name]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name}: '${o[name]}' is not a whole number (${min} or more)`);
    return v;
  };
  if ((o["tls-cert"] === undefined) !== (o["tls-key"] === undefined)) throw new Error("--tls-cert and --tls-key go together");
  const maxBody = parseSize(o["max-body"] ?? "48M");
  if (!maxBody) throw new Error(`--max-body: '${o["max-body"]}' is not a size`);
  const minAvailable = parseSize(o["min-available"] ?? "256M");
  if (minAvailable === null) throw new Error(`--min-available: '${o["min-available"]}' is not a size`);
  return {
    listen: parseListen(o.http),
    tokens: readTokens(o["token-file"]),
    tls: o["tls-cert"] ? { cert: readFileSync(o["tls-cert"]), key: readFileSync(o["tls-key"]) } : null,
    idleMs: count("session-idle", 600) * 1000,
    maxSessions: count("max-sessions", 256),
    maxSessionsPerToken: count("max-sessions-per-token", 32),
    maxCalls: count("max-calls", 8),
    maxBody,
    minAvailable,
    requestMs: count("request-timeout", 30) * 1000,
    node: nodeName(o["node-id"]),
  };
}

/** --node-id: what this server's session ids start with, for a proxy to route on */
function nodeName(name) {
  if (name === undefined) return null;
  if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(name)) throw new Error(`--node-id: '${name}' is not a name (a-z, 0-9, '-'; 32 at most)`);
  return name;
}

/** "HOST:PORT" (or "[v6]:PORT") -> {host, port} */
export function parseListen(text) {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):([0-9]{1,5})$/.exec(text ?? "");
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`--http: '${text}' is not HOST:PORT`);
  return { host: m[1] ?? (m[2] || "127.0.0.1"), port };
}

function reply(res, status, message, headers = {}) {
  if (res.headersSent) return;
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: status === 404 ? -32001 : -32000, message }, id: null }));
}

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The request's body as JSON, at most MAX bytes, arrived whole within MS. */
function readJson(req, max, ms) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > max) return reject(new HttpError(413, `the request is ${declared} bytes, more than ${max}`));
    const chunks = [];
    let size = 0;
    const late = setTimeout(() => {
      req.pause();
      reject(new HttpError(408, `the request did not arrive in ${ms / 1000} s`));
    }, ms);
    req.on("data", (c) => {
      size += c.length;
      if (size > max) {
        req.pause(); // the rest is never read: the reply closes the connection
        clearTimeout(late);
        reject(new HttpError(413, `the request is more than ${max} bytes`));
      } else chunks.push(c);
    });
    req.on("end", () => {
      clearTimeout(late);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new HttpError(400, "the request is not JSON (a JSON-RPC message)"));
      }
    });
    req.on("error", () => reject(new HttpError(400, "the request ended early")));
  });
}

const isToolCall = (body) => [body].flat().some((m) => m?.method === "tools/call");

/** The machine's MemAvailable, in bytes (Infinity where /proc/meminfo says nothing). */
function memAvailable() {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
  return m ? Number(m[1]) * 1024 : Infinity;
}

/** Why this node is too full for one more session or call, or null. */
function tooFull(opts) {
  const avail = memAvailable();
  return avail < opts.minAvailable
    ? `busy: ${Math.floor(avail / (1 << 20))} MiB of memory available, less than the ${Math.floor(opts.minAvailable / (1 << 20))} MiB this server keeps free`
    : null;
}

/**
 * Serves MCP over HTTP until stopped: resolves to {address, stop()} once listening.
 * opts: listen {host, port}, tokens (readTokens), tls {cert, key} or null, ctx (what
 * registerTools needs, shared), idleMs, maxSessionsPerToken, maxSessions, maxCalls, minAvailable,
 * maxBody, requestMs, node (session ids' prefix, or null), log(line).
 */
export async function serveHttp(opts) {
  const { tokens, ctx, log } = opts;
  const sessions = new Map(); // Mcp-Session-Id -> {transport, token, ctx, last, calls}
  let calls = 0;
  let made = 0;

  const perToken = (token) => [...sessions.values()].filter((s) => s.token.equals(token)).length;

  /** Ends an MCP session's sbx-oci sessions (once), then forgets it. */
  async function endMcpSession(id, why) {
    const s = sessions.get(id);
    if (!s || s.ending) return;
    s.ending = true;
    sessions.delete(id);
    const names = [...s.ctx.sessions];
    log(`session ${id} ended (${why}): ${names.length} sbx-oci session(s) ended with it`);
    await Promise.all(names.map((n) => endSession(s.ctx, n).catch(() => {})));
    s.transport.close().catch(() => {});
  }

  async function newSession(req, res, token, body) {
    if (perToken(token) >= opts.maxSessionsPerToken)
      return reply(res, 429, `this token holds ${opts.maxSessionsPerToken} MCP sessions, the most it may: end one (DELETE) first`,
        { "Retry-After": "10" });
    if (sessions.size >= opts.maxSessions)
      return reply(res, 503, `this server holds ${opts.maxSessions} MCP sessions, the most it may`, { "Retry-After": "10" });
    const full = tooFull(opts);
    if (full) return reply(res, 503, full, { "Retry-After": "10" });
    const own = { ...ctx, prefix: `${ctx.prefix}${(made++).toString(36)}-`, sessions: new Set() };
    const transport = new StreamableHTTPServerTransport({
      // NODE.UUID: a proxy in front of several of us routes on the name (fleet/nginx.conf)
      sessionIdGenerator: () => (opts.node ? `${opts.node}.${randomUUID()}` : randomUUID()),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, token, ctx: own, last: Date.now(), calls: 0 });
        log(`session ${id} started (${req.socket.remoteAddress})`);
      },
      onsessionclosed: (id) => endMcpSession(id, "DELETE"),
    });
    transport.onclose = () => transport.sessionId && endMcpSession(transport.sessionId, "closed");
    const server = new McpServer({ name: "sbx-oci", version: "0.1.0" });
    registerTools(server, own);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req, res) {
    const path = new URL(req.url, "http://x").pathname;
    if (path !== "/mcp") return reply(res, 404, `no such path: ${path} (the MCP endpoint is /mcp)`);
    const token = authorized(req, tokens);
    if (!token) {
      log(`refused ${req.method} from ${req.socket.remoteAddress}:${req.socket.remotePort}: `
        + `${req.headers.authorization ? "a wrong token" : "no bearer token"}`);
      return reply(res, 401, "a bearer token is needed (Authorization: Bearer TOKEN)",
        { "WWW-Authenticate": 'Bearer realm="sbx-oci-mcp"' });
    }
    const id = req.headers["mcp-session-id"];
    const s = id !== undefined ? sessions.get(id) : null;
    if (id !== undefined && (!s || !s.token.equals(token)))
      return reply(res, 404, "no such MCP session (it ended or expired): initialize a new one");
    if (req.method === "POST") {
      const body = await readJson(req, opts.maxBody, opts.requestMs);
      if (!s) {
        if (!isInitializeRequest(body)) return reply(res, 400, "no Mcp-Session-Id: the first request is initialize");
        return newSession(req, res, token, body);
      }
      s.last = Date.now();
      if (!isToolCall(body)) return s.transport.handleRequest(req, res, body);
      if (calls >= opts.maxCalls)
        return reply(res, 503, `busy: ${calls} tool calls are running, the most this server runs at once`,
          { "Retry-After": "1" });
      const full = tooFull(opts);
      if (full) return reply(res, 503, full, { "Retry-After": "5" });
      calls++;
      s.calls++;
      res.on("close", () => {
        calls--;
        s.calls--;
        s.last = Date.now();
      });
      return s.transport.handleRequest(req, res, body);
    }
    if (!s) return reply(res, 400, "no Mcp-Session-Id");
    s.last = Date.now();
    return s.transport.handleRequest(req, res);
  }

  const onRequest = (req, res) => handle(req, res).catch((e) => {
    if (e instanceof HttpError) {
      log(`${e.status} for ${req.method} from ${req.socket.remoteAddress}: ${e.message}`);
      res.on("finish", () => req.socket.destroy());
      reply(res, e.status, e.message, { Connection: "close" });
    } else {
      log(`error: ${e.stack ?? e}`);
      reply(res, 500, "sbx-oci-mcp: internal error");
    }
  });
  // the timeouts below are checked every second (Node's default: every 30 s)
  const common = { connectionsCheckingInterval: 1000 };
  const server = opts.tls ? https.createServer({ ...common, cert: opts.tls.cert, key: opts.tls.key }, onRequest)
    : http.createServer(common, onRequest);
  // a request must arrive whole in requestMs: a slow client is cut off (408), and
  // holds only its own socket meanwhile
  server.requestTimeout = opts.requestMs;
  server.headersTimeout = Math.min(opts.requestMs, 10000);
  server.maxHeadersCount = 64;

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions)
      if (s.calls === 0 && now - s.last > opts.idleMs) endMcpSession(id, `idle for ${Math.round(opts.idleMs / 1000)} s`);
  }, Math.max(250, Math.min(opts.idleMs / 4, 5000)));
  sweep.unref();

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.listen.port, opts.listen.host, resolve);
  });
  const a = server.address();
  log(`listening on ${opts.tls ? "https" : "http"}://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}/mcp`);
  return {
    address: a,
    stop: async () => {
      clearInterval(sweep);
      server.close();
      server.closeAllConnections?.();
      await Promise.all([...sessions.keys()].map((id) => endMcpSession(id, "the server stops")));
    },
  };
}
