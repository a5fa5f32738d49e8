import { WARM_IDLE_MS } from "../../protocol/limits.ts";
import type { ScratchPool } from "../bash/scratch_pool.ts";
import type { ShellState } from "../bash/shell_state.ts";
import { WarmShell } from "../shells/warm_shell.ts";
import type { Sandboxing } from "../sandbox/command.ts";
import type { Resident } from "../sandbox/resident.ts";
import type { Residents } from "../sandbox/residents.ts";
import type { Grants } from "../policy/grants.ts";
import type { Attachment } from "../session/attachment.ts";
import { sameGuardedEnv } from "../session/guarded_names.ts";

/**
 * The longest pause between a session's runs that still counts as a burst
 * ({@link WarmShells.prepareInBurst}): a shell spawned after a run's answer is ready ~1-2 ms
 * later, and a caller coming back later than this finds it so.
 */
const BURST_GAP_MS = 50;
/** How long a run after a pause goes before the session's next shell is spawned meanwhile. */
const LONG_RUN_MS = 20;

/** The sandbox a run of the attachment's principal was given in `cwd`, just now. */
export interface ComputedSandbox {
  cwd: string;
  sandbox: Sandboxing | null;
}

/**
 * Whether `shell` may serve a run starting from `state` inside `sandbox`: it fits, and it was
 * spawned with the run's value of every guarded name (P-SBX-7). That also starts bash anew when
 * what the loader and libc read at start changed (`LD_*`, `GLIBC_TUNABLES`), as a cold run would.
 */
function fitsRun(shell: WarmShell, state: ShellState, sandbox: Sandboxing | null): boolean {
  return shell.fits(state, sandbox) && sameGuardedEnv(shell.env, state.env);
}

/**
 * At most one idle warm shell per session (issue 10), prepared for the caller that last ran or
 * attached, in that principal's view of the session and inside its sandbox (P-SBX-4): while a
 * run goes on ({@link prepareDuringRun}), after each run and on attach. A run takes it only when
 * it {@link WarmShell.fits} the run's start state and sandbox and was spawned with the same value
 * of every guarded name: a bash spawned in an environment one principal changed never serves
 * another whose view lacks that change (P-SBX-7). Else it is
 * discarded. Warm shells are no tasks: never listed, never counted in a quota. One idle for
 * {@link WARM_IDLE_MS} is killed, so is a reclaimed session's ({@link drop}); {@link closeAll}
 * (kernel shutdown) kills every one.
 */
export class WarmShells {
  #slots = new Map<
    string,
    { shell: WarmShell; idle: ReturnType<typeof setTimeout>; grants: Grants }
  >();
  #discarding = new Set<Promise<void>>();
  /** Runs under way, by session: while one runs, no new sandbox is started for a warm shell. */
  #running = new Map<string, number>();
  /**
   * The attachment whose prepare waits for its resident's next spare, by session: it prepares
   * from the session's state of then, so another prepare for it meanwhile has nothing to do.
   */
  #awaitingSpare = new Map<string, Attachment>();
  /** When the last run of each session ended ({@link prepareDuringRun}). */
  #lastEnded = new Map<string, number>();
  /** Prepares due once a run after a pause has gone on for {@link LONG_RUN_MS}, by session. */
  #due = new Map<string, ReturnType<typeof setTimeout>>();
  #closed = false;

  constructor(
    private readonly bash: string,
    private readonly bashVariables: ReadonlySet<string>,
    private readonly pool: ScratchPool,
    private readonly residents: Residents,
  ) {}

  /**
   * The session's warm shell when it fits a run starting from `state` inside `sandbox` (it leaves
   * the slot); a shell that does not is discarded, and the run starts cold.
   */
  take(session: string, state: ShellState, sandbox: Sandboxing | null): WarmShell | null {
    const slot = this.#slots.get(session);
    if (slot === undefined) return null;
    this.#vacate(session);
    if (fitsRun(slot.shell, state, sandbox)) return slot.shell;
    this.#discard(slot.shell);
    return null;
  }

  /**
   * Makes sure the attachment's session has a warm shell fitting its principal's view of the
   * session inside the attachment's sandbox, replacing one that does not; none when that sandbox
   * refuses the cwd. `computed` is the sandbox a run in the session just got (its principal's plain
   * one, widened by no approved plan): used when its cwd is the state's, instead of a new view.
   * A sandboxed shell is spawned in the session's resident sandbox, once that has started.
   */
  prepare(attachment: Attachment, computed?: ComputedSandbox): void {
    try {
      this.#prepare(attachment, computed);
    } catch {
      // Called from timers and callbacks, where a throw ends the kernel: a warm shell is only a
      // head start, and one that cannot be had now (the proxy's socket on a full disk, no fds)
      // leaves the next run to start cold and meet that failure with its own error.
    }
  }

