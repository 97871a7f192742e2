// The MCP tools: what a model sees (names, JSON schemas, descriptions) and what a call
// returns (text, PNG images, isError with the exception).
import { z } from "zod";
import { CallError, NETWORKS, lastMessage, parseResult, sbxCall } from "./sbx.js";

const MAX_CODE = 1 << 20; // characters of code a call may send
const MAX_FILE = 32 << 20; // bytes of a file put or got
const SESSION = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,47}$/;

const limitsShape = {
  timeout: z.number().positive().optional()
    .describe("wall-clock seconds before the code is killed (at most the server's limit, the default)"),
  memory: z.string().regex(/^[0-9]+[KMGT]?$/i).optional()
    .describe("memory for the whole sandbox, like '256M' (at most the server's limit, the default)"),
  network: z.enum(NETWORKS).optional()
    .describe("'none' (no network), 'loopback' (127.0.0.1 only) or 'full' (at most the server's setting)"),
};

/** A Result JSON as MCP content: a text summary, then each figure as an image. */
export function resultContent(r, { session = null } = {}) {
  const lines = [];
  const lost = session && r.session?.state === "rolled back";
  if (r.exception) lines.push(`${r.exception.type}: ${r.exception.message}`);
  if (r.timed_out) lines.push("killed: the time limit was reached");
  else if (r.oom_killed) lines.push("killed: out of memory (the sandbox's memory limit)");
  else if (r.signal) lines.push(`killed by ${r.signal}`);
  if (lost) lines.push(`the cell died: session '${session}' was rolled back to its state before this cell`);
  lines.push(`exit status: ${r.exit_code}`);
  if (r.value !== undefined && r.value !== null) lines.push(`value: ${r.value}${r.value_truncated ? " [truncated]" : ""}`);
  if (r.stdout) lines.push(`--- stdout${r.stdout_truncated ? " (truncated)" : ""} ---\n${r.stdout}`);
  if (r.stderr) lines.push(`--- stderr${r.stderr_truncated ? " (truncated)" : ""} ---\n${r.stderr}`);
  if (r.limits_hit?.length) lines.push(`limits hit: ${r.limits_hit.join(", ")}`);
  if (r.figures_dropped) lines.push(`${r.figures_dropped} figure(s) over the size or count limit were dropped`);
  const content = [{ type: "text", text: lines.join("\n") }];
  for (const f of r.figures ?? []) content.push({ type: "image", data: f.data, mimeType: "image/png" });
  const isError = Boolean(r.exception || r.timed_out || r.oom_killed || r.signal || lost || r.exit_code !== 0);
  const structured = {
    exit_code: r.exit_code ?? null, stdout: r.stdout ?? "", stderr: r.stderr ?? "", value: r.value ?? null,
    exception: r.exception ?? null, limits_hit: r.limits_hit ?? [], figures: (r.figures ?? []).length,
  };
  if (session) structured.session_state = r.session?.state ?? null;
  return { content, isError, structuredContent: structured };
}

