// Calling sbx-oci: one `sbx-oci python --connect SOCKET ...` per tool call (the CLI is
// the client of the server's wire, which passes file descriptors: Node cannot), and
// the limits a call may ask for, never more than the MCP server was started with.
import { spawn } from "node:child_process";

export const NETWORKS = ["none", "loopback", "full"];

const UNITS = { "": 1, K: 1 << 10, M: 1 << 20, G: 1 << 30, T: 2 ** 40 };

/** "512M" -> bytes; null when it is not a size. */
export function parseSize(text) {
  const m = /^([0-9]+)([KMGT]?)(i?B)?$/i.exec(String(text).trim());
  return m ? Number(m[1]) * UNITS[m[2].toUpperCase()] : null;
}

/**
 * The ceilings of this MCP server (its own options): a call may ask for less, never
 * for more. memory and maxOutput are sizes ("1G"), timeout seconds, network one of
 * NETWORKS (none < loopback < full).
 */
export class Limits {
  constructor({ memory = "1G", timeout = 60, network = "none", maxOutput = "256K" } = {}) {
    if (parseSize(memory) === null) throw new Error(`--memory: '${memory}' is not a size`);
    if (parseSize(maxOutput) === null) throw new Error(`--max-output: '${maxOutput}' is not a size`);
    if (!(timeout > 0)) throw new Error(`--timeout: '${timeout}' is not a number of seconds`);
    if (!NETWORKS.includes(network)) throw new Error(`--network: '${network}' is not ${NETWORKS.join(", ")}`);
    Object.assign(this, { memory, timeout: Number(timeout), network, maxOutput });
  }

  /** python's options for a call's own asks, checked against the ceilings; with
   * `force`, the ceilings themselves where the call asks for nothing (a server that
   * is not ours has defaults of its own). */
  options({ timeout, memory, network } = {}, force = false) {
    if (force) {
      memory ??= this.memory;
      network ??= this.network;
    }
    const opts = [];
    const t = timeout ?? this.timeout;
    if (!(t > 0) || t > this.timeout)
      throw new CallError(`timeout: ${t} s is more than this server allows (${this.timeout} s)`);
    opts.push("--timeout", String(t));
    if (memory !== undefined) {
      const want = parseSize(memory);
      if (want === null) throw new CallError(`memory: '${memory}' is not a size (say 256M)`);
      if (want > parseSize(this.memory))
        throw new CallError(`memory: ${memory} is more than this server allows (${this.memory})`);
      opts.push("--memory", String(memory));
    }
    if (network !== undefined) {
      if (NETWORKS.indexOf(network) > NETWORKS.indexOf(this.network))
        throw new CallError(`network: '${network}' is more open than this server allows ('${this.network}')`);
      opts.push("--network", network);
    }
    return opts;
  }
}

/** A call the MCP server refuses (bad argument, over a limit): a tool error, not a crash. */
export class CallError extends Error {}

/**
 * Runs `sbx-oci python --connect SOCKET ARGS...` with `input` on its stdin; resolves to
 * {status, stdout (Buffer), stderr (string)}. `guardMs` kills a client that outlives
 * its run (the server has the run's own --timeout).
 */
export function sbxCall(sbxOci, socket, args, { input = null, guardMs = 600000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(sbxOci, ["python", "--connect", socket, ...args], {
      stdio: [input === null ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const out = [];
    const err = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), guardMs);
    child.stdout.on("data", (b) => out.push(b));
    child.stderr.on("data", (b) => err.push(b));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new CallError(`cannot run ${sbxOci}: ${e.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        status: code ?? 128 + (signal ? 9 : 0),
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
    if (input !== null) child.stdin.end(input);
  });
}

/** The result JSON of a `--result -` call (its last line), or null. */
export function parseResult(stdout) {
  const lines = stdout.toString("utf8").trimEnd().split("\n");
  try {
    const r = JSON.parse(lines[lines.length - 1]);
    return r && typeof r === "object" ? r : null;
  } catch {
    return null;
  }
}

/** sbx-oci's own complaint on stderr ("sbx-oci: ..."), or its last line. */
export function lastMessage(stderr) {
  const lines = stderr.split("\n").filter((l) => l.trim());
  return lines.reverse().find((l) => l.startsWith("sbx-oci")) ?? lines[0] ?? "";
}
