import { join } from "node:path";
import { remakingParent } from "../store/remade_dir.ts";
import { makeFifo } from "./fifo.ts";

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
 * has its dump emptied first, so a later run can never read an earlier run's state. In a pool
 * for a sandbox, which shows its directories read-only (nothing inside can plant a symlink that
 * the kernel would follow on the host), `state` is a FIFO instead: bash writes its dump into it
 * (a FIFO takes writes on a read-only mount) and the kernel reads it while bash runs. Names
 * carry the kernel's pid (`run-<pid>-…`): the next kernel removes those of a killed one, which
 * hold the session state its last runs dumped (store/blanks.ts).
 */
export class ScratchPool {
  #idle: string[] = [];
  #all = new Set<string>();

  constructor(private readonly parent: string, readonly stateFifo = false) {}

  /** A directory owned by the caller until {@link release}. */
  acquire(): string {
    const reused = this.#idle.pop();
    if (reused !== undefined) return reused;
    const dir = join(this.parent, `run-${Deno.pid}-${crypto.randomUUID()}`);
    remakingParent(this.parent, () => Deno.mkdirSync(dir, { mode: 0o700 }));
    this.#all.add(dir);
    try {
      if (this.stateFifo) makeFifo(join(dir, "state"));
      else emptyState(dir);
    } catch (e) {
      this.#drop(dir);
      throw e;
    }
    return dir;
  }

  /** Gives a directory back once its run is over; beyond the kept few it is removed. */
  release(dir: string): void {
    try {
      if (!this.stateFifo) emptyState(dir);
    } catch {
      return this.#drop(dir);
    }
    if (this.#idle.length < KEEP) this.#idle.push(dir);
    else this.#drop(dir);
  }

  /** Removes a directory instead of keeping it: a process may still hold one of its FIFOs. */
  discard(dir: string): void {
    this.#drop(dir);
  }

  /** Forgets the idle directories: they were removed with the state directory's `tmp/`. */
  forgetIdle(): void {
    for (const dir of this.#idle) this.#all.delete(dir);
    this.#idle = [];
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
