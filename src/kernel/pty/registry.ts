/** The kernel's open PTYs: ids, session ownership, quota and event channels (K-PTY-1..7, K-PTY-13). */

import { ErrorCode, quotaExceeded, RpcError } from "../../protocol/errors.ts";
import { MAX_PTYS_PER_SESSION } from "../../protocol/limits.ts";
import { refNumber } from "../../protocol/refs.ts";
import { encodePtyInput } from "./keys.ts";
import { SHUTDOWN_ENDING } from "./session_end.ts";
import type { Pty, PtyExit, PtyOpenOptions, PtyScreen } from "./pty.ts";
import type { Audience } from "../events/bus_event.ts";

/** A registered PTY: wire id (`pty:N`), event channel (`pty.N`), owning session, opener and the PTY. */
export interface PtyEntry {
  id: string;
  channel: string;
  session: string;
  /** The principal that opened it. */
  principal: string;
  pty: Pty;
}

/**
 * Whose PTYs a caller reaches in its session: every one (`principal` null: the session's local
 * human), or only those `principal` opened. Another principal's PTY runs its program with that
 * principal's authority (the human's unconfined), so typing into it, or reading its screen,
 * would reach past the caller's own grants (P-SBX-7).
 */
export interface PtyScope {
  session: string;
  principal: string | null;
}

/** The `pty.N` event payload (K-PTY-13). */
export interface PtyEventPayload {
  pty_id: string;
  alive: boolean;
  exit: PtyExit | null;
}

/** One row of a `pty.list` result (K-PTY-6). */
export interface PtyListItem {
  pty_id: string;
  cmd: string;
  pid: number;
  cols: number;
  rows: number;
  alive: boolean;
}

/** Receives each `pty.N` event, and whom it is for, for publishing on the event bus. */
export type PtyEventSink = (channel: string, payload: PtyEventPayload, audience: Audience) => void;

/** Whether `entry` is in `scope`: its session, and opened by the scope's principal unless none. */
function inScope(entry: PtyEntry, scope: PtyScope): boolean {
  return entry.session === scope.session &&
    (scope.principal === null || entry.principal === scope.principal);
}

function shuttingDown(cmd: string): RpcError {
  return new RpcError(ErrorCode.PTY_SPAWN_FAILED, "the kernel is shutting down", { cmd });
}

function unknownPty(id: string): RpcError {
  return new RpcError(ErrorCode.UNKNOWN_PTY, `unknown pty: ${id}`, { pty_id: id });
}

/** All PTYs of one kernel, numbered by a kernel-wide counter from 1 and owned by sessions. */
export class PtyRegistry {
  #nextId = 1;
  #entries = new Map<number, PtyEntry>();
  /** Opens in flight per session, counted against the quota. */
  #opening = new Map<string, number>();
  /** Set by {@link closeAll}: no PTY opens after it, and one whose open ends after it is closed. */
  #shut = false;
  /** The starts of PTYs under way, which {@link closeAll} waits for. */
  #starting = new Set<Promise<Pty>>();
  #publish: PtyEventSink;
  #retire: (channel: string) => void;

  /**
   * Creates an empty registry whose PTYs announce their events through `publish`; `retire`
   * lets go of a closed PTY's held events (the bus's rings), once its exit is announced.
   */
  constructor(publish: PtyEventSink, retire: (channel: string) => void = () => {}) {
    this.#publish = publish;
    this.#retire = retire;
  }

