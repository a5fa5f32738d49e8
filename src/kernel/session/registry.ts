import { RpcError } from "../../protocol/errors.ts";
import { ErrorCode, quotaExceeded } from "../../protocol/errors.ts";
import { MAX_SESSIONS, MAX_TRANSCRIPT } from "../../protocol/limits.ts";
import { applyChange, type ShellChange, type ShellState } from "../bash/shell_state.ts";

/** A named session: shared shell state and its transcript of `out:N` values (K-ATTACH-3, V-REF-1). */
export class Session<V = unknown> {
  readonly state: ShellState;
  #transcript = new Map<number, V>();
  #lastRef = 0;
  /** Settles once every exec that took a start turn so far has started. */
  #started: Promise<void> = Promise.resolve();

  constructor(readonly name: string, state: ShellState) {
    this.state = state;
  }

  /** Merges one finished exec's changes into the shared state (K-BASH-4). */
  merge(change: ShellChange): void {
    applyChange(this.state, change);
  }

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

  /** Stores a finished value as the next `out:N`, evicting beyond the newest 1000. */
  record(value: V): number {
    const n = ++this.#lastRef;
    this.#transcript.set(n, value);
    if (this.#transcript.size > MAX_TRANSCRIPT) {
      this.#transcript.delete(this.#transcript.keys().next().value!);
    }
    return n;
  }

  /** The value stored as `out:N`; unknown or evicted → -32004. */
  lookup(ref: string): { n: number; value: V } {
    const m = /^out:([0-9]+)$/.exec(ref);
    const n = m ? Number(m[1]) : NaN;
    const value = this.#transcript.get(n);
    if (value === undefined) {
      throw new RpcError(ErrorCode.UNKNOWN_REF, `unknown ref: ${ref}`, { ref });
    }
    return { n, value };
  }
}

/** The kernel's live sessions, created on first attach (K-ATTACH-3). */
export class SessionRegistry<V = unknown> {
  #sessions = new Map<string, Session<V>>();

  constructor(private readonly initial: () => ShellState) {}

  /** The session named `name`, created when new; more than 64 → -32040. */
  open(name: string): Session<V> {
    let s = this.#sessions.get(name);
    if (!s) {
      if (this.#sessions.size >= MAX_SESSIONS) throw quotaExceeded("sessions", MAX_SESSIONS);
      s = new Session<V>(name, this.initial());
      this.#sessions.set(name, s);
    }
    return s;
  }
}
