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
 * ({@link WarmShells.prepareDuringRun}): a shell spawned after a run's answer is ready ~1-2 ms
 * later, and a caller coming back later than this finds it so.
 */
const BURST_GAP_MS = 50;
/**
 * The shells a session in a burst keeps ready: the next run's, and the one after it, spawned once
 * the answer before it is on its way. Spawned while a run went on, a shell held the event loop
 * 0.5-1.9 ms (glibc's posix_spawn waits until bash has exec'd, which competed with the run's bash
 * for the CPU), and the notice of that run's end waited as long (issue 33).
 */
const BURST_DEPTH = 2;
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

/** A warm shell ready for a session, with its idle timer and the grants it was prepared under. */
interface Slot {
  shell: WarmShell;
  idle: ReturnType<typeof setTimeout>;
  grants: Grants;
}

/**
 * At most one idle warm shell per session (issue 10), two in a burst ({@link BURST_DEPTH}),
 * prepared for the caller that last ran or attached, in that principal's view of the session and
 * inside its sandbox (P-SBX-4): while a run goes on ({@link prepareDuringRun}), after each run and
 * on attach. A run takes one only when it {@link WarmShell.fits} the run's start state and sandbox
 * and was spawned with the same value of every guarded name: a bash spawned in an environment one
 * principal changed never serves another whose view lacks that change (P-SBX-7). Else it is
 * discarded. Warm shells are no tasks: never listed, never counted in a quota. A session's idle
 * for {@link WARM_IDLE_MS} are killed, so are a reclaimed session's ({@link drop}); {@link closeAll}
 * (kernel shutdown) kills every one.
 */
export class WarmShells {
  /** The ready shells of each session, the oldest first. */
  #slots = new Map<string, Slot[]>();
  /** Sessions whose last run came in a burst: they keep {@link BURST_DEPTH} shells ready. */
  #inBurst = new Set<string>();
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
   * The session's oldest warm shell that fits a run starting from `state` inside `sandbox` (it
   * leaves the slots); older ones that do not are discarded, and with none the run starts cold.
   */
  take(session: string, state: ShellState, sandbox: Sandboxing | null): WarmShell | null {
    const slots = this.#slots.get(session) ?? [];
    for (let slot = slots.shift(); slot !== undefined; slot = slots.shift()) {
      clearTimeout(slot.idle);
      if (slots.length === 0) this.#slots.delete(session);
      if (fitsRun(slot.shell, state, sandbox)) return slot.shell;
      this.#discard(slot.shell);
    }
    return null;
  }

  /**
   * Makes sure the attachment's session has a warm shell fitting its principal's view of the
   * session inside the attachment's sandbox, replacing one that does not; none when that sandbox
   * refuses the cwd. `computed` is the sandbox a run in the session just got (its principal's plain
   * one, widened by no approved plan): used when its cwd is the state's, instead of a new view.
   * A sandboxed shell is spawned in the session's resident sandbox, once that has started.
   */
  prepare(attachment: Attachment, computed?: ComputedSandbox, depth?: number): void {
    depth ??= this.#inBurst.has(attachment.session.name) ? BURST_DEPTH : 1;
    try {
      this.#prepare(attachment, computed, depth);
    } catch {
      // Called from timers and callbacks, where a throw ends the kernel: a warm shell is only a
      // head start, and one that cannot be had now (the proxy's socket on a full disk, no fds)
      // leaves the next run to start cold and meet that failure with its own error.
    }
  }

  /** Makes sure the session has `depth` shells ready ({@link prepare}). */
  #prepare(attachment: Attachment, computed: ComputedSandbox | undefined, depth: number): void {
    if (this.#closed) return;
    const session = attachment.session;
    // a view computed now would be computed again once the spare waits (0.3 ms, issue 34)
    if (this.#awaitingSpare.get(session.name) === attachment) return;
    const state = session.shell.view(attachment.principal);
    const slots = this.#slots.get(session.name) ?? [];
    // Prepared under these grants and fitting the state, their sandbox was computed for this cwd:
    // it is not computed again (0.1 ms), and a run that now sees another view takes no shell.
    const fitting = slots.every((slot) =>
      slot.grants === attachment.grants && slot.shell.fitsState(state) &&
      sameGuardedEnv(slot.shell.env, state.env)
    );
    if (fitting && slots.length >= depth) return;
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
    const kept = slots.filter((slot) => fitsRun(slot.shell, state, sandbox));
    if (kept.length < slots.length) {
      for (const slot of slots.filter((slot) => !kept.includes(slot))) {
        clearTimeout(slot.idle);
        this.#discard(slot.shell);
      }
      if (kept.length === 0) this.#slots.delete(session.name);
      else this.#slots.set(session.name, kept);
    }
    if (kept.length >= depth) return;
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
      if (this.#slots.get(session.name)?.some((slot) => slot.shell === shell)) {
        this.drop(session.name);
      }
    }, WARM_IDLE_MS);
    this.#slots.set(session.name, [...kept, { shell, idle, grants: attachment.grants }]);
    // the next one at once, or in a resident once its launcher has a spare again (above)
    if (kept.length + 1 < depth) this.#prepare(attachment, { cwd: state.cwd, sandbox }, depth);
  }

  /**
   * {@link prepare} while a run of the session goes on: in a burst (the run came within
   * {@link BURST_GAP_MS} of the end of the session's run before it), only when no shell is
   * ready, so that the next run of the burst finds one; else the shells are topped up
   * ({@link BURST_DEPTH}) once the run's answer is on its way (run_source.ts). A run after a pause
   * prepares only once it has gone on for {@link LONG_RUN_MS}; a short one leaves it to the
   * prepare after its answer (run_source.ts). Spawned at once on a machine idle until then, the
   * spawn held the event loop 1.7 ms (p50; 0.2 ms back to back), past the end of a short run,
   * and its answer waited (issue 33: kernel exec p50 100 ms apart 0.55x, 500 ms apart 0.83x).
   */
  prepareDuringRun(attachment: Attachment, computed: ComputedSandbox | undefined): void {
    const session = attachment.session.name;
    const ended = this.#lastEnded.get(session);
    if (ended !== undefined && performance.now() - ended <= BURST_GAP_MS) {
      this.#inBurst.add(session);
      if (!this.#slots.has(session)) this.prepare(attachment, computed, 1);
      return;
    }
    this.#inBurst.delete(session);
    clearTimeout(this.#due.get(session));
    this.#due.set(
      session,
      setTimeout(() => {
        this.#due.delete(session);
        this.prepare(attachment, computed, 1);
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

  /** Kills the session's warm shells, if any (idle, or the session is gone). */
  drop(session: string): void {
    this.#lastEnded.delete(session);
    this.#inBurst.delete(session);
    clearTimeout(this.#due.get(session));
    this.#due.delete(session);
    for (const slot of this.#slots.get(session) ?? []) {
      clearTimeout(slot.idle);
      this.#discard(slot.shell);
    }
    this.#slots.delete(session);
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

  #discard(shell: WarmShell): void {
    const done = shell.discard().finally(() => this.#discarding.delete(done));
    this.#discarding.add(done);
  }
}
