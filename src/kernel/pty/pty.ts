/** One program on a real pseudo-terminal, rendered by a headless terminal emulator (SPEC §3.10, §8). */

import type xterm from "@xterm/headless";
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { CallerFault } from "../../protocol/caller_fault.ts";
import { signalGroup } from "../bash/group_leader.ts";
import {
  CLOSE_ENDING,
  endLeaderlessSession,
  endLedSession,
  type PtyEnding,
} from "./session_end.ts";
import { programExists } from "./program_lookup.ts";
import { hostEnv, insideArgv } from "../sandbox/host_env.ts";
import { boundEmulator } from "./emulator_bounds.ts";
import { resizeEmulator } from "./emulator_resize.ts";
import { LAUNCH_SCRIPT, SANDBOX_LAUNCH_SCRIPT } from "./launch_script.ts";
import { sandboxCommand, type Sandboxing } from "../sandbox/command.ts";
import { lowerFloorOf } from "../sandbox/port_floor.ts";
import { holdPlaceholders, releaseAfter } from "../sandbox/placeholders.ts";
import { StartGate } from "../sandbox/start_gate.ts";
import { protectionInPlace, untilEnded } from "../sandbox/protected_mounts.ts";
import { guardProtection } from "../sandbox/protection_guard.ts";
import { PTY_EVENT_INTERVAL_MS, PTY_MAX_DIMENSION } from "../../protocol/limits.ts";
import { feedTerminalUntil } from "./feed.ts";
import {
  closeFd,
  EAGAIN,
  EINTR,
  EIO,
  openPty,
  type PtyPair,
  readFd,
  setWindowSize,
  writeFd,
} from "./libc.ts";
import { MasterWait } from "./master_wait.ts";
import { ReaderTurns } from "./reader_turn.ts";
import { trackCursorVisibility } from "./cursor_visibility.ts";
import { GridWatch } from "./grid_watch.ts";

type Terminal = InstanceType<typeof xterm.Terminal>;

let emulator: Promise<typeof xterm.Terminal> | null = null;

/** The emulator class, loaded by the first `open`: a kernel that opens no PTY never holds it. */
function loadEmulator(): Promise<typeof xterm.Terminal> {
  emulator ??= import("@xterm/headless").then((m) => m.default.Terminal);
  return emulator;
}

/**
 * Most bytes read from the master and parsed in one step before other kernel work runs. A master
 * read returns at most a few KiB (the line discipline's buffer), each a system call, so this bounds
 * how long other requests, and a `pty.read` during a flood, wait for one step.
 */
const READ_CHUNK = 32 * 1024;
/**
 * Longest time in ms one step keeps reading the master. During a flood the program refills the
 * master as fast as it is read, so a step that waited for {@link READ_CHUNK} bytes would last as
 * long as the program takes to write them (tens of ms on a loaded machine), holding up every
 * other request and the `pty.read` that started the step.
 */
export const STEP_MS = 1;
/**
 * Longest time in ms one step goes on parsing what it read, past its first slice (see
 * `feedTerminalUntil`); the rest waits for the next step.
 */
const PARSE_MS = 8;
/** Pause in ms of the reader after an unexpected read error while our slave fd is open. */
const ERROR_PAUSE_MS = 100;
/** Wait in ms for more output after the child's exit while a grandchild still holds the slave. */
const EXIT_WAIT_MS = 16;
/**
 * Empty waits, and bytes, after the child's exit before its output counts as drained: the OS holds
 * less of it (64 KiB on Linux), and a job it left on the terminal may write without end (K-PTY-11).
 */
const DRAIN_WAITS_AFTER_EXIT = 8;
const DRAIN_BYTES_AFTER_EXIT = 1024 * 1024;
/** Longest wait in ms between write attempts while the child is not reading its input. */
const MAX_WRITE_WAIT_MS = 32;
/** A write that makes no progress for this long (the child is not reading) returns what it sent. */
const WRITE_STALL_MS = 2000;
/** Most bytes of the emulator's replies (cursor reports, device attributes) queued to be written. */
const REPLY_BACKLOG = 4096;
/**
 * Most bytes of `pty.send` input queued to be written: a send past it writes nothing (`sent` 0).
 * Each queued write waits for those before it, up to {@link WRITE_STALL_MS} each while the program
 * reads nothing, so a client that pipelined sends grew the kernel by their whole size (120 sends of
 * 1 MiB: 259 MiB, held for 4 minutes).
 */
const INPUT_BACKLOG = 4 * 1024 * 1024;

