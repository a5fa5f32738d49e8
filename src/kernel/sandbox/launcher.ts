/**
 * The kernel's side of a resident's launcher ({@link LAUNCHER_SCRIPT}): a run's bash is started by
 * the launcher's waiting spare, whose host pid the kernel knows before it asks, so a sandboxed spawn
 * is one atomic write to the launcher (and a file for a run too long for it) and one exec inside,
 * with no program started on the host.
 */
import { LineFramer } from "../../protocol/framing.ts";
import type { BashChild } from "../bash/bash_child.ts";
import { ensureFifo, type Fifo, openFifo, readRestNow } from "../bash/fifo.ts";
import { fdWaiterAvailable } from "../bash/fd_waiter.ts";
import { writeFreshFile } from "../bash/fresh_file.ts";
import { commandStatus } from "../bash/wait_status.ts";
import { childrenOf } from "./protected_mounts.ts";

const encoder = new TextEncoder();

/**
 * The most bytes a pipe takes by one write, whole and apart from any other (PIPE_BUF on Linux):
 * the longest request record.
 */
const PIPE_BUF = 4096;

/** The file in a run's scratch directory holding a run too long for one record. */
const RUN_FILE = "run";

/** A record of the launcher's stdin: `body`'s byte length as 8 hex digits, then `body`. */
function record(body: Uint8Array): Uint8Array {
  const frame = new Uint8Array(8 + body.length);
  frame.set(encoder.encode(body.length.toString(16).padStart(8, "0")));
  frame.set(body, 8);
  return frame;
}

/** The NUL-joined bytes of `fields`. */
function joined(fields: readonly (string | number)[]): Uint8Array {
  return encoder.encode(fields.join("\0"));
}

/** How a run ends whose launcher died under it: killed with its sandbox. */
const KILLED: Deno.CommandStatus = { success: false, code: 137, signal: "SIGKILL" };

