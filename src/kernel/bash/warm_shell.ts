import { mkfifo } from "./mkfifo.ts";
import { spawnDriver } from "./spawn.ts";
import type { ScratchPool } from "./scratch_pool.ts";
import { restoreScript, sameCwd, type ShellState, WARM_DRIVER } from "./shell_state.ts";

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
  return sameCwd(a, b) && sameEntries(a.env, b.env) && sameEntries(a.vars, b.vars) &&
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
 *
 * The kernel holds the FIFO open read-write from before the spawn until bash exits: that open never
 * blocks (Linux), bash's open never waits for a writer, a `run` written before bash reads it stays
 * in the FIFO, and when the kernel dies bash reads EOF and exits without running anything.
 */
export class WarmShell {
  #exited = false;
  #claimed = false;
  readonly #cwdAtSpawn: string | null;

  private constructor(
    readonly child: Deno.ChildProcess,
    readonly dir: string,
    /** The state the shell was prepared from (a private copy). */
    readonly state: ShellState,
    private readonly go: Deno.FsFile,
    private readonly pool: ScratchPool,
  ) {
    this.#cwdAtSpawn = dirIdentity(state.cwd);
    // Held until bash exits: closed earlier, a `run` not yet read could vanish with the FIFO.
    child.status.then(() => {
      this.#exited = true;
      go.close();
    });
  }

  /**
   * Spawns a warm shell from `state` (which it keeps); null when this host cannot, or the cwd is
   * not UTF-8 (its directory cannot be checked by {@link fits}).
   */
  static prepare(bash: string, state: ShellState, pool: ScratchPool): WarmShell | null {
    if (state.cwdBytes !== undefined) return null;
    const dir = pool.acquire();
    let go: Deno.FsFile | null = null;
    try {
      const fifo = `${dir}/go`;
      if (!isFifo(fifo) && !mkfifo(fifo, 0o600)) throw new Error("mkfifo failed");
      go = Deno.openSync(fifo, { read: true, write: true });
      Deno.writeTextFileSync(`${dir}/restore`, restoreScript(state), { mode: 0o600 });
      const child = spawnDriver(bash, state, [WARM_DRIVER, "shoal", dir, "warm"]);
      return new WarmShell(child, dir, state, go, pool);
    } catch {
      go?.close();
      pool.release(dir);
      return null;
    }
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
   * Hands `src` over; true when the shell now runs it (it reads `run` once its restore is done).
   * False when it died first: the caller discards it and runs cold.
   */
  handOver(src: string): boolean {
    this.#claimed = true;
    if (this.#exited) return false;
    try {
      Deno.writeTextFileSync(`${this.dir}/src`, src, { mode: 0o600 });
      this.go.writeSync(new TextEncoder().encode("run\n"));
      return true;
    } catch {
      return false;
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
    this.pool.release(this.dir);
  }
}

function isFifo(path: string): boolean {
  try {
    return Deno.statSync(path).isFifo === true;
  } catch {
    return false;
  }
}
