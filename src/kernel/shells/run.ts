import process from "node:process";
import { concatBytes } from "../../protocol/concat_bytes.ts";
import { PIPE_LINGER_MS, READ_CHUNK } from "../../protocol/limits.ts";
import { within } from "../../protocol/within.ts";
import type { Resident } from "../sandbox/resident.ts";
import type { BashChild } from "../bash/bash_child.ts";
import { type Fifo, openFifo, readRestNow } from "../bash/fifo.ts";
import { fillScratchInput } from "../bash/scratch_input.ts";
import { groupExists } from "../bash/group_leader.ts";
import { heldElsewhere, outputPipes } from "../bash/pipe_holders.ts";
import type { ScratchPool } from "../bash/scratch_pool.ts";
import { ParsedDumps } from "../bash/parsed_dumps.ts";
import { DRIVER, launchable, restoreScript, type ShellState } from "../bash/shell_state.ts";
import { spawnDriver } from "./spawn.ts";
import type { WarmShell } from "./warm_shell.ts";

const encoder = new TextEncoder();

/** How often the linger after bash's exit looks at its process group and pipes. */
const LINGER_POLL_MS = 50;
/**
 * Longest wait for the EOF of output pipes no other process holds: loaded kernels were seen to
 * deliver such reads up to 3 s late; past this bound the output is cut as if held elsewhere.
 */
const PIPE_EOF_WAIT_MS = 30_000;

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
  /** Where a cold run takes its private scratch directory from (and gives it back). */
  scratch: ScratchPool;
  /**
   * A warm shell that fits `state` and the run's sandbox ({@link WarmShell.fits}), to hand `src` over to;
   * when it cannot take it, it is discarded and the run starts cold.
   */
  warm: WarmShell | null;
  stdout: ByteSink;
  stderr: ByteSink;
  /**
   * Called once the process exists, with its pid (= process group id) and whether that is the
   * nsenter it entered its sandbox through ({@link BashChild.entered}).
   */
  onSpawn?: (pid: number, entered: boolean) => void;
  /** Called once bash has exited, before its pipes are drained (K-BASH-3). */
  onExit?: () => void;
  /**
   * The resident sandbox a cold start enters (P-SBX-2), asked for only then; null to run
   * unconfined.
   */
  sandbox: (() => Promise<Resident>) | null;
}

/**
 * Reads a pipe into one reused buffer (BYOB): a fresh buffer per read would leave tens of MiB of
 * garbage behind a large output before the GC runs, breaking the K-BASH-11 memory bound.
 */
async function pump(
  stream: ReadableStream<Uint8Array>,
  sink: ByteSink,
  stop: AbortSignal,
  activity: { at: number },
) {
  const reader = stream.getReader({ mode: "byob" });
  stop.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = new Uint8Array(READ_CHUNK);
  try {
    while (true) {
      const { done, value } = await reader.read(buffer);
      if (done) return;
      activity.at = Infinity; // storing: not idle however long the sink takes
      await sink.write(value);
      activity.at = performance.now();
      buffer = new Uint8Array(value.buffer);
    }
  } catch {
    // cancelled after the linger period: later output is lost (K-BASH-3)
  }
}

/**
 * Waits, once bash has exited, for its pipes to reach EOF (K-BASH-3): at most PIPE_LINGER_MS
 * while a descendant in its process group lives (it may hold a pipe open for good). With the
 * group gone, as long as output still arrives or is being stored, so what bash wrote before it
 * exited is never cut off by a slow sink or a busy kernel, unless a process that left the group
 * holds them once PIPE_LINGER_MS have passed (it may write for good). Pipes silent for
 * PIPE_LINGER_MS and as many polls are stopped when such a process holds them; when none does (`pipes`
 * known), their last bytes and EOF are on their way and are awaited: a loaded kernel can deliver
 * a ready pipe read seconds after timers have fired many times (issue 13).
 */
