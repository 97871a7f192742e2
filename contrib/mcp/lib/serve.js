// The `sbx-oci serve` this MCP server starts for itself (unless --socket names one):
// its socket in a private directory, the MCP server's ceilings as its defaults (so a
// call that asks for nothing takes a sandbox made ahead, a standby), stopped with us.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Starts the server; resolves to {socket, stop()} once it listens. */
export async function startServe(sbxOci, limits, { preload = "", standby = 2, root = null, maxRuns = null } = {}) {
  const dir = mkdtempSync(join(process.env.XDG_RUNTIME_DIR || tmpdir(), "sbx-oci-mcp-"));
  const socket = join(dir, "sbx.sock");
  const log = join(dir, "serve.log");
  const args = [];
  if (root) args.push("--root", root);
  args.push("serve", "--socket", socket, "--memory", limits.memory, "--network", limits.network,
    "--timeout", String(limits.timeout), "--max-output", limits.maxOutput, "--standby", String(standby));
  if (preload) args.push("--preload", preload);
  if (maxRuns) args.push("--max-runs", String(maxRuns));
  const { openSync, closeSync } = await import("node:fs");
  const fd = openSync(log, "a");
  const child = spawn(sbxOci, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  let exited = null;
  child.on("exit", (code, sig) => { exited = sig ? `signal ${sig}` : `status ${code}`; });
  const stop = () => {
    if (exited === null) child.kill("SIGTERM");
    return new Promise((resolve) => {
      const done = () => { rmSync(dir, { recursive: true, force: true }); resolve(); };
      if (exited !== null) done();
      else child.once("exit", done);
    });
  };
  for (let i = 0; i < 300; i++) {
    if (exited !== null) break;
    if (existsSync(socket) && readFileSync(log, "utf8").includes("listening on")) return { socket, stop, pid: child.pid };
    await new Promise((r) => setTimeout(r, 50));
  }
  const why = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").pop() : "";
  await stop();
  throw new Error(`sbx-oci serve did not start (${exited ?? "no answer in 15 s"}): ${why}`);
}
