import { RpcError } from "../../protocol/errors.ts";
import { ErrorCode, quotaExceeded } from "../../protocol/errors.ts";
import {
  MAX_SESSIONS,
  MAX_TRANSCRIPT,
  RECLAIMED_NAMES,
  SESSION_IDLE_MS,
  TRANSCRIPT_INLINE_BYTES,
} from "../../protocol/limits.ts";
import { refNumber } from "../../protocol/refs.ts";
import type { ShellViews } from "./shell_views.ts";

/**
 * The number of the last `out:N` of a session name, shared by the sessions of that name one after
 * another: a reclaimed session's exec still running when its successor starts takes a number
 * from the same count, so none is given twice (V-REF-1).
 */
export interface RefCount {
  last: number;
}

/**
 * How a transcript value can be held in less memory: `bytes` of it (captured output) are in
 * memory, and `spilled()` is the same value with them left in the CAS.
 */
export interface Spill<V> {
  bytes: number;
  spilled: () => V;
}

/**
 * A named session: its shell state as each principal sees it, and its transcript of `out:N`
 * values (K-ATTACH-3, V-REF-1). The newest values hold their output in memory, up to
 * TRANSCRIPT_INLINE_BYTES of it; older ones are kept spilled (issue 33: 1,000 execs of ~17 KB of
 * output each left the kernel's heap 22 MiB larger than 1,000 of a few bytes).
 */
export class Session<V = unknown> {
  #transcript = new Map<number, V>();
  /** The spills of values still held in memory, oldest first. */
  #unspilled = new Map<number, Spill<V>>();
  /** Bytes of output the values in {@link #unspilled} hold. */
  #inlineBytes = 0;
  /** Settles once every exec that took a start turn so far has started. */
  #started: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly shell: ShellViews,
    /** The count its refs continue (that of an earlier session of this name, if any). */
    readonly refs: RefCount = { last: 0 },
  ) {}

  /**
   * A place in the order in which this session's execs start (W-RPC-4). Taken synchronously when
   * a request is dispatched; `ready` settles once every earlier exec has called its `started`.
   */
  startTurn(): { ready: Promise<void>; started: () => void } {
    let started!: () => void;
    const done = new Promise<void>((resolve) => (started = resolve));
    const ready = this.#started;
    this.#started = ready.then(() => done);
    return { ready, started };
  }

  /**
   * Runs `start` in its start turn, taken now: it waits for every earlier exec of the session to
   * start, and calls `started` once it has spawned bash (the turn also ends if it never does).
   */
  async inTurn<T>(start: (started: () => void) => Promise<T>): Promise<T> {
    const turn = this.startTurn();
    try {
      await turn.ready;
      return await start(turn.started);
    } finally {
      turn.started();
    }
  }

  /**
   * Stores a finished value as the next `out:N`, evicting beyond the newest 1000; with `spill`,
   * older values are spilled once the newer ones hold TRANSCRIPT_INLINE_BYTES.
   */
  record(value: V, spill?: Spill<V>): number {
    const n = ++this.refs.last;
    this.#transcript.set(n, value);
    if (spill) {
      this.#unspilled.set(n, spill);
      this.#inlineBytes += spill.bytes;
    }
    if (this.#transcript.size > MAX_TRANSCRIPT) {
      const oldest = this.#transcript.keys().next().value!;
      this.#transcript.delete(oldest);
      this.#forget(oldest);
    }
    while (this.#inlineBytes > TRANSCRIPT_INLINE_BYTES) {
      const [older, { spilled }] = this.#unspilled.entries().next().value!;
      this.#transcript.set(older, spilled());
      this.#forget(older);
    }
    return n;
  }

  #forget(n: number): void {
    const spill = this.#unspilled.get(n);
    if (!spill) return;
    this.#unspilled.delete(n);
    this.#inlineBytes -= spill.bytes;
  }

  /** The value stored as `out:N`; unknown or evicted → -32004. */
  lookup(ref: string): { n: number; value: V } {
    const n = refNumber("out", ref);
    const value = n === null ? undefined : this.#transcript.get(n);
    if (value === undefined) {
      throw new RpcError(ErrorCode.UNKNOWN_REF, `unknown ref: ${ref}`, { ref });
    }
    return { n: n!, value };
  }
}

