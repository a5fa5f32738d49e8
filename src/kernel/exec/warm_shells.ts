import { WARM_IDLE_MS } from "../../protocol/limits.ts";
import type { ScratchPool } from "../bash/scratch_pool.ts";
import { cloneState, type ShellState } from "../bash/shell_state.ts";
import { WarmShell } from "../bash/warm_shell.ts";
import type { Session } from "../session/registry.ts";

/**
 * At most one warm shell per session (issue 10), prepared unconfined from the session's state
 * after each run and on attach, and taken by the next run that starts from exactly that state.
 * Warm shells are no tasks: never listed, never counted in a quota. One idle for
 * {@link WARM_IDLE_MS} is killed; {@link closeAll} (kernel shutdown) kills every one.
 */
export class WarmShells {
  #slots = new Map<string, { shell: WarmShell; idle: ReturnType<typeof setTimeout> }>();
  #discarding = new Set<Promise<void>>();
  #closed = false;

  constructor(private readonly bash: string, private readonly pool: ScratchPool) {}

  /**
   * The session's warm shell when it fits a run starting from `state` (it leaves the slot); a
   * shell that does not fit is discarded, and the run starts cold.
   */
  take(session: string, state: ShellState): WarmShell | null {
    const slot = this.#slots.get(session);
    if (slot === undefined) return null;
    this.#vacate(session);
    if (slot.shell.fits(state)) return slot.shell;
    this.#discard(slot.shell);
    return null;
  }

  /** Makes sure the session has a warm shell fitting its current state (replacing a stale one). */
  prepare(session: Session<unknown>): void {
    if (this.#closed) return;
    const slot = this.#slots.get(session.name);
    if (slot !== undefined) {
      if (slot.shell.fits(session.state)) return;
      this.#vacate(session.name);
      this.#discard(slot.shell);
    }
    const shell = WarmShell.prepare(this.bash, cloneState(session.state), this.pool);
    if (shell === null) return;
    const idle = setTimeout(() => {
      if (this.#slots.get(session.name)?.shell !== shell) return;
      this.#vacate(session.name);
      this.#discard(shell);
    }, WARM_IDLE_MS);
    this.#slots.set(session.name, { shell, idle });
  }

  /** Kills every warm shell and waits until they are gone; no new ones are prepared. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    for (const [name, slot] of this.#slots) {
      this.#vacate(name);
      this.#discard(slot.shell);
    }
    await Promise.all(this.#discarding);
  }

  #vacate(session: string): void {
    clearTimeout(this.#slots.get(session)?.idle);
    this.#slots.delete(session);
  }

  #discard(shell: WarmShell): void {
    const done = shell.discard().finally(() => this.#discarding.delete(done));
    this.#discarding.add(done);
  }
}
