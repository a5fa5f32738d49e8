/**
 * Smoke test of a shoal release as a client starts it (issue 17): `--version` of both programs,
 * then `shoal-mcp` under a minimal environment (`HOME`, `TMPDIR`, a fresh `SHOAL_SESSION` and
 * `PATH=<dir of the binaries>:/usr/bin:/bin` only) answering `initialize` and one `shoal_exec`
 * through an autostarted kernel, which is then shut down. Linux and macOS.
 *
 *   deno run -A scripts/release_smoke.ts MCP_BINARY KERNEL_BINARY   (release.yml, per target)
 *   deno run -A scripts/release_smoke.ts                            (this checkout, `deno run`
 *                                                                    under the release flags)
 */
import { VERSION } from "../src/protocol/version.ts";
import { releaseFlags } from "../src/mcp/permissions.ts";
import { socketPath } from "../src/protocol/socket_path.ts";
import { converse, INITIALIZE } from "../tests/_support/converse.ts";
import { pidsMentioning } from "../tests/_support/proc.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** A directory holding `shoal-mcp` and `shoal-kernel`, as a user installs them. */
export interface Install {
  dir: string;
  /** Variables the local stand-ins need besides the minimal environment (Deno's cache). */
  env: Record<string, string>;
}

/** Copies the two binaries into a fresh directory under their installed names. */
export async function installBinaries(mcp: string, kernel: string): Promise<Install> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-smoke-bin-" });
  for (const [from, name] of [[mcp, "shoal-mcp"], [kernel, "shoal-kernel"]]) {
    await Deno.copyFile(from, `${dir}/${name}`);
    await Deno.chmod(`${dir}/${name}`, 0o755);
  }
  return { dir, env: {} };
}

/**
 * Stand-ins for the two binaries built from this checkout: `shoal-mcp` is `deno run` of main.ts
 * under exactly the release flags, `shoal-kernel` is `deno run -A` of the kernel with its V8 flags
 * (src/kernel/v8_flags), as compiled.
 */
export async function installCheckout(): Promise<Install> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-smoke-bin-" });
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const run = (flags: string[], entry: string) =>
    `#!/bin/sh\nexec ${
      [Deno.execPath(), "run", "--quiet", ...flags, `--config=${REPO}/deno.json`, entry]
        .map(quote).join(" ")
    } "$@"\n`;
  await Deno.writeTextFile(`${dir}/shoal-mcp`, run(releaseFlags(), `${REPO}/main.ts`));
  await Deno.writeTextFile(
    `${dir}/shoal-kernel`,
    run(
      ["--allow-all", `--v8-flags=${Deno.readTextFileSync(`${REPO}/src/kernel/v8_flags`).trim()}`],
      `${REPO}/src/kernel/main.ts`,
    ),
  );
  for (const name of ["shoal-mcp", "shoal-kernel"]) await Deno.chmod(`${dir}/${name}`, 0o755);
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
  return { dir, env: { DENO_DIR: denoDir } };
}

/** Runs `<dir>/<program> --version` and checks its one line. */
async function checkVersion(install: Install, program: string): Promise<string> {
  const out = await new Deno.Command(`${install.dir}/${program}`, {
    args: ["--version"],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", ...install.env },
    stdin: "null",
  }).output();
  const line = new TextDecoder().decode(out.stdout);
  if (out.code !== 0 || line !== `${program} ${VERSION}\n`) {
    throw new Error(`${program} --version: status ${out.code}, printed ${JSON.stringify(line)}`);
  }
  return line.trim();
}

/** SIGTERMs the kernel serving `socket` and waits until it has removed its socket. */
async function stopKernel(socket: string): Promise<void> {
  for (const pid of pidsMentioning(socket)) Deno.kill(pid, "SIGTERM");
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    try {
      await Deno.lstat(socket);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const pid of pidsMentioning(socket)) Deno.kill(pid, "SIGKILL");
  throw new Error(`the kernel on ${socket} did not shut down`);
}

/** What one smoke run saw. */
export interface SmokeResult {
  /** The text of the `shoal_exec` result, or the MCP error message when it failed. */
  exec: string;
  ok: boolean;
  stderr: string;
  /** The PATH the facade ran with. */
  path: string;
}

/**
 * Starts `<dir>/shoal-mcp` under the minimal environment, with `<dir>` on PATH or not, and runs
 * `initialize` and `shoal_exec echo …`; shuts down any kernel it autostarted.
 */
export async function smokeExec(install: Install, kernelOnPath: boolean): Promise<SmokeResult> {
  // Under /tmp, a runtime root the release may use sockets in, whatever TMPDIR the runner has.
  const scratch = await Deno.makeTempDir({ dir: "/tmp", prefix: "shoal-smoke-" });
  await Deno.mkdir(`${scratch}/home`);
  const path = `${kernelOnPath ? `${install.dir}:` : ""}/usr/bin:/bin`;
  // A session of its own: on macOS the socket rule ignores TMPDIR (G-SOCK-1), and the user's
  // own kernel on the default session must be left alone.
  const session = `smoke-${crypto.randomUUID().slice(0, 8)}`;
  const env = {
    ...install.env,
    HOME: `${scratch}/home`,
    TMPDIR: scratch,
    PATH: path,
    SHOAL_SESSION: session,
  };
  const socket = socketPath(session, undefined, { TMPDIR: scratch }, Deno.uid()!).path;
  try {
    const exec = { name: "shoal_exec", arguments: { src: "echo smoke-$((6*7))" } };
    const { code, frames, stderr } = await converse(`${install.dir}/shoal-mcp`, [], env, [
      INITIALIZE,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: exec },
    ]);
    const info = (frames.get(1)?.result as { serverInfo?: { name?: string } } | undefined)
      ?.serverInfo;
    if (info?.name !== "shoal-mcp") throw new Error(`initialize: ${JSON.stringify(frames.get(1))}`);
    if (code !== 0) throw new Error(`shoal-mcp exited with status ${code}: ${stderr}`);
    const call = frames.get(2) ?? {};
    const result = call.result as { content?: { text?: string }[]; isError?: boolean } | undefined;
    const text = result?.content?.[0]?.text ??
      (call.error as { message?: string } | undefined)?.message ?? JSON.stringify(call);
    return { exec: text, ok: result !== undefined && result.isError !== true, stderr, path };
  } finally {
    if (pidsMentioning(socket).length > 0) await stopKernel(socket);
    await Deno.remove(`${socket}.lock`).catch(() => {});
    await Deno.remove(scratch, { recursive: true });
  }
}

async function main(args: string[]): Promise<number> {
  if (args.length !== 0 && args.length !== 2) {
    console.error("usage: release_smoke.ts [MCP_BINARY KERNEL_BINARY]");
    return 2;
  }
  const install = args.length === 2
    ? await installBinaries(args[0], args[1])
    : await installCheckout();
  try {
    console.log(await checkVersion(install, "shoal-mcp"));
    console.log(await checkVersion(install, "shoal-kernel"));
    const run = await smokeExec(install, true);
    if (!run.ok || run.exec.trim() !== "smoke-42") {
      console.error(run.stderr);
      throw new Error(`shoal_exec under PATH=${run.path}: ${run.exec}`);
    }
    console.log(`initialize and shoal_exec with autostart under PATH=${run.path}: ok`);
    return 0;
  } catch (e) {
    console.error(`release smoke failed: ${e instanceof Error ? e.message : e}`);
    return 1;
  } finally {
    await Deno.remove(install.dir, { recursive: true });
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