export function errorContent(message) {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** A call that runs code and returns its result (a run or a session's cell). */
async function runCode(ctx, args, code, session) {
  if (code.length > MAX_CODE) throw new CallError(`code: ${code.length} characters, more than ${MAX_CODE}`);
  const { status, stdout, stderr } = await sbxCall(ctx.sbxOci, ctx.socket, [...args, "-c", code],
    { guardMs: (ctx.limits.timeout + 30) * 1000 });
  const r = parseResult(stdout);
  if (!r) throw new CallError(`sbx-oci gave no result (status ${status}): ${lastMessage(stderr)}`);
  if (r.error) throw new CallError(`the sandbox could not be set up: ${r.error}`);
  return resultContent(r, { session });
}

function sessionArgs(ctx, name) {
  if (!SESSION.test(name)) throw new CallError(`session: '${name}' is not a name (letters, digits, '.', '_', '-')`);
  ctx.sessions?.add(name); // over HTTP, the MCP session ends the sessions it used (lib/http.js)
  return ["--session", `${ctx.prefix}${name}`];
}

/** Ends sbx-oci session NAME of this MCP server (or of one MCP session over HTTP). */
export async function endSession(ctx, name) {
  await sbxCall(ctx.sbxOci, ctx.socket, [...sessionArgs(ctx, name), "--end-session"], { guardMs: 30000 });
  ctx.sessions?.delete(name);
}

/** A session file call: its stdout, or CallError with the server's message. */
async function fileCall(ctx, session, option, path, input = null) {
  const { status, stdout, stderr } = await sbxCall(ctx.sbxOci, ctx.socket,
    [...sessionArgs(ctx, session), ...ctx.sessionSandbox, option, path], { input, guardMs: 60000 });
  if (status !== 0) throw new CallError(lastMessage(stderr) || `${option} ${path}: status ${status}`);
  return stdout;
}

/** Wraps a handler: a CallError (or any failure) is a tool error the model can read. */
function guarded(fn) {
  return async (args) => {
    try {
      return await fn(args);
    } catch (e) {
      return errorContent(e instanceof CallError ? e.message : `sbx-oci-mcp: ${e.message}`);
    }
  };
}

export function registerTools(server, ctx) {
  server.registerTool("run_python", {
    title: "Run Python once",
    description: "Run Python code once in a fresh, isolated sandbox (no state is kept between calls). "
      + "Returns the exit status, stdout, stderr, the value of the last expression (as the Python REPL shows it), "
      + "the limits that were hit, and matplotlib figures as PNG images. The working directory is /work; "
      + "use the session tools to keep state or exchange files.",
    inputSchema: { code: z.string().describe("the Python source to run"), ...limitsShape },
  }, guarded(async ({ code, timeout, memory, network }) =>
    runCode(ctx, ["--result", "-", "--show-value", ...ctx.limits.options({ timeout, memory, network }, ctx.force)],
      code, null)));

  server.registerTool("session_run", {
    title: "Run a cell in a session",
    description: "Run Python code in a named session, like a notebook cell: variables, imports and files in /work "
      + "persist between calls of the same session (one is created on first use). Returns stdout, stderr, the value "
      + "of the last expression, the exception if one was raised (the session keeps what ran before it), and "
      + "matplotlib figures as PNG images. A cell that crashes, is killed for memory or time, or calls os._exit "
      + "leaves the session exactly as it was before the cell (rolled back).",
    inputSchema: {
      session: z.string().describe("the session's name (letters, digits, '.', '_', '-')"),
      code: z.string().describe("the Python source of the cell"),
      timeout: limitsShape.timeout,
    },
  }, guarded(async ({ session, code, timeout }) =>
    runCode(ctx, [...sessionArgs(ctx, session), ...ctx.sessionSandbox, "--result", "-",
      ...ctx.limits.options({ timeout })], code, session)));

  server.registerTool("session_put_file", {
    title: "Put a file into a session",
    description: "Write a file into a session's /work directory (the cells' working directory), creating "
      + "directories as needed and replacing a file of that name. Give the content as text, or as base64 for binary.",
    inputSchema: {
      session: z.string(),
      path: z.string().describe("a path relative to /work, like 'data/input.csv'"),
      text: z.string().optional().describe("the content, as UTF-8 text"),
      base64: z.string().optional().describe("the content, base64-encoded (for binary files)"),
    },
  }, guarded(async ({ session, path, text, base64 }) => {
    if ((text === undefined) === (base64 === undefined)) throw new CallError("give the content as text or as base64, one of them");
    const data = text !== undefined ? Buffer.from(text, "utf8") : Buffer.from(base64, "base64");
    if (data.length > MAX_FILE) throw new CallError(`the file is ${data.length} bytes, more than ${MAX_FILE}`);
    await fileCall(ctx, session, "--put-file", path, data);
    return { content: [{ type: "text", text: `wrote /work/${path} (${data.length} bytes)` }] };
  }));

  server.registerTool("session_get_file", {
    title: "Read a file from a session",
    description: "Read a file from a session's /work directory: text as text, a PNG as an image, anything else as base64.",
    inputSchema: { session: z.string(), path: z.string().describe("a path relative to /work") },
  }, guarded(async ({ session, path }) => {
    const data = await fileCall(ctx, session, "--get-file", path);
    if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
      return { content: [{ type: "image", data: data.toString("base64"), mimeType: "image/png" }] };
    const text = data.toString("utf8");
    if (Buffer.from(text, "utf8").equals(data)) return { content: [{ type: "text", text }] };
    return { content: [{ type: "text", text: `base64:${data.toString("base64")}` }] };
  }));

  server.registerTool("session_list_files", {
    title: "List a session's files",
    description: "List the files under a session's /work directory (or a directory in it): path, type, size.",
    inputSchema: { session: z.string(), path: z.string().optional().describe("a directory relative to /work (default: all of /work)") },
  }, guarded(async ({ session, path }) => {
    const out = await fileCall(ctx, session, "--list-files", path ?? ".");
    const entries = out.toString("utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    const text = entries.map((e) => (e.truncated ? "... (more)" : `${e.type}\t${e.size}\t${e.path}`)).join("\n");
    return { content: [{ type: "text", text: text || "(empty)" }], structuredContent: { entries } };
  }));

  server.registerTool("session_end", {
    title: "End a session",
    description: "End a session: its interpreter state, sandbox and /work directory are discarded.",
    inputSchema: { session: z.string() },
  }, guarded(async ({ session }) => {
    await endSession(ctx, session);
    return { content: [{ type: "text", text: `session '${session}' ended` }] };
  }));
}