/**
 * The kernel's live sessions, created on first attach (K-ATTACH-3) and reclaimed (E-3): a session
 * with no attached connection that `busy` (a non-terminal task or an open PTY) does not keep goes
 * after {@link SESSION_IDLE_MS} idle, or at once, least recently used first, when a new session
 * would otherwise exceed the `sessions` quota.
 */
export class SessionRegistry<V = unknown> {
  /** Least recently used first: a session is moved to the end whenever it is used. */
  #sessions = new Map<string, Session<V>>();
  #holds = new Map<string, number>();
  #lastUsed = new Map<string, number>();
  /**
   * The ref count of each reclaimed session, oldest first: one opened again continues it,
   * so no ref is reused within the kernel's lifetime (V-REF-1) and a client holding
   * `shoal://out/3` from before gets -32004, never another value. Beyond RECLAIMED_NAMES names
   * the oldest are forgotten; every new session then starts above the highest of them.
   */
  #reclaimedRefs = new Map<string, RefCount>();
  #forgottenRefs = 0;

  constructor(
    private readonly initial: () => ShellViews,
    private readonly busy: (session: string) => boolean,
    private readonly now: () => number = () => performance.now(),
    /** Told the name of each reclaimed session. */
    private readonly removed: (session: string) => void = () => {},
  ) {}

  /** The session named `name`, created when new; more than 64 in use → -32040. */
  open(name: string): Session<V> {
    this.#reclaim(SESSION_IDLE_MS);
    let s = this.#sessions.get(name);
    if (!s) {
      if (this.#sessions.size >= MAX_SESSIONS) this.#reclaim(0, 1);
      if (this.#sessions.size >= MAX_SESSIONS) throw quotaExceeded("sessions", MAX_SESSIONS);
      s = new Session<V>(
        name,
        this.initial(),
        this.#reclaimedRefs.get(name) ?? { last: this.#forgottenRefs },
      );
      this.#reclaimedRefs.delete(name);
    }
    this.#touch(s);
    return s;
  }

  /** Marks `session` attached by one more connection; the returned function releases it. */
  hold(session: Session<V>): () => void {
    this.#holds.set(session.name, (this.#holds.get(session.name) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = this.#holds.get(session.name)! - 1;
      if (left === 0) this.#holds.delete(session.name);
      else this.#holds.set(session.name, left);
      if (this.#sessions.get(session.name) === session) this.#touch(session);
    };
  }

  #touch(s: Session<V>): void {
    this.#sessions.delete(s.name);
    this.#sessions.set(s.name, s);
    this.#lastUsed.set(s.name, this.now());
  }

  /** Removes reclaimable sessions idle for `idleMs` or more, oldest first, at most `limit`. */
  #reclaim(idleMs: number, limit = Infinity): void {
    const cutoff = this.now() - idleMs;
    for (const name of [...this.#sessions.keys()]) {
      if (limit === 0) return;
      if (this.#lastUsed.get(name)! > cutoff) continue;
      if (this.#holds.has(name) || this.busy(name)) continue;
      this.#remember(name, this.#sessions.get(name)!.refs);
      this.#sessions.delete(name);
      this.#lastUsed.delete(name);
      this.removed(name);
      limit--;
    }
  }

  #remember(name: string, refs: RefCount): void {
    this.#reclaimedRefs.set(name, refs);
    if (this.#reclaimedRefs.size <= RECLAIMED_NAMES) return;
    const [oldest, forgotten] = this.#reclaimedRefs.entries().next().value!;
    this.#reclaimedRefs.delete(oldest);
    this.#forgottenRefs = Math.max(this.#forgottenRefs, forgotten.last);
  }
}
