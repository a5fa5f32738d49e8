import { rmSync } from "node:fs";
import process from "node:process";
import { join } from "node:path";

/** How many empty files the pool keeps ready: an exec with new output takes two or three. */
export const FILES = 4;
/**
 * How many empty directories it keeps ready: nearly every new blob needs a new fan-out directory
 * until the store holds tens of thousands of blobs (65,536 of them).
 */
export const DIRS = 4;
/**
 * Names of blanks, `blank-<pid of the kernel that made them>-<random>`, of output spools made
 * when no blank was ready, `spool-<pid>-<random>` (store/cas.ts), of the scratch directories of
 * bash runs, `run-<pid>-<random>` (bash/scratch_pool.ts), of resident sandboxes,
 * `sandbox-<pid>-…` (their runs' sources and state FIFOs, sandbox/resident.ts), of the proxy's
 * sockets, `net-<pid>-…` (net/proxy.ts), and of PTY start gates, `gate-<pid>-…`
 * (sandbox/start_gate.ts), and the launcher being compiled, `launcher-<hash>.<pid>`
 * (sandbox/compiled_launcher.ts; its compiler finishes after a killed kernel): a killed kernel
 * leaves them all.
 */
const NAME = /^(?:(?:blank|spool|run|sandbox|net|gate)-(\d+)-|launcher-[0-9a-f]+\.(\d+)$)/;

/**
 * Empty 0600 files and 0700 directories in `tmp/`, made ahead of need off the event loop. Making
 * a file or directory allocates an inode, which on some disks costs milliseconds of CPU (0.1–1.5
 * ms on this project's VMs, against 0.02–0.07 ms for a rename): a new CAS blob is written into a
 * blank file and renamed into place instead (J-4), and a new fan-out directory is a blank one.
 * Blanks carry their kernel's pid, so kernels sharing a state directory never take each other's.
 */
export class Blanks {
  #files: string[] = [];
  #dirs: string[] = [];
  #refill: Promise<void> | null = null;
  #closed = false;

  private constructor(private readonly tmpDir: string) {}

  /** A pool in `tmpDir`, after removing the blanks and scratch directories of dead kernels. */
  static open(tmpDir: string): Blanks {
    sweep(tmpDir);
    const blanks = new Blanks(tmpDir);
    blanks.#topUp();
    return blanks;
  }

  /** The path of an empty file that is the caller's from now on, or null when none is ready. */
  file(): string | null {
    const path = this.#files.pop() ?? null;
    this.#topUp();
    return path;
  }

  /** The path of an empty directory that is the caller's from now on, or null when none is ready. */
  dir(): string | null {
    const path = this.#dirs.pop() ?? null;
    this.#topUp();
    return path;
  }

  /** Resolves once no blank is being made. */
  async settled(): Promise<void> {
    while (this.#refill) await this.#refill;
  }

  /** Stops making blanks and removes the ones not taken (kernel shutdown). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
    for (const path of [...this.#files.splice(0), ...this.#dirs.splice(0)]) {
      rmSync(path, { recursive: true, force: true });
    }
  }

  #topUp(): void {
    if (this.#refill || this.#closed) return;
    if (this.#files.length >= FILES && this.#dirs.length >= DIRS) return;
    this.#refill = this.#make();
  }

  /**
   * Makes blanks until the pool is full, then marks the refill done in the same turn as its last
   * look at the pool: a take a microtask later starts the next refill (marked done a promise hop
   * later, such a take found the refill still running, and the pool stayed short for good).
   */
  async #make(): Promise<void> {
    // Begun on a later turn of the event loop, once the taker's run has stored its blobs: making a
    // blank locks `tmp/`, which the taker's renames out of it would wait for.
    await new Promise((resolve) => setTimeout(resolve, 0));
    try {
      while (!this.#closed) {
        const files = this.#files.length;
        const dirs = this.#dirs.length;
        const path = this.#name();
        if (files < FILES && (files <= dirs || dirs >= DIRS)) {
          (await Deno.open(path, { createNew: true, write: true, mode: 0o600 })).close();
          this.#files.push(path);
        } else if (dirs < DIRS) {
          await Deno.mkdir(path, { mode: 0o700 });
          this.#dirs.push(path);
        } else break;
      }
    } catch {
      // tmp/ unwritable or gone: takers make their own until a later take tries again
    }
    this.#refill = null;
  }

  #name(): string {
    return join(this.tmpDir, `blank-${Deno.pid}-${crypto.randomUUID()}`);
  }
}

/**
 * Removes the blanks and scratch directories in `tmpDir` whose kernel is not running (or whose
 * pid is now this one's).
 */
function sweep(tmpDir: string): void {
  for (const entry of Deno.readDirSync(tmpDir)) {
    const found = NAME.exec(entry.name);
    const pid = Number(found?.[1] ?? found?.[2] ?? NaN);
    if (Number.isNaN(pid) || (pid !== Deno.pid && running(pid))) continue;
    rmSync(join(tmpDir, entry.name), { recursive: true, force: true });
  }
}

/** Whether a process with this pid exists (one of another user's counts). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
