import type { BashChild } from "../bash/bash_child.ts";
import { dirIdentity } from "../bash/dir_identity.ts";
import { signalGroup } from "../bash/group_leader.ts";
import { ScratchInput } from "../bash/scratch_input.ts";
import { ensureFifo } from "../bash/fifo.ts";
import { outputPipes } from "../bash/pipe_holders.ts";
import { spawnDriver } from "./spawn.ts";
import type { ScratchPool } from "../bash/scratch_pool.ts";
import {
  envDelta,
  launchable,
  launchEnv,
  restoreScript,
  type ShellState,
  WARM_DRIVER,
} from "../bash/shell_state.ts";
import { confinementKey, type Sandboxing } from "../sandbox/command.ts";
import type { Resident } from "../sandbox/resident.ts";

const encoder = new TextEncoder();

/**
 * A bash prepared ahead of an exec (issue 10): spawned exactly as a cold run would be (own process
 * group, stdin /dev/null, the session's cwd and environment at the time, in the caller's sandbox
 * or unconfined) and blocked reading the `go` FIFO of its scratch directory before it restores
 * anything. A run hands over its restore script and source together, so the shell serves any later
 * state of its session: environment changes since the spawn travel in the restore script
 * ({@link envDelta}). A run in another working directory or another confinement, or whose
 * environment changed in a way only a spawn gives, discards it and never runs on it.
 *
 * The kernel holds the FIFO open read-write from before the spawn until bash exits: that open never
 * blocks (Linux), bash's open never waits for a writer, a `run` written before bash reads it stays
 * in the FIFO, and when the kernel dies bash reads EOF and exits without running anything.
 */
export class WarmShell {
  #exited = false;
  #claimed = false;
  #inputsClosed = false;
  readonly #cwdAtSpawn: string | null;

  private constructor(
    readonly child: BashChild,
    readonly dir: string,
    /** The cwd it was spawned in. */
    private readonly cwd: string,
    /** The environment it was spawned with (a private copy). */
    readonly env: ReadonlyMap<string, string>,
    /** The {@link confinementKey} of its sandbox. */
    private readonly confinement: string,
    private readonly bashVariables: ReadonlySet<string>,
    private readonly go: Deno.FsFile,
    /** The `restore` and `src` files, opened at the spawn: a hand-over only fills them. */
    private readonly inputs: { restore: ScratchInput; src: ScratchInput },
    /** Where {@link dir} goes back to. */
    readonly pool: ScratchPool,
    /** Its output pipes' identities ({@link outputPipes}), read while bash starts. */
    readonly pipes: ReadonlySet<string> | null,
    /** The resident sandbox it runs in, or null. */
    private readonly resident: Resident | null,
  ) {
    this.#cwdAtSpawn = dirIdentity(cwd);
    // Held until bash exits: closed earlier, a `run` not yet read could vanish with the FIFO.
    child.status.then(() => {
      this.#exited = true;
      go.close();
    });
  }