async function lingerAfterExit(
  pumps: Promise<void>,
  drained: () => boolean,
  pgid: number,
  activity: { at: number },
  pipes: ReadonlySet<string> | null,
): Promise<void> {
  const exited = performance.now();
  let seen = activity.at;
  let quietPolls = 0;
  let holdersLooked = false;
  while (!drained()) {
    const now = performance.now();
    if (activity.at !== seen) [seen, quietPolls] = [activity.at, 0];
    const quiet = now - Math.max(exited, seen) >= PIPE_LINGER_MS &&
      quietPolls >= PIPE_LINGER_MS / LINGER_POLL_MS;
    if (now - exited >= PIPE_LINGER_MS) {
      if (groupExists(pgid)) return;
      // A process that left the group and writes on would keep the pipes busy for good: once
      // the linger is over, output held elsewhere is its, not bash's. Looked at once: a pipe no
      // other process holds cannot be taken up again.
      if (!holdersLooked && pipes !== null) {
        holdersLooked = true;
        if (heldElsewhere(pipes)) return;
      }
    }
    if (quiet) {
      // No other holder: the last bytes and EOF are on their way, within a bound.
      if (pipes !== null && !heldElsewhere(pipes)) await within(pumps, PIPE_EOF_WAIT_MS);
      return;
    }
    await within(pumps, LINGER_POLL_MS);
    quietPolls++;
  }
}

/** The state dumps of the last runs, parsed (most runs dump what the one before them did). */
const parsedDumps = new ParsedDumps();

/** Bytes of one read of a state dump: most dumps take one. */
const DUMP_READ = 16 * 1024;

/**
 * How long a run goes before its state dump is read as it comes. Bash writes its dump a line at
 * a time, and a reader waiting on the FIFO was woken for each (some 60 wakeups of the kernel and
 * 2 ms of CPU per sandboxed run, issue 34): a short run's dump waits in the FIFO until bash has
 * exited, and a dump larger than the FIFO holds waits at most this long for its first read.
 */
const DUMP_READ_DELAY_MS = 20;

/**
 * The most bytes of a state dump kept: a process inside the sandbox can write its run's dump FIFO
 * too, and all it wrote was held in the kernel's memory (1000 MB of zeros took it past 6 GB). Far
 * more than any state a session restores at every exec.
 */
const DUMP_LIMIT = 64 * 1024 * 1024;

/**
 * The bytes of `stream` up to its end, or up to `stop`, read into one buffer (BYOB): a default
 * reader of a byte stream allocates 64 KiB per read, garbage of every sandboxed run's dump. Null
 * past {@link DUMP_LIMIT}: the rest is read and dropped, so that the writer is not left blocked.
 */
async function readAll(
  stream: ReadableStream<Uint8Array>,
  stop: AbortSignal,
): Promise<Uint8Array | null> {
  const reader = stream.getReader({ mode: "byob" });
  stop.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  let buffer = new Uint8Array(DUMP_READ);
  try {
    while (true) {
      const { done, value } = await reader.read(buffer);
      if (done || value === undefined) break;
      size += value.length;
      if (size <= DUMP_LIMIT) chunks.push(value.slice());
      buffer = new Uint8Array(value.buffer);
    }
  } catch {
    // failed: what was read is all there is
  }
  return size > DUMP_LIMIT ? null : concatBytes(chunks);
}

/**
 * A cold start: the scratch files written, then bash spawned on them. Sandboxed, the group's
 * leader (the launcher's bash, or nsenter) has the run's pid (P-SBX-4); bash inside dumps its state into the scratch
 * directory, which lies in the resident's bound directory.
 */
function spawnCold(run: BashRun, resident: Resident | null, dir: string): BashChild {
  const state = launchable(run.state);
  fillScratchInput(`${dir}/src`, encoder.encode(run.src));
  fillScratchInput(`${dir}/restore`, encoder.encode(restoreScript(state)));
  return spawnDriver(run.bash, state, resident, dir, DRIVER);
}

/** A run's bash process, scratch directory and its pool, as {@link start} gives them. */
interface Started {
  child: BashChild;
  dir: string;
  pool: ScratchPool;
  /**
   * Its output pipes' identities ({@link outputPipes}): a warm shell's read while it started, a
   * cold spawn's right after the spawn (null in the rare case it already ended).
   */
  pipes: ReadonlySet<string> | null;
  /** The `state` FIFO bash dumps into, opened before it can ({@link ScratchPool.stateFifo}). */
  state: Fifo | null;
}

