import process from "node:process";
import { PIPE_LINGER_MS, READ_CHUNK } from "../../protocol/limits.ts";
import { sandboxCommand, type Sandboxing, SCRATCH_MOUNT } from "../sandbox/command.ts";
import { DRIVER, parseDump, restoreScript, type ShellState } from "./shell_state.ts";

/**
 * Where captured output goes; `write` resolves once the chunk is stored (backpressure). The
 * chunk's buffer is reused for the next read after that, so a sink must not keep a reference.
 */
export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
}

/** How one bash process ended. */
export interface BashExit {
  /** Exit status, or null when bash was killed by a signal. */
  status: number | null;
  signal: string | null;
  pid: number;
  durNs: bigint;
  /** The final shell state, or null when it could not be captured (K-BASH-6). */
  final: ShellState | null;
}

/** Inputs of one bash run. */
export interface BashRun {
  bash: string;
  /** Variables bash defines by itself (from {@link bashOwnVariables}). */
  bashVariables: ReadonlySet<string>;
  src: string;
  state: ShellState;
  /** A private scratch directory for this run; removed afterwards. */
  workDir: string;
  stdout: ByteSink;
  stderr: ByteSink;
  /** Called once the process exists, with its pid (= process group id). */
  onSpawn?: (pid: number) => void;
  /** The sandbox to run in (P-SBX-2), or null to run unconfined. */
  sandbox: Sandboxing | null;
}

/**
 * Reads a pipe into one reused buffer (BYOB): a fresh buffer per read would leave tens of MiB of
 * garbage behind a large output before the GC runs, breaking the K-BASH-11 memory bound.
 */
async function pump(stream: ReadableStream<Uint8Array>, sink: ByteSink, stop: AbortSignal) {
  const reader = stream.getReader({ mode: "byob" });
  stop.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = new Uint8Array(READ_CHUNK);
  try {
    while (true) {
      const { done, value } = await reader.read(buffer);
      if (done) return;
      await sink.write(value);
      buffer = new Uint8Array(value.buffer);
    }
  } catch {
    // cancelled after the linger period: later output is lost (K-BASH-3)
  }
}

/**
 * Runs `src` in a fresh non-interactive bash that leads its own process group, with stdin from
 * /dev/null, the session cwd and exactly the session's exported environment (K-BASH-1..3).
 * Sandboxed, bwrap leads the group and its pid is the run's (P-SBX-4); bash inside dumps its
 * state into the scratch directory bound into the sandbox.
 */
export async function runBash(run: BashRun): Promise<BashExit> {
  await Deno.mkdir(run.workDir, { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(`${run.workDir}/src`, run.src, { mode: 0o600 });
  await Deno.writeTextFile(`${run.workDir}/restore`, restoreScript(run.state), { mode: 0o600 });
  const started = process.hrtime.bigint();
  const bashArgv = (dir: string) => [run.bash, "--noprofile", "--norc", "-c", DRIVER, "shoal", dir];
  const [cmd, ...args] = run.sandbox === null ? bashArgv(run.workDir) : sandboxCommand(
    { ...run.sandbox, cwd: run.state.cwd, scratch: run.workDir },
    bashArgv(SCRATCH_MOUNT),
  );
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, {
      args,
      cwd: run.state.cwd,
      env: Object.fromEntries(run.state.env),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (e) {
    await Deno.remove(run.workDir, { recursive: true }).catch(() => {});
    throw e;
  }
  run.onSpawn?.(child.pid);
  const stop = new AbortController();
  const pumps = Promise.all([
    pump(child.stdout, run.stdout, stop.signal),
    pump(child.stderr, run.stderr, stop.signal),
  ]);
  const status = await child.status;
  const durNs = process.hrtime.bigint() - started;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const linger = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, PIPE_LINGER_MS);
  });
  await Promise.race([pumps, linger]);
  clearTimeout(timer);
  stop.abort();
  await pumps;
  let final: ShellState | null = null;
  if (status.signal === null) {
    try {
      final = parseDump(await Deno.readFile(`${run.workDir}/state`), run.bashVariables);
    } catch {
      final = null;
    }
  }
  await Deno.remove(run.workDir, { recursive: true }).catch(() => {});
  return {
    status: status.signal === null ? status.code : null,
    signal: status.signal,
    pid: child.pid,
    durNs,
    final,
  };
}