  /**
   * Spawns a warm shell in `state`'s cwd and environment, inside `resident` (its scratch
   * directory from the resident's pool) or unconfined (from `scratch`); null when this host
   * cannot, the cwd is not UTF-8 (its directory cannot be checked by {@link fits}) or must be
   * one directory (`cwdIdentity`: only a cold spawn enters exactly that one). Bash is
   * spawned as soon as its FIFO is open: the rest (the input files, the pipes' identities) is done
   * while it starts, since the next exec may already wait for it to read the FIFO.
   */
  static prepare(
    bash: string,
    bashVariables: ReadonlySet<string>,
    state: ShellState,
    resident: Resident | null,
    scratch: ScratchPool,
  ): WarmShell | null {
    if (state.cwdBytes !== undefined || state.cwdIdentity !== undefined) return null;
    state = { ...state, env: new Map(launchEnv(state.env)) }; // its restore comes at hand-over
    const pool = resident?.pool ?? scratch;
    let dir: string;
    try {
      dir = pool.acquire();
    } catch {
      return null; // no scratch directory now (a full disk): the next run starts cold
    }
    const opened: { close(): void }[] = [];
    let child: BashChild | null = null;
    try {
      const fifo = `${dir}/go`;
      ensureFifo(fifo);
      const go = Deno.openSync(fifo, { read: true, write: true });
      opened.push(go);
      child = spawnDriver(bash, state, resident, dir, WARM_DRIVER, ["warm"]);
      const input = (name: string) => {
        const file = ScratchInput.open(`${dir}/${name}`);
        opened.push(file);
        return file;
      };
      const inputs = { restore: input("restore"), src: input("src") };
      return new WarmShell(
        child,
        dir,
        state.cwd,
        new Map(state.env),
        resident?.key ?? "",
        bashVariables,
        go,
        inputs,
        pool,
        child.pipes ?? outputPipes(child.pid),
        resident,
      );
    } catch {
      for (const file of opened) file.close();
      // Spawned before an input failed: it has read nothing, and never will.
      if (child === null) pool.release(dir);
      else killGroup(child).then(() => pool.release(dir));
      return null;
    }
  }

  /**
   * Whether a run starting from `state` inside `sandbox` may use this shell: it is alive and
   * unclaimed, confined exactly as that run would be, its working directory is still the
   * directory that `state.cwd` names (not removed, not replaced), the environment differs
   * from its own only in names a running bash can take over, and its sandbox still has every
   * protection it started with (one the host removed meanwhile is free inside: P-SBX-6) and its
   * network relay (P-NET-1).
   */
  fits(state: ShellState, sandbox: Sandboxing | null): boolean {
    return this.fitsState(state) && confinementKey(sandbox) === this.confinement &&
      (this.resident === null || this.resident.protectionIntact && this.resident.netIntact);
  }

  /** Whether it {@link fits} a run starting from `state`, whatever that run's sandbox. */
  fitsState(state: ShellState): boolean {
    if (this.#exited || this.#claimed) return false;
    if (state.cwdBytes !== undefined || state.cwdIdentity !== undefined) return false;
    if (state.cwd !== this.cwd) return false;
    if (envDelta(this.env, launchEnv(state.env), this.bashVariables) === null) return false;
    // Not bash's /proc/PID/cwd: a launcher's spare enters the directory only once it reads its
    // request, and a shell looked at before would seem to be elsewhere.
    const now = dirIdentity(state.cwd);
    return now !== null && now === this.#cwdAtSpawn;
  }

  /**
   * Hands over the restore script of `state` (which {@link fits}) and `src`; true when the shell
   * now runs them. False when it died first: the caller discards it and runs cold.
   */
  handOver(src: string, state: ShellState): boolean {
    this.#claimed = true;
    if (this.#exited) return false;
    try {
      const launched = launchable(state);
      const restore = envDelta(this.env, launched.env, this.bashVariables)! +
        restoreScript(launched);
      this.inputs.restore.fill(encoder.encode(restore));
      this.inputs.src.fill(encoder.encode(src));
      this.#closeInputs();
      this.resident?.running(this.child.pid); // before it can start anything
      this.go.writeSync(encoder.encode("run\n"));
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the `restore` and `src` files once written or abandoned (idempotent). */
  #closeInputs(): void {
    if (this.#inputsClosed) return;
    this.#inputsClosed = true;
    this.inputs.restore.close();
    this.inputs.src.close();
  }

  /** Kills the shell's process group, waits for it and returns its scratch directory. */
  async discard(): Promise<void> {
    this.#claimed = true;
    this.#closeInputs();
    await killGroup(this.child);
    this.pool.release(this.dir);
  }
}

/** Kills the process group `child` leads and waits until it is gone and its pipes dropped. */
async function killGroup(child: BashChild): Promise<void> {
  signalGroup(child.pid, "SIGKILL");
  await Promise.allSettled([child.status, child.stdout.cancel(), child.stderr.cancel()]);
}
