/** One program on a real pseudo-terminal, rendered by a headless terminal emulator (SPEC §3.10, §8). */

import { isAbsolute, join, resolve } from "node:path";
import { setImmediate } from "node:timers";
import xterm from "@xterm/headless";
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { sandboxCommand, type Sandboxing } from "../sandbox/command.ts";
import {
  PTY_EVENT_INTERVAL_MS,
  PTY_KILL_GRACE_MS,
  PTY_MAX_DIMENSION,
} from "../../protocol/limits.ts";
import {
  closeFd,
  EAGAIN,
  EINTR,
  EIO,
  openPtyMaster,
  type PtyMaster,
  readFd,
  setWindowSize,
  writeFd,
} from "./libc.ts";

const { Terminal } = xterm;
type Terminal = InstanceType<typeof Terminal>;

/** Bytes gathered from the master before handing them to the emulator and yielding. */
const READ_BATCH = 64 * 1024;
/** Unparsed emulator backlog above which reading the master pauses (bounds memory). */
const PARSE_HIGH_WATER = 1024 * 1024;
/** Backlog below which a paused reader resumes. */
const PARSE_LOW_WATER = 256 * 1024;
/** Longest wait in ms between polls of an idle master. */
const MAX_POLL_MS = 32;
/** Empty polls after the child's exit before its output counts as drained (a grandchild may hold the slave). */
const DRAIN_POLLS_AFTER_EXIT = 8;
/** A write that makes no progress for this long (the child is not reading) returns what it sent. */
const WRITE_STALL_MS = 2000;
/** Longest wait in ms for the launcher to make the child a session leader before `open` resolves. */
const LAUNCH_SETTLE_MS = 2000;
/** Where `setsid` is looked for; it makes the child a session leader with the PTY as controlling terminal. */
const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid"];
/**
 * Runs in `sh`: `$0` is the slave path, `$1` is non-empty when the given environment has `PWD`
 * (`sh` exports one of its own otherwise), the rest is the `setsid` command line. Nothing passes
 * through the environment, so the program gets exactly the environment it was given (K-PTY-1).
 */
const LAUNCH_SCRIPT = '[ -n "$1" ] || unset PWD; shift; exec "$@" <>"$0" >&0 2>&0';

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

function isExecutableFile(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && ((st.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Whether `execvp` in the child would find `cmd` (PATH from the child's env, glibc default when unset). */
function programExists(cmd: string, cwd: string, env: Record<string, string>): boolean {
  if (cmd === "") return false;
  if (cmd.includes("/")) return isExecutableFile(resolve(cwd, cmd));
  const dirs = (env.PATH ?? "/bin:/usr/bin").split(":");
  return dirs.some((dir) => isExecutableFile(join(isAbsolute(dir) ? dir : resolve(cwd, dir), cmd)));
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits for `p` or `ms` milliseconds, whichever comes first, leaving no timer behind. */
async function raceTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => timer = setTimeout(r, ms))]);
  clearTimeout(timer);
}

/** The session id of a process, or null when it is gone. */
function sessionId(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  } catch {
    return null;
  }
}