/** How to start a program on a PTY; `env` is the complete environment (TERM is added when missing). */
export interface PtyOpenOptions {
  cmd: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** The sandbox the program runs in (P-SBX-2), or null to run it unconfined. */
  sandbox: Sandboxing | null;
  /** The directory of the proxy's socket for `sandbox.net` (P-NET-1); none: loopback only. */
  proxy?: string | null;
  /** nsenter, by which a forwarded port below 1024 is opened (`port_floor.ts`). */
  nsenter?: string;
  /**
   * The kernel's private scratch directory, where a sandboxed program's start gate is made
   * ({@link StartGate}); needed with `sandbox`.
   */
  scratch?: string;
}

/** How a PTY's child ended: an exit status, or the name of the signal that killed it. */
export interface PtyExit {
  status: number | null;
  signal: string | null;
}

/** Liveness announced on every grid change and once at exit (K-PTY-13 payload without `pty_id`). */
export interface PtyState {
  alive: boolean;
  exit: PtyExit | null;
}

/** A `pty.read` result without `pty_id` (K-PTY-3). */
export interface PtyScreen {
  cmd: string;
  cols: number;
  rows: number;
  screen: string[];
  cursor: { row: number; col: number; hidden: boolean };
  changed: boolean;
  alive: boolean;
  exit: PtyExit | null;
  pid: number;
}