  /**
   * Starts a PTY for `principal` in `session` (K-PTY-1); `-32040` beyond 16 per session,
   * `-32023` when it cannot start.
   */
  async open(session: string, principal: string, opts: PtyOpenOptions): Promise<PtyEntry> {
    if (this.#shut) throw shuttingDown(opts.cmd);
    const opening = this.#opening.get(session) ?? 0;
    if (this.#sessionEntries(session).length + opening >= MAX_PTYS_PER_SESSION) {
      throw quotaExceeded("ptys", MAX_PTYS_PER_SESSION);
    }
    this.#opening.set(session, opening + 1);
    // loaded with the first PTY: 14 modules a kernel loaded at start, before its first attach, that
    // its execs never use (issue 33)
    const starting = import("./pty.ts").then(({ Pty }) => Pty.open(opts));
    this.#starting.add(starting);
    let pty: Pty;
    try {
      pty = await starting;
    } finally {
      this.#starting.delete(starting);
      const left = this.#opening.get(session)! - 1;
      if (left === 0) this.#opening.delete(session);
      else this.#opening.set(session, left);
    }
    if (this.#shut) {
      // begun before the shutdown, it would run on unseen, and the kernel wait for it forever
      await pty.close(SHUTDOWN_ENDING);
      throw shuttingDown(opts.cmd);
    }
    const n = this.#nextId++;
    const entry = { id: `pty:${n}`, channel: `pty.${n}`, session, principal, pty };
    this.#entries.set(n, entry);
    pty.onEvent((state) =>
      this.#publish(entry.channel, { pty_id: entry.id, ...state }, { session, principal })
    );
    return entry;
  }

  /** The PTY `id` (`pty:N`) in `scope`; `-32022` when unknown, closed or out of scope. */
  get(scope: PtyScope, id: string): PtyEntry {
    const n = refNumber("pty", id);
    const entry = n === null ? undefined : this.#entries.get(n);
    if (entry === undefined || !inScope(entry, scope)) throw unknownPty(id);
    return entry;
  }

  /** The PTYs in `scope` ascending by id, without screens; does not affect `changed` (K-PTY-6). */
  list(scope: PtyScope): PtyListItem[] {
    return this.#sessionEntries(scope.session).filter((e) => inScope(e, scope)).map((
      { id, pty },
    ) => ({
      pty_id: id,
      cmd: pty.cmd,
      pid: pty.pid,
      cols: pty.cols,
      rows: pty.rows,
      alive: pty.alive,
    }));
  }

  /** Encodes `input` (K-PTY-2) and writes it to the PTY: `{pty_id, sent}`. */
  async send(
    scope: PtyScope,
    id: string,
    input: unknown,
  ): Promise<{ pty_id: string; sent: number }> {
    const { pty } = this.get(scope, id);
    const sent = await pty.write(encodePtyInput(input, pty.applicationCursorKeys));
    return { pty_id: id, sent };
  }

  /** The rendered screen (K-PTY-3): `{pty_id, cmd, cols, rows, screen, cursor, changed, alive, exit, pid}`. */
  async read(scope: PtyScope, id: string): Promise<{ pty_id: string } & PtyScreen> {
    const screen = await this.get(scope, id).pty.read();
    return { pty_id: id, ...screen };
  }

  /** Resizes the PTY (K-PTY-4): `{pty_id, cols, rows}` with the clamped size. */
  resize(
    scope: PtyScope,
    id: string,
    cols: number,
    rows: number,
  ): { pty_id: string; cols: number; rows: number } {
    const { pty } = this.get(scope, id);
    pty.resize(cols, rows);
    return { pty_id: id, cols: pty.cols, rows: pty.rows };
  }

  /**
   * Ends the PTY's program, reaps it and forgets the id and its events (K-PTY-5):
   * `{pty_id, closed:true, exit}`.
   */
  async close(
    scope: PtyScope,
    id: string,
  ): Promise<{ pty_id: string; closed: true; exit: PtyExit }> {
    const entry = this.get(scope, id);
    this.#entries.delete(Number(id.slice(4)));
    const exit = await entry.pty.close();
    // Closed, the PTY announces nothing more and its id is unknown (K-PTY-7): its ring of up to
    // 1024 events would otherwise stay for the kernel's life, one per PTY ever opened.
    this.#retire(entry.channel);
    return { pty_id: id, closed: true, exit };
  }

  /**
   * Ends every PTY of every session, and each one opened after, as G-SOCK-8 ends a task (kernel
   * shutdown): SIGTERM, SIGKILL 2000 ms later.
   */
  async closeAll(): Promise<void> {
    this.#shut = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    // the programs of opens under way are started by now or never: each is closed once it is
    const late = [...this.#starting].map((p) =>
      p.then((pty) => pty.close(SHUTDOWN_ENDING), () => {})
    );
    await Promise.all([...entries.map((e) => e.pty.close(SHUTDOWN_ENDING)), ...late]);
  }

  /** Ascending by id: entries are inserted as their ids are assigned, and Maps keep insertion order. */
  #sessionEntries(session: string): PtyEntry[] {
    return [...this.#entries.values()].filter((entry) => entry.session === session);
  }
}