/** Waits (bounded) until the launcher has made `pid` a session leader, or it has exited. */
async function untilSessionLeader(pid: number, exited: () => boolean): Promise<void> {
  let waited = 0;
  for (let wait = 1; waited < LAUNCH_SETTLE_MS; wait = Math.min(wait * 2, MAX_POLL_MS)) {
    const sid = sessionId(pid);
    if (sid === pid || sid === null || exited()) return;
    await delay(wait);
    waited += wait;
  }
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
  /** Bytes handed to the emulator and not yet parsed. */
  #backlog = 0;
  #backlogWaiters: (() => void)[] = [];
  /** Set while the reader sleeps between polls; calling it wakes the reader. */
  #wake: (() => void) | null = null;
  /** Resolved after the reader's next attempt to read the master. */
  #passWaiters: (() => void)[] = [];
  #writes: Promise<unknown> = Promise.resolve();
  #lastReadText: string | null = null;
  #lastEventText: string | null = null;
  #eventTimer: ReturnType<typeof setTimeout> | undefined;
  #lastEmitAt = -Infinity;
  #listeners = new Set<(state: PtyState) => void>();

  private constructor(
    fd: number,
    child: Deno.ChildProcess,
    cmd: string,
    cols: number,
    rows: number,
  ) {
    this.#fd = fd;
    this.#child = child;
    this.pid = child.pid;
    this.cmd = cmd;
    this.#cols = cols;
    this.#rows = rows;
    this.#term = new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
    this.#trackCursorVisibility();
    this.#term.onWriteParsed(() => this.#scheduleEvent());
    // Answers to the program's terminal queries (device attributes, cursor position) go back to it.
    this.#term.onData((data) => this.#reply(new TextEncoder().encode(data)));
    this.#term.onBinary((data) =>
      this.#reply(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff))
    );
    const reaped = child.status.then((status) => {
      this.#status = status;
      this.#wake?.();
    });
    this.#finished = Promise.all([this.#readLoop(), reaped]).then(() => this.#finish());
  }

  /**
   * Starts `opts.cmd` on a new PTY as session leader with the PTY as controlling terminal.
   * Sizes are clamped to 1..1000. Throws `-32023` (data `{cmd}`) when it cannot be started.
   */
  static async open(opts: PtyOpenOptions): Promise<Pty> {
    const cmd = [opts.cmd, ...opts.args].join(" ");
    const cols = clampDimension(opts.cols);
    const rows = clampDimension(opts.rows);
    const env = { ...opts.env };
    env.TERM ??= "xterm-256color";
    if (!programExists(opts.cmd, opts.cwd, env)) throw spawnFailed(opts.cmd, "program not found");
    const setsid = SETSID_PATHS.find(isExecutableFile);
    if (setsid === undefined) throw spawnFailed(opts.cmd, "setsid not found");
    let master: PtyMaster | undefined;
    let child: Deno.ChildProcess;
    try {
      master = openPtyMaster();
      setWindowSize(master.fd, cols, rows);
      child = new Deno.Command("/bin/sh", {
        args: [
          "-c",
          LAUNCH_SCRIPT,
          master.slavePath,
          Object.hasOwn(env, "PWD") ? "keep" : "",
          setsid,
          "-w",
          "-c",
          "--",
          ...(opts.sandbox === null
            ? [opts.cmd, ...opts.args]
            : sandboxCommand({ ...opts.sandbox, cwd: opts.cwd, scratch: null }, [
              opts.cmd,
              ...opts.args,
            ])),
        ],
        cwd: opts.cwd,
        clearEnv: true,
        env,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    } catch (e) {
      if (master) closeFd(master.fd);
      throw spawnFailed(opts.cmd, e instanceof Error ? e.message : String(e));
    }
    const pty = new Pty(master.fd, child, cmd, cols, rows);
    await untilSessionLeader(pty.pid, () => pty.#status !== null);
    return pty;
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
  async read(): Promise<PtyScreen> {
    this.#assertOpen();
    if (this.#wake !== null) {
      const pass = new Promise<void>((r) => this.#passWaiters.push(r));
      this.#wake();
      await pass;
    }
    await this.#rendered();
    const screen = this.#grid();
    const text = screen.join("\n");
    const changed = text !== this.#lastReadText;
    this.#lastReadText = text;
    const buffer = this.#term.buffer.active;
    return {
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
    };
  }

  /** Resizes the OS window (SIGWINCH to the child) and the emulator; sizes are clamped to 1..1000. */
  resize(cols: number, rows: number): void {
    this.#assertOpen();
    this.#cols = clampDimension(cols);
    this.#rows = clampDimension(rows);
    setWindowSize(this.#fd, this.#cols, this.#rows);
    this.#term.resize(this.#cols, this.#rows);
    this.#lastReadText = null;
    this.#scheduleEvent();
  }

  /**
   * SIGHUP to the process group, SIGKILL 500 ms later if anything in it is still alive, reap,
   * and release the PTY. Resolves to how the child ended; calling it again gives the same result.
   */
  close(): Promise<PtyExit> {
    this.#closed ??= this.#shutdown();
    return this.#closed;
  }

  async #shutdown(): Promise<PtyExit> {
    // A child reaped earlier is not signalled: its pid may since belong to another process group.
    if (this.#status === null) {
      this.#signalGroup("SIGHUP");
      await raceTimeout(this.#child.status, PTY_KILL_GRACE_MS);
      // Whatever in the group outlived the hangup is killed: closing never detaches.
      this.#signalGroup("SIGKILL");
      await this.#child.status;
    }
    this.#closing = true;
    this.#wake?.();
    await this.#finished;
    await this.#writes;
    clearTimeout(this.#eventTimer);
    this.#listeners.clear();
    closeFd(this.#fd);
    this.#term.dispose();
    return this.#exit!;
  }

  #signalGroup(signal: Deno.Signal): void {
    try {
      Deno.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is empty, or the launcher has not yet made the child a group leader.
      try {
        Deno.kill(this.pid, signal);
      } catch {
        // The child is gone.
      }
    }
  }

  #assertOpen(): void {
    if (this.#closed !== null) throw new RpcError(ErrorCode.UNKNOWN_PTY, "pty is closed");
  }

  /** Sends an emulator reply; a child that is gone simply does not get it. */
  #reply(bytes: Uint8Array): void {
    this.#queueWrite(bytes).catch(() => {});
  }

  #queueWrite(bytes: Uint8Array): Promise<number> {
    const run = this.#writes.then(() => this.#writeAll(bytes));
    this.#writes = run.catch(() => {});
    return run;
  }

  async #writeAll(bytes: Uint8Array): Promise<number> {
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
        if (Date.now() - progressAt >= WRITE_STALL_MS) break;
        await delay(wait);
        wait = Math.min(wait * 2, MAX_POLL_MS);
      } else if (n !== -EINTR) {
        throw childGone();
      }
    }
    this.#wake?.();
    return sent;
  }

  /** Moves output from the master into the emulator until the child is gone and drained, or closing. */
  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(READ_BATCH);
    let wait = 1;
    let emptyAfterExit = 0;
    while (!this.#closing) {
      if (this.#backlog > PARSE_HIGH_WATER) {
        await new Promise<void>((r) => this.#backlogWaiters.push(r));
        continue;
      }
      let filled = 0;
      let errno = 0;
      while (filled < buf.length) {
        const n = readFd(this.#fd, buf.subarray(filled));
        if (n > 0) filled += n;
        else if (n !== -EINTR) {
          errno = n === 0 ? EIO : -n;
          break;
        }
      }
      if (filled > 0) this.#render(buf.slice(0, filled));
      this.#releasePassWaiters();
      if (filled > 0) {
        wait = 1;
        emptyAfterExit = 0;
        // Let other kernel work run between batches; setImmediate, since a 0 ms timer waits a millisecond or more.
        await new Promise((r) => setImmediate(r));
        continue;
      }
      if (this.#status !== null) {
        // EIO: every slave fd is closed and the output is drained.
        if (errno !== EAGAIN || ++emptyAfterExit >= DRAIN_POLLS_AFTER_EXIT) break;
      }
      // Back off while idle; a wake-up (input sent, a read, the exit) means output is likely soon.
      wait = await this.#sleep(wait) ? 1 : Math.min(wait * 2, MAX_POLL_MS);
    }
    this.#releasePassWaiters();
  }

  /** Resolves once everything handed to the emulator is parsed. */
  async #rendered(): Promise<void> {
    if (this.#backlog > 0) {
      await new Promise<void>((r) => this.#term.write(new Uint8Array(0), r));
    }
  }

  #render(chunk: Uint8Array): void {
    this.#backlog += chunk.length;
    this.#term.write(chunk, () => {
      this.#backlog -= chunk.length;
      if (this.#backlog <= PARSE_LOW_WATER) {
        for (const w of this.#backlogWaiters.splice(0)) w();
      }
    });
  }

  /** Sleeps `ms` unless woken first; resolves to whether it was woken. */
  #sleep(ms: number): Promise<boolean> {
    return new Promise((r) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        r(false);
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = null;
        r(true);
      };
    });
  }

  #releasePassWaiters(): void {
    for (const w of this.#passWaiters.splice(0)) w();
  }

  /** Records the exit once output is rendered, and announces it (keeping the event rate bound). */
  async #finish(): Promise<void> {
    await this.#rendered();
    const status = this.#status!;
    this.#exit = status.signal !== null
      ? { status: null, signal: status.signal }
      : { status: status.code, signal: null };
    await delay(Math.max(0, this.#lastEmitAt + PTY_EVENT_INTERVAL_MS - performance.now()));
    clearTimeout(this.#eventTimer);
    this.#eventTimer = undefined;
    this.#lastEventText = this.#grid().join("\n");
    this.#emit();
  }

  #scheduleEvent(): void {
    if (this.#eventTimer !== undefined || this.#closed !== null) return;
    this.#eventTimer = setTimeout(() => {
      this.#eventTimer = undefined;
      const text = this.#grid().join("\n");
      if (text === this.#lastEventText) return;
      this.#lastEventText = text;
      this.#emit();
    }, PTY_EVENT_INTERVAL_MS);
  }

  #emit(): void {
    this.#lastEmitAt = performance.now();
    const state = { alive: this.alive, exit: this.#exit };
    for (const listener of this.#listeners) listener(state);
  }

  #grid(): string[] {
    const buffer = this.#term.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < this.#rows; i++) {
      // Programs also write explicit spaces, which the emulator's own trimming keeps.
      const text = buffer.getLine(buffer.baseY + i)?.translateToString(true) ?? "";
      rows.push(text.replace(/ +$/, ""));
    }
    return rows;
  }

  /** Mirrors DECTCEM (`CSI ? 25 h/l`, reset by RIS and DECSTR); the emulator has no public getter. */
  #trackCursorVisibility(): void {
    const parser = this.#term.parser;
    const has25 = (params: (number | number[])[]) => params.some((p) => p === 25);
    parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => {
      if (has25(params)) this.#cursorHidden = false;
      return false;
    });
    parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => {
      if (has25(params)) this.#cursorHidden = true;
      return false;
    });
    parser.registerCsiHandler({ intermediates: "!", final: "p" }, () => {
      this.#cursorHidden = false;
      return false;
    });
    parser.registerEscHandler({ final: "c" }, () => {
      this.#cursorHidden = false;
      return false;
    });
  }
}

function childGone(): RpcError {
  return new RpcError(ErrorCode.INTERNAL_ERROR, "pty write failed: the child is gone");
}
