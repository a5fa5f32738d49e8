import { closeSync, constants, openSync } from "node:fs";
import { mkfifo } from "./mkfifo.ts";
import { spawnDriver } from "./run.ts";
import type { ScratchPool } from "./scratch_pool.ts";
import { restoreScript, type ShellState, WARM_DRIVER } from "./shell_state.ts";

/** How long a hand-over waits for a warm shell still restoring before running cold instead. */
const HAND_OVER_WAIT_MS = 2000;

/** Whether two maps hold the same entries in the same order (order decides `environ` order). */
function sameEntries(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  const other = b.entries();
  for (const [k, v] of a) {
    const [k2, v2] = other.next().value!;
    if (k !== k2 || v !== v2) return false;
  }
  return true;
}

/** Whether two states are identical: cwd, environment (in order), variables, functions, aliases. */
export function sameState(a: ShellState, b: ShellState): boolean {
  return a.cwd === b.cwd && sameEntries(a.env, b.env) && sameEntries(a.vars, b.vars) &&
    sameEntries(a.funcs, b.funcs) && sameEntries(a.aliases, b.aliases);
}

/** The (device, inode) of a directory, or null when it cannot be stat'ed. */
function dirIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return info.isDirectory ? `${info.dev}:${info.ino}` : null;
  } catch {
    return null;
  }
}

/**
 * A bash prepared ahead of an exec (issue 10): spawned exactly as a cold run would be (own process
 * group, stdin /dev/null, the state's cwd and exact environment), its restore script sourced, and
 * blocked reading the `go` FIFO of its scratch directory. A run hands over its source; a shell
 * whose starting state no longer matches is discarded and never runs one.
 */
export class WarmShell {
  #exited = false;
  #claimed = false;
  /** Whether the `go` FIFO's write end has opened (or failed to). */
  #goOpen = false;
  readonly #go: Promise<Deno.FsFile | null>;
  readonly #cwdAtSpawn: string | null;

  private constructor(
    readonly child: Deno.ChildProcess,
    readonly dir: string,
    /** The state the shell was prepared from (a private copy). */
    readonly state: ShellState,
    private readonly pool: ScratchPool,
  ) {
    this.#cwdAtSpawn = dirIdentity(state.cwd);
    // Opening the FIFO for writing completes once bash opens it for reading, after its restore.
    this.#go = Deno.open(`${dir}/go`, { write: true }).catch(() => null);
    this.#go.then(() => (this.#goOpen = true));
    child.status.then(() => {
      this.#exited = true;
      if (!this.#goOpen) this.#unblockGo();
    });
  }

  /** Spawns a warm shell from `state` (which it keeps); null when this host cannot. */
  static prepare(bash: string, state: ShellState, pool: ScratchPool): WarmShell | null {
    const dir = pool.acquire();
    let child: Deno.ChildProcess;
    try {
      const fifo = `${dir}/go`;
      if (!isFifo(fifo) && !mkfifo(fifo, 0o600)) throw new Error("mkfifo failed");
      Deno.writeTextFileSync(`${dir}/restore`, restoreScript(state), { mode: 0o600 });
      child = spawnDriver(bash, state, [WARM_DRIVER, "shoal", dir, "warm"]);
    } catch {
      pool.release(dir);
      return null;
    }
    return new WarmShell(child, dir, state, pool);
  }

  /**
   * Whether a run starting from `state` may use this shell: it is alive and unclaimed, was
   * prepared from an identical state, and its working directory is still the directory that
   * `state.cwd` names (not removed, not replaced).
   */
  fits(state: ShellState): boolean {
    if (this.#exited || this.#claimed || !sameState(this.state, state)) return false;
    const now = dirIdentity(state.cwd);
    if (now === null) return false;
    const own = Deno.build.os === "linux"
      ? dirIdentity(`/proc/${this.child.pid}/cwd`)
      : this.#cwdAtSpawn;
    return own === now;
  }

  /**
   * Hands `src` over; true when the shell is now running it. False (the caller discards the shell
   * and runs cold) when it died, or is still not waiting after a bounded wait.
   */
  async handOver(src: string): Promise<boolean> {
    this.#claimed = true;
    try {
      Deno.writeTextFileSync(`${this.dir}/src`, src, { mode: 0o600 });
    } catch {
      return false;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const go = await Promise.race([
      this.#go,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), HAND_OVER_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (go === null || this.#exited) return false;
    try {
      go.writeSync(new TextEncoder().encode("run\n"));
      return true;
    } catch {
      return false;
    } finally {
      go.close();
    }
  }

  /** Kills the shell's process group, waits for it and returns its scratch directory. */
  async discard(): Promise<void> {
    this.#claimed = true;
    try {
      Deno.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await Promise.allSettled([
      this.child.status,
      this.child.stdout.cancel(),
      this.child.stderr.cancel(),
    ]);
    const go = await this.#go;
    try {
      go?.close();
    } catch {
      // closed by a failed hand-over
    }
    this.pool.release(this.dir);
  }

  /**
   * Completes a FIFO open still waiting for a reader that will never come (the shell died): a
   * non-blocking read end appears and goes at once.
   */
  #unblockGo(): void {
    try {
      closeSync(openSync(`${this.dir}/go`, constants.O_RDONLY | constants.O_NONBLOCK));
    } catch {
      // the directory is gone
    }
  }
}

function isFifo(path: string): boolean {
  try {
    return Deno.statSync(path).isFifo === true;
  } catch {
    return false;
  }
}