  #prepare(attachment: Attachment, computed?: ComputedSandbox): void {
    if (this.#closed) return;
    const session = attachment.session;
    // a view computed now would be computed again once the spare waits (0.3 ms, issue 34)
    if (this.#awaitingSpare.get(session.name) === attachment) return;
    const state = session.shell.view(attachment.principal);
    const slot = this.#slots.get(session.name);
    // Prepared under these grants and fitting the state, its sandbox was computed for this cwd:
    // it is not computed again (0.1 ms), and a run that now sees another view takes no shell.
    if (
      slot?.grants === attachment.grants && slot.shell.fitsState(state) &&
      sameGuardedEnv(slot.shell.env, state.env)
    ) return;
    let sandbox: Sandboxing | null;
    try {
      // A view computed for this cwd a moment ago is used again: a run that then sees another
      // (its own `git init` made a .git) finds the shell's confinement different and runs cold.
      sandbox = computed !== undefined && computed.cwd === state.cwd &&
          state.cwdBytes === undefined
        ? computed.sandbox
        : attachment.grants.sandboxFor(state.cwd);
    } catch {
      return this.drop(session.name);
    }
    if (slot !== undefined) {
      if (fitsRun(slot.shell, state, sandbox)) return;
      this.drop(session.name);
    }
    let resident: Resident | null = null;
    if (sandbox !== null) {
      // A view that changed during a run (its `git init` made a .git) would start a sandbox whose
      // placeholders (P-SBX-6) land in the tree under that run: prepared when the run has ended.
      if (this.#running.has(session.name) && !this.residents.has(session.name, sandbox)) return;
      resident = this.residents.ready(session.name, sandbox);
      if (resident === null) {
        // A run of the session waiting for this sandbox too spawns its bash first, and its end
        // prepares the next shell: spawned first, this one held up the first exec of an
        // autostarted kernel ~3 ms, ~7 ms with both cores busy (issue 33).
        this.residents.get(session.name, sandbox).then(() => {
          if (!this.#running.has(session.name)) this.prepare(attachment);
        }, () => {});
        return;
      }
      // Between two spares a spawn would enter through nsenter: three execs on the host, taking
      // the CPU the run going on needs (a loaded launcher's next spare comes a few ms late).
      const spare = resident.untilSpare();
      if (spare !== null) {
        // in a few ms: the view just computed still serves
        this.#awaitingSpare.set(session.name, attachment);
        spare.then(() => {
          if (this.#awaitingSpare.get(session.name) === attachment) {
            this.#awaitingSpare.delete(session.name);
          }
          this.prepare(attachment, { cwd: state.cwd, sandbox });
        });
        return;
      }
    }
    const shell = WarmShell.prepare(
      this.bash,
      this.bashVariables,
      state,
      resident,
      this.pool,
    );
    if (shell === null) return;
    const idle = setTimeout(() => {
      if (this.#slots.get(session.name)?.shell === shell) this.drop(session.name);
    }, WARM_IDLE_MS);
    this.#slots.set(session.name, { shell, idle, grants: attachment.grants });
  }

  /**
   * {@link prepare} while a run of the session goes on: at once when the run came in a burst
   * (within {@link BURST_GAP_MS} of the end of the session's run before it), so the spawn
   * overlaps the run and the next run of the burst finds its shell ready. A run after a pause
   * prepares only once it has gone on for {@link LONG_RUN_MS}; a short one leaves it to the
   * prepare after its answer (run_source.ts). Spawned at once on a machine idle until then, the
   * spawn held the event loop 1.7 ms (p50; 0.2 ms back to back), past the end of a short run,
   * and its answer waited (issue 33: kernel exec p50 100 ms apart 0.55x, 500 ms apart 0.83x).
   */
  prepareDuringRun(attachment: Attachment, computed: ComputedSandbox | undefined): void {
    const session = attachment.session.name;
    const ended = this.#lastEnded.get(session);
    if (ended !== undefined && performance.now() - ended <= BURST_GAP_MS) {
      return this.prepare(attachment, computed);
    }
    clearTimeout(this.#due.get(session));
    this.#due.set(
      session,
      setTimeout(() => {
        this.#due.delete(session);
        this.prepare(attachment, computed);
      }, LONG_RUN_MS),
    );
  }

  /** Counts a run of `session` under way until the returned end is called (once). */
  running(session: string): () => void {
    this.#running.set(session, (this.#running.get(session) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#lastEnded.set(session, performance.now());
      clearTimeout(this.#due.get(session));
      this.#due.delete(session);
      const left = this.#running.get(session)! - 1;
      if (left === 0) this.#running.delete(session);
      else this.#running.set(session, left);
    };
  }

  /** Kills the session's warm shell, if any (idle, or the session is gone). */
  drop(session: string): void {
    this.#lastEnded.delete(session);
    clearTimeout(this.#due.get(session));
    this.#due.delete(session);
    const slot = this.#slots.get(session);
    if (slot === undefined) return;
    this.#vacate(session);
    this.#discard(slot.shell);
  }

  /** Kills every warm shell (their scratch directories were removed); later ones are prepared. */
  dropAll(): void {
    for (const name of [...this.#slots.keys()]) this.drop(name);
  }

  /** Kills every warm shell and waits until they are gone; no new ones are prepared. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#due.values()) clearTimeout(timer);
    this.#due.clear();
    for (const name of [...this.#slots.keys()]) this.drop(name);
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