/** The host pid of the child of `parent` whose pid in its own PID namespace is `inside`. */
function hostPidOf(parent: number, inside: number): number | null {
  for (const child of childrenOf(parent).reverse()) {
    try {
      const status = Deno.readTextFileSync(`/proc/${child}/status`);
      const line = status.slice(
        status.indexOf("NSpid:"),
        status.indexOf("\n", status.indexOf("NSpid:")),
      );
      if (Number(line.split("\t").at(-1)) === inside) return Number(child);
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

/** The longest report line of a launcher (`exit <pid> <wait status>`), with room to spare. */
const REPORT_LIMIT = 64;

/** Bytes of one read of a launcher's reports: many lines. */
const REPORT_READ = 4096;

/**
 * The report lines of a launcher's stdout, each at most {@link REPORT_LIMIT} bytes: a process in
 * the sandbox (same uid) can write to that pipe too, and a longer line is dropped, never held.
 * Empty lines are skipped. Read into one buffer (BYOB): a default reader allocates 64 KiB per
 * read, two reads of every run.
 */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const framer = new LineFramer(REPORT_LIMIT);
  const decoder = new TextDecoder();
  const reader = stream.getReader({ mode: "byob" });
  let buffer = new Uint8Array(REPORT_READ);
  try {
    while (true) {
      const { done, value } = await reader.read(buffer);
      if (done || value === undefined) return;
      // the framer copies what it holds, and each line is decoded before the next read
      for (const event of framer.push(value)) {
        if (event.kind === "frame") yield decoder.decode(event.bytes);
      }
      buffer = new Uint8Array(value.buffer);
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * A run the launcher started: its FIFOs (write ends kept until {@link release}d), its run file
 * (if any, removed then too), how to report its end.
 */
interface Started {
  fifos: Fifo[];
  kept: boolean;
  file: string | null;
  resolve: (status: Deno.CommandStatus) => void;
}

/** Closes a run's kept FIFO write ends (once): from then on their EOF comes from the run's side. */
function release(run: Started): void {
  if (!run.kept) return;
  run.kept = false;
  for (const fifo of run.fifos) fifo.keeper.close();
  if (run.file === null) return;
  try {
    Deno.removeSync(run.file);
  } catch {
    // not there
  }
}

/**
 * A launcher running as a resident's bwrap command, driven through its stdin and stdout. It is
 * the parent of every run it starts: it reaps them and reports their wait status. When it dies
 * (and its sandbox with it) the runs still going end as killed.
 */
export class Launcher {
  /**
   * The spare that takes the next request: its pid inside and on the host (null until found:
   * looked up again at the next spawn when /proc did not show it yet).
   */
  #spare: { inside: number; host: number | null } | null = null;
  /** Runs started and not yet reported ended, by their pid inside. */
  #runs = new Map<number, Started>();
  /** The run that took the last spare, whose FIFO write ends are still kept. */
  #taken: Started | null = null;
  #ended = false;
  /** Called once a spare waits or the launcher is gone ({@link untilSpare}). */
  #onSpare: (() => void)[] = [];
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;

  /**
   * Drives the launcher of host pid `pid` through `stdin`, reading its reports from `reports`,
   * whose first (`first`, already read) announced its first spare.
   */
  constructor(
    private readonly pid: number,
    stdin: WritableStream<Uint8Array>,
    first: string,
    reports: AsyncGenerator<string>,
  ) {
    this.#writer = stdin.getWriter();
    this.#report(first);
    this.#read(reports);
  }

  async #read(reports: AsyncGenerator<string>): Promise<void> {
    try {
      for await (const line of reports) this.#report(line);
    } catch {
      // the pipe broke: the launcher is gone
    }
    this.#ended = true;
    this.#spare = null;
    for (const [inside, run] of this.#runs) this.#end(inside, run, KILLED);
    this.#spareArrived();
  }

  /**
   * Null when a spawn now goes through a spare (or the launcher is gone, and it cannot); else
   * a promise that resolves when the next spare, being forked, waits.
   */
  untilSpare(): Promise<void> | null {
    if (this.#ended || this.#spare !== null) return null;
    return new Promise((resolve) => this.#onSpare.push(resolve));
  }

  #spareArrived(): void {
    for (const resolve of this.#onSpare.splice(0)) resolve();
  }

  #report(line: string): void {
    const [what, pid, wait] = line.split(" ");
    const inside = Number(pid);
    if (what === "spare") {
      // a spare is forked once the last one has opened its FIFOs (or died)
      if (this.#taken !== null) release(this.#taken);
      this.#taken = null;
      this.#spare = { inside, host: hostPidOf(this.pid, inside) };
      this.#spareArrived();
    } else if (what === "exit") {
      if (this.#spare?.inside === inside) this.#spare = null;
      const run = this.#runs.get(inside);
      if (run !== undefined) this.#end(inside, run, commandStatus(Number(wait)));
    }
  }

  /** Reports a run's end once its FIFOs' write ends are {@link release}d. */
  #end(inside: number, run: Started, status: Deno.CommandStatus): void {
    this.#runs.delete(inside);
    release(run);
    for (const fifo of run.fifos) readRestNow(fifo);
    run.resolve(status);
  }

  /**
   * Starts `argv` in a new session and process group with stdin /dev/null, exactly `env`, in
   * `cwd` (a path inside), its output through FIFOs made in the host directory `dir`, which the
   * sandbox shows at `inside`. Null when no spare is waiting (the launcher is starting the next,
   * or is gone): the caller starts the run another way.
   */
  spawn(
    cwd: string,
    argv: readonly string[],
    env: ReadonlyMap<string, string>,
    dir: string,
    inside: string,
  ): BashChild | null {
    const spare = this.#spare;
    if (this.#ended || spare === null || !fdWaiterAvailable()) return null;
    spare.host ??= hostPidOf(this.pid, spare.inside);
    const host = spare.host;
    if (host === null) return null;
    const fields = [cwd, env.size, ...[...env].map(([name, value]) => `${name}=${value}`), ...argv];
    const head = [spare.inside, `${inside}/out`, `${inside}/err`];
    let frame = record(joined([...head, ...fields]));
    let file: string | null = null;
    const fifos: Fifo[] = [];
    try {
      for (const name of ["out", "err"]) {
        // A directory the pool hands out again has FIFOs no process writes to: runs that end
        // with a writer left (their output cut) discard theirs (`run.ts`).
        ensureFifo(`${dir}/${name}`);
        fifos.push(openFifo(`${dir}/${name}`));
      }
      if (frame.length > PIPE_BUF) {
        // too long to reach the spare whole by one write: the record names a file holding the run
        file = `${dir}/${RUN_FILE}`;
        writeFreshFile(file, joined(fields));
        frame = record(joined([...head, "", `${inside}/${RUN_FILE}`]));
      }
    } catch {
      for (const fifo of fifos) {
        fifo.keeper.close();
        fifo.reader.cancel();
      }
      return null;
    }
    this.#spare = null;
    const status = new Promise<Deno.CommandStatus>((resolve) => {
      this.#taken = { fifos, kept: true, file, resolve };
      this.#runs.set(spare.inside, this.#taken);
    });
    // one write of at most PIPE_BUF bytes: the pipe takes it whole or waits (never in part), and
    // nothing awaits it; a launcher gone reports no exit: #read ends the run
    this.#writer.write(frame).catch(() => {});
    return {
      pid: host,
      stdout: fifos[0].reader,
      stderr: fifos[1].reader,
      status,
      pipes: new Set([`${inside}/out`, `${inside}/err`]),
    };
  }

  /** Closes the launcher's stdin: it exits, and its sandbox with it. */
  close(): Promise<void> {
    return this.#writer.close().catch(() => {});
  }
}