/** Clamps a requested PTY width or height to 1..{@link PTY_MAX_DIMENSION}. */
export function clampDimension(n: number): number {
  return Math.min(PTY_MAX_DIMENSION, Math.max(1, Math.trunc(n) || 1));
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function spawnFailed(cmd: string, why: string): RpcError {
  return new RpcError(ErrorCode.PTY_SPAWN_FAILED, `cannot start ${cmd} on a pty: ${why}`, { cmd });
}

/** A child program on a pseudo-terminal plus the emulator that renders its output. */
export class Pty {
  /** Process id of the child (session and process-group leader). */
  readonly pid: number;
  /** The argv joined by single spaces. */
  readonly cmd: string;

  #fd: number;
  /** The reader's waits for the master, ended early by the reap and by close. */
  #wait: MasterWait;
  /** Our own slave fd, held until the child is reaped (see openPty); null after. */
  #slave: number | null;
  #child: Deno.ChildProcess;
  #term: Terminal;
  #cols: number;
  #rows: number;
  #cursorHidden = false;
  /** The child's wait status once it has been reaped. */
  #status: Deno.CommandStatus | null = null;
  /** Set once the child is reaped and its output drained into the emulator. */
  #exit: PtyExit | null = null;
  #closing = false;
  #closed: Promise<PtyExit> | null = null;
  #finished: Promise<void>;
  /** Reused buffer for reads of the master (one reader at a time: everything runs on one thread). */
  #buf = new Uint8Array(READ_CHUNK);
  /** Output read and not yet parsed (a step's time ran out), parsed before anything more is read. */
  #pending: Uint8Array | null = null;
  #writes: Promise<unknown> = Promise.resolve();
  #replyBacklog = 0;
  #inputBacklog = 0;
  #lastReadText: string | null = null;
  /** The grid's text as the last event saw it. */
  #watch: GridWatch;
  #eventTimer: ReturnType<typeof setTimeout> | undefined;
  #lastEmitAt = -Infinity;
  #listeners = new Set<(state: PtyState) => void>();

  private constructor(
    Emulator: typeof xterm.Terminal,
    pair: PtyPair,
    child: Deno.ChildProcess,
    cmd: string,
    cols: number,
    rows: number,
    reportedExit: () => Deno.CommandStatus | null,
  ) {
    this.#fd = pair.master;
    this.#wait = new MasterWait(pair.master);
    this.#slave = pair.slave;
    this.#child = child;
    this.pid = child.pid;
    this.cmd = cmd;
    this.#cols = cols;
    this.#rows = rows;
    this.#term = new Emulator({
      cols,
      rows,
      scrollback: 0,
      allowProposedApi: true,
      logLevel: "off",
    });
    boundEmulator(this.#term);
    trackCursorVisibility(this.#term, (hidden) => this.#cursorHidden = hidden);
    this.#watch = new GridWatch(this.#term, (i) => this.#row(i), () => this.#rows);
    // Answers to the program's terminal queries (device attributes, cursor position) go back to it.
    this.#term.onData((data) => this.#reply(new TextEncoder().encode(data)));
    this.#term.onBinary((data) =>
      this.#reply(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff))
    );
    const reaped = child.status.then((status) => {
      // a sandbox's waiter tells how the program ended, which bwrap's own status cannot
      this.#status = reportedExit() ?? status;
      // The child opened the slave (or never will): from now on EIO on the master means drained.
      this.#releaseSlave();
      this.#wait.wake();
    });
    this.#finished = Promise.all([this.#readLoop(), reaped]).then(() => this.#finish());
  }

  /**
   * Starts `opts.cmd` on a new PTY as session leader with the PTY as controlling terminal,
   * through the `sh` launcher (see LAUNCH_SCRIPT).
   * Sizes are clamped to 1..1000. Throws `-32023` (data `{cmd}`) when it cannot be started.
   */
  static async open(opts: PtyOpenOptions): Promise<Pty> {
    const cmd = [opts.cmd, ...opts.args].join(" ");
    const cols = clampDimension(opts.cols);
    const rows = clampDimension(opts.rows);
    const env = { ...opts.env };
    env.TERM ??= "xterm-256color";
    if (!programExists(opts.cmd, opts.cwd, env, opts.sandbox?.view ?? null)) {
      throw spawnFailed(opts.cmd, "program not found");
    }
    const Emulator = await loadEmulator();
    let pair: PtyPair | undefined;
    let child: Deno.ChildProcess;
    const keepPwd = Object.hasOwn(env, "PWD");
    const { sandbox } = opts;
    let gate: StartGate | null = null;
    let release = () => {};
    try {
      if (sandbox !== null) {
        if (opts.scratch === undefined) throw new Error("no scratch directory for the sandbox");
        gate = StartGate.open(opts.scratch);
        release = holdPlaceholders(sandbox.view.protection);
      }
      pair = openPty();
      setWindowSize(pair.slave, cols, rows);
      // sh and bwrap run on the host: names that would load code there are set only inside
      const split = sandbox === null ? null : hostEnv(Object.entries(env));
      child = new Deno.Command("/bin/sh", {
        args: [
          "-c",
          sandbox === null ? LAUNCH_SCRIPT : SANDBOX_LAUNCH_SCRIPT,
          pair.slavePath,
          keepPwd ? "keep" : "",
          // inside, the held-back names are set for the program alone, after the gate and its waiter
          ...(sandbox === null || gate === null ? [opts.cmd, ...opts.args] : sandboxCommand({
            ...sandbox,
            cwd: opts.cwd,
            scratch: gate.dir,
            proxy: opts.proxy ?? null,
          }, gate.wrap(insideArgv(split!.inside, [opts.cmd, ...opts.args]), keepPwd))),
        ],
        cwd: opts.cwd,
        clearEnv: true,
        env: split === null ? env : Object.fromEntries(split.host),
        stdin: "null",
        stdout: "null",
        stderr: "null",
        // setsid() in the child before exec: a session and process-group leader without a terminal.
        detached: true,
      }).spawn();
    } catch (e) {
      gate?.close();
      release();
      if (pair) {
        closeFd(pair.slave);
        closeFd(pair.master);
      }
      throw spawnFailed(opts.cmd, e instanceof Error ? e.message : String(e));
    }
    const floor = lowerFloorOf(child.pid, sandbox?.portFloor ?? null, opts.nsenter);
    let init: number | null = null;
    // its placeholders go once nothing of the sandbox is left to bind them
    releaseAfter(child.status.then(() => init === null ? undefined : untilEnded(init)), release);
    try {
      // its protections are checked in place before the program runs, as a resident's (P-SBX-6)
      await floor; // before the program runs: the gate holds it
      if (gate !== null) init = await gate.pass(child, sandbox!.view.protection);
      if (init !== null) {
        const inside = init;
        const protection = sandbox!.view.protection;
        // a protection the host removes while it runs frees the name inside: it ends (P-SBX-6)
        guardProtection(
          () => true,
          () => protectionInPlace(inside, protection),
          child.status,
          () => signalGroup(child.pid, "SIGKILL"),
        );
      }
    } catch (e) {
      signalGroup(child.pid, "SIGKILL");
      await child.status;
      closeFd(pair.slave);
      closeFd(pair.master);
      throw spawnFailed(opts.cmd, e instanceof Error ? e.message : String(e));
    }
    return new Pty(Emulator, pair, child, cmd, cols, rows, () => gate?.reportedExit() ?? null);
  }

  /** Current width in columns. */
  get cols(): number {
    return this.#cols;
  }

  /** Current height in rows. */
  get rows(): number {
    return this.#rows;
  }

  /** False once the child has exited and its output has been rendered. */
  get alive(): boolean {
    return this.#exit === null;
  }

  /** How the child ended, or null while it is alive. */
  get exit(): PtyExit | null {
    return this.#exit;
  }

  /** Whether the program enabled cursor-key application mode (DECCKM). */
  get applicationCursorKeys(): boolean {
    return this.#term.modes.applicationCursorKeysMode;
  }

  /** Registers a listener for grid changes (at most 20/s, trailing edge) and the exit; returns its remover. */
  onEvent(listener: (state: PtyState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Writes input bytes to the program; resolves to the count written. Throws `-32603` when the child is gone. */
  write(bytes: Uint8Array): Promise<number> {
    this.#assertOpen();
    return this.#queueWrite(bytes);
  }

  /** The rendered grid (K-PTY-3, K-PTY-9, K-PTY-10), after rendering all output available now. */
  read(): Promise<PtyScreen> {
    this.#assertOpen();
    if (this.#exit === null) this.#pump();
    const screen = this.#grid();
    const text = screen.join("\n");
    const changed = text !== this.#lastReadText;
    this.#lastReadText = text;
    const buffer = this.#term.buffer.active;
    return Promise.resolve({
      cmd: this.cmd,
      cols: this.#cols,
      rows: this.#rows,
      screen,
      cursor: {
        row: buffer.cursorY,
        col: Math.min(buffer.cursorX, this.#cols - 1),
        hidden: this.#cursorHidden,
      },
      changed,
      alive: this.alive,
      exit: this.#exit,
      pid: this.pid,
    });
  }

  /** Resizes the OS window (SIGWINCH to the child) and the emulator; sizes are clamped to 1..1000. */
  resize(cols: number, rows: number): void {
    this.#assertOpen();
    this.#cols = clampDimension(cols);
    this.#rows = clampDimension(rows);
    // Once the child is reaped nobody is left to tell; the emulator alone changes size.
    if (this.#slave !== null) setWindowSize(this.#slave, this.#cols, this.#rows);
    resizeEmulator(this.#term, this.#cols, this.#rows);
    this.#watch.touchAll();
    this.#lastReadText = null;
    this.#scheduleEvent();
  }

  /**
   * `ending`'s signal to the terminal's session (by default SIGHUP), SIGKILL after its grace if
   * anything of it is still alive, reap, and release the PTY. Resolves to how the child ended;
   * calling it again gives the same result.
   */
  close(ending: PtyEnding = CLOSE_ENDING): Promise<PtyExit> {
    this.#closed ??= this.#shutdown(ending);
    return this.#closed;
  }

  async #shutdown(ending: PtyEnding): Promise<PtyExit> {
    // A child reaped earlier is not signalled: its pid may since belong to another process group.
    if (this.#status === null) {
      // Whatever in its session outlived the hangup is killed: closing never detaches.
      await endLedSession(this.pid, this.#child.status, ending);
    } else {
      // what is left of the session (jobs that ignored the hangup or outlived their shell)
      await endLeaderlessSession(this.pid, ending);
    }
    this.#closing = true;
    this.#wait.wake();
    await this.#finished;
    await this.#writes;
    clearTimeout(this.#eventTimer);
    this.#listeners.clear();
    this.#releaseSlave();
    this.#wait.close();
    this.#term.dispose();
    return this.#exit!;
  }

  #assertOpen(): void {
    if (this.#closed !== null) throw new RpcError(ErrorCode.UNKNOWN_PTY, "pty is closed");
  }

  /**
   * Sends an emulator reply in its turn, what the input takes at once, or none past the backlog:
   * a program that asks without reading (`yes $'\e[6n'`) queued 2 GB of answers in 16 s.
   */
  #reply(bytes: Uint8Array): void {
    if (this.#replyBacklog + bytes.length > REPLY_BACKLOG) return;
    this.#replyBacklog += bytes.length;
    const run = this.#writes.then(() => this.#writeAll(bytes, false));
    this.#writes = run.catch(() => {}).finally(() => this.#replyBacklog -= bytes.length);
  }

  #queueWrite(bytes: Uint8Array): Promise<number> {
    if (this.#inputBacklog > 0 && this.#inputBacklog + bytes.length > INPUT_BACKLOG) {
      return Promise.resolve(0);
    }
    this.#inputBacklog += bytes.length;
    const run = this.#writes.then(() => this.#writeAll(bytes));
    this.#writes = run.catch(() => {}).finally(() => this.#inputBacklog -= bytes.length);
    return run;
  }

  async #writeAll(bytes: Uint8Array, patient = true): Promise<number> {
    let sent = 0;
    let wait = 1;
    let progressAt = Date.now();
    while (sent < bytes.length) {
      if (this.#status !== null || this.#closing) throw childGone();
      const n = writeFd(this.#fd, bytes.subarray(sent));
      if (n > 0) {
        sent += n;
        wait = 1;
        progressAt = Date.now();
      } else if (n === -EAGAIN) {
        if (!patient || Date.now() - progressAt >= WRITE_STALL_MS) break;
        await delay(wait);
        wait = Math.min(wait * 2, MAX_WRITE_WAIT_MS);
      } else if (n !== -EINTR) {
        throw childGone();
      }
    }
    return sent;
  }

  /**
   * Moves output from the master into the emulator until the child is gone and drained, or closing.
   * While output flows it reads and parses one chunk per turn of the event loop (other kernel work
   * runs in between); while idle it waits for the master to become readable (see MasterWait),
   * until the reap or close wakes it.
   */
  async #readLoop(): Promise<void> {
    let [emptyAfterExit, bytesAfterExit] = [0, 0];
    const turns = new ReaderTurns();
    while (!this.#closing) {
      const { bytes, errno } = this.#pump();
      if (bytes > 0) {
        if (this.#status !== null && (bytesAfterExit += bytes) >= DRAIN_BYTES_AFTER_EXIT) break;
        await turns.next();
        continue;
      }
      if (this.#status !== null) {
        // EIO: every slave fd is closed and the output is drained.
        if (errno !== EAGAIN || ++emptyAfterExit >= DRAIN_WAITS_AFTER_EXIT) break;
        await this.#wait.until(EXIT_WAIT_MS);
      } else if (errno === EAGAIN) {
        await this.#wait.until(null);
      } else {
        // Not expected while our slave fd is open; wait for the reap instead of spinning.
        await delay(ERROR_PAUSE_MS);
      }
    }
  }

  /**
   * Parses output left by the last step, or else reads what the master holds now (at most one
   * chunk, for at most {@link STEP_MS}) and parses it; the count parsed and the stopping errno (0
   * when the chunk or the time ran out).
   */
  #pump(): { bytes: number; errno: number } {
    if (this.#pending !== null) return { bytes: this.#parse(this.#pending), errno: 0 };
    const buf = this.#buf;
    const until = performance.now() + STEP_MS;
    let filled = 0;
    let errno = 0;
    while (filled < buf.length && (filled === 0 || performance.now() < until)) {
      const n = readFd(this.#fd, buf.subarray(filled));
      if (n > 0) filled += n;
      else if (n !== -EINTR) {
        errno = n === 0 ? EIO : -n;
        break;
      }
    }
    return { bytes: filled > 0 ? this.#parse(buf.subarray(0, filled)) : 0, errno };
  }

  /** Parses what one step may of `bytes` (see {@link PARSE_MS}), keeping the rest; the count parsed. */
  #parse(bytes: Uint8Array): number {
    const parsed = feedTerminalUntil(this.#term, bytes, performance.now() + PARSE_MS);
    const rest = bytes.subarray(parsed);
    this.#pending = rest.length === 0 ? null : bytes === this.#pending ? rest : rest.slice();
    this.#scheduleEvent();
    return parsed;
  }

  #releaseSlave(): void {
    if (this.#slave === null) return;
    closeFd(this.#slave);
    this.#slave = null;
  }

  /** Records the exit once output is rendered, and announces it (keeping the event rate bound). */
  async #finish(): Promise<void> {
    const status = this.#status!;
    // A grid change pending now would be announced with the exit: the exit's own event carries it.
    clearTimeout(this.#eventTimer);
    this.#eventTimer = undefined;
    this.#exit = status.signal !== null
      ? { status: null, signal: status.signal }
      : { status: status.code, signal: null };
    await delay(Math.max(0, this.#lastEmitAt + PTY_EVENT_INTERVAL_MS - performance.now()));
    clearTimeout(this.#eventTimer);
    this.#eventTimer = undefined;
    this.#watch.changed();
    this.#emit();
  }

  #scheduleEvent(): void {
    if (this.#eventTimer !== undefined || this.#closed !== null) return;
    this.#eventTimer = setTimeout(() => {
      this.#eventTimer = undefined;
      if (this.#watch.changed()) this.#emit();
    }, PTY_EVENT_INTERVAL_MS);
  }

  #emit(): void {
    this.#lastEmitAt = performance.now();
    const state = { alive: this.alive, exit: this.#exit };
    for (const listener of this.#listeners) listener(state);
  }

  #grid(): string[] {
    return Array.from({ length: this.#rows }, (_, i) => this.#row(i));
  }

  /** The text of grid row `i`. */
  #row(i: number): string {
    const buffer = this.#term.buffer.active;
    // Programs also write explicit spaces, which the emulator's own trimming keeps.
    return (buffer.getLine(buffer.baseY + i)?.translateToString(true) ?? "").replace(/ +$/, "");
  }
}

const childGone = () => new CallerFault("pty write failed: the child is gone");
