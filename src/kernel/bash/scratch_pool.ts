import { join } from "node:path";

const EMPTY = new Uint8Array();

/**
 * Empties the `state` file of a scratch directory, made 0600 by the kernel (G-STATE-4) rather
 * than by bash under the caller's umask: each dump writes into it.
 */
function emptyState(dir: string): void {
  Deno.writeFileSync(join(dir, "state"), EMPTY, { mode: 0o600 });
}

/** How many idle scratch directories the pool keeps for reuse. */
const KEEP = 8;

/**
 * Private 0700 scratch directories for bash runs (driver input and state dump), reused instead of
 * created and removed per run. A directory comes with an empty `state` file, and a released one
 * has its dump emptied first, so a later run can never read an earlier run's state.
 */
export class ScratchPool {
  #idle: string[] = [];
  #all = new Set<string>();

  constructor(private readonly parent: string) {}

  /** A directory owned by the caller until {@link release}. */
  acquire(): string {
    const reused = this.#idle.pop();
    if (reused !== undefined) return reused;
    const dir = join(this.parent, `run-${crypto.randomUUID()}`);
    Deno.mkdirSync(dir, { mode: 0o700 });
    this.#all.add(dir);
    try {
      emptyState(dir);
    } catch (e) {
      this.#drop(dir);
      throw e;
    }
    return dir;
  }

  /** Gives a directory back once its run is over; beyond the kept few it is removed. */
  release(dir: string): void {
    try {
      emptyState(dir);
    } catch {
      return this.#drop(dir);
    }
    if (this.#idle.length < KEEP) this.#idle.push(dir);
    else this.#drop(dir);
  }

  /** Removes every directory (kernel shutdown; no run may be using one). */
  clear(): void {
    for (const dir of this.#all) this.#drop(dir);
    this.#idle = [];
  }

  #drop(dir: string): void {
    this.#all.delete(dir);
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already gone
    }
  }
}