/** The `state` FIFO of scratch directory `dir` opened for the dump, when `pool` makes one. */
function stateFifo(pool: ScratchPool, dir: string): Fifo | null {
  return pool.stateFifo ? openFifo(`${dir}/state`) : null;
}

/** Closes a {@link Fifo}'s ends, for a run that never started. */
function closeFifo(fifo: Fifo | null): void {
  fifo?.keeper.close();
  fifo?.reader.cancel().catch(() => {});
}

/** The running bash of a run: the warm shell when it took the source, else a cold spawn. */
async function start(run: BashRun): Promise<Started> {
  if (run.warm !== null) {
    const { child, dir, pool, pipes } = run.warm;
    let state: Fifo | null = null;
    try {
      state = stateFifo(pool, dir);
      if (run.warm.handOver(run.src, run.state)) return { child, dir, pool, pipes, state };
    } catch {
      // no state FIFO: the shell is discarded, as one that died
    }
    closeFifo(state);
    await run.warm.discard();
  }
  let resident = run.sandbox === null ? null : await run.sandbox();
  await resident?.untilSpare();
  if (resident?.stopped) {
    // stopped while the spawn waited (the host removed a protection, P-SBX-6): a new one, once
    resident = await run.sandbox!();
    await resident.untilSpare();
  }
  const pool = resident?.pool ?? run.scratch;
  const dir = pool.acquire();
  let state: Fifo | null = null;
  try {
    state = stateFifo(pool, dir);
    const child = spawnCold(run, resident, dir);
    return { child, dir, pool, pipes: child.pipes ?? outputPipes(child.pid), state };
  } catch (e) {
    closeFifo(state);
    pool.release(dir);
    throw e;
  }
}

/**
 * Runs `src` in a fresh non-interactive bash that leads its own process group, with stdin from
 * /dev/null, the session cwd and exactly the session's exported environment (K-BASH-1..3).
 * `dur_ns` counts from the hand-over of the source (a warm shell) or the spawn (a cold run).
 */
export async function runBash(run: BashRun): Promise<BashExit> {
  const started = process.hrtime.bigint();
  const { child, dir, pool, pipes, state } = await start(run);
  run.onSpawn?.(child.pid, child.entered === true);
  // read once bash has exited, or from DUMP_READ_DELAY_MS on
  const giveUp = new AbortController();
  const dump = state === null
    ? null
    : within(child.status, DUMP_READ_DELAY_MS).then(() => readAll(state.reader, giveUp.signal));
  const stop = new AbortController();
  const activity = { at: performance.now() };
  let drained = false;
  const pumps = Promise.all([
    pump(child.stdout, run.stdout, stop.signal, activity),
    pump(child.stderr, run.stderr, stop.signal, activity),
  ]).then(() => {
    drained = true;
  });
  const status = await child.status;
  const durNs = process.hrtime.bigint() - started;
  run.onExit?.();
  if (state !== null) {
    state.keeper.close(); // bash is gone: its dump ends at the FIFO's EOF
    readRestNow(state);
  }
  await lingerAfterExit(pumps, () => drained, child.pid, activity, pipes);
  // an abort costs 0.09 ms (it makes a DOMException): only pumps still reading need it
  if (!drained) stop.abort();
  await pumps;
  // a dump that does not end (a process inside holds the FIFO open), or past DUMP_LIMIT, is lost
  const dumped = dump === null ? null : await within(dump, PIPE_LINGER_MS);
  if (dump !== null && dumped === null) giveUp.abort();
  let final: ShellState | null = null;
  if (status.signal === null && (dump === null || dumped !== null)) {
    try {
      final = parsedDumps.parse(
        dumped ?? Deno.readFileSync(`${dir}/state`),
        run.bashVariables,
        run.state,
      );
    } catch {
      final = null;
    }
  }
  // a process left holding a FIFO of the directory would write into a later run's
  if (!drained || (dump !== null && dumped === null)) pool.discard(dir);
  else pool.release(dir);
  return {
    status: status.signal === null ? status.code : null,
    signal: status.signal,
    pid: child.pid,
    durNs,
    final,
  };
}
