import { ErrorCode, quotaExceeded, RpcError, type RpcErrorObject } from "../../protocol/errors.ts";
import {
  KILL_GRACE_MS,
  MAX_TASKS_PER_SESSION,
  MAX_TERMINAL_TASKS_KEPT,
} from "../../protocol/limits.ts";
import { refNumber } from "../../protocol/refs.ts";
import {
  otherGroupsOfSession,
  sessionEndedWithin,
  signalGroupButLeader,
  signalGroupOnly,
  signalSession,
} from "../bash/group_leader.ts";
import { processExited, procStat } from "../bash/proc_stat.ts";
import type { EventBus } from "../events/bus.ts";
import { nowNs } from "../events/now_ns.ts";

/** Task states (K-TASK-1). */
export type TaskState =
  | "running"
  | "suspended"
  | "cancelling"
  | "completed"
  | "failed"
  | "cancelled";

/** When, after a resume, an entered run's nsenter is looked at again (Task.pause). */
const LEADER_RECHECK_MS = [20, 200, 1000];

const TERMINAL: ReadonlySet<TaskState> = new Set(["completed", "failed", "cancelled"]);

/** The task record on the wire (K-TASK-1). */
export interface TaskRecord {
  task: string;
  session: string;
  principal: string;
  state: TaskState;
  cmd: string;
  pid: number | null;
  started_ns: bigint;
  finished_ns: bigint | null;
  result_ref: string | null;
  error: RpcErrorObject | null;
}

/** Live output a task exposes through `task.output` (K-TASK-7). */
export interface TaskOutput {
  total: number;
  readRange(offset: number, length: number): Promise<Uint8Array>;
}

/** One unit of work with its process group. */
export class Task {
  state: TaskState = "running";
  pid: number | null = null;
  finishedNs: bigint | null = null;
  resultRef: string | null = null;
  error: RpcErrorObject | null = null;
  readonly startedNs = nowNs();
  readonly finished: Promise<void>;
  /** Resolves once bash exists (its pid is known) or the task ended without it. */
  readonly begun: Promise<void>;
  #resolve!: () => void;
  /** The timed waits on this task still waiting (K-TASK-4), woken once it is terminal. */
  #waiters = new Set<() => void>();
  #begin!: () => void;
  /** The SIGTERM → grace → SIGKILL sequence, once a cancel reached a live process group. */
  #stopping: Promise<void> | null = null;
  /** Whether bash had already exited by itself when the cancel came (its exit not yet seen). */
  #exitedFirst = false;
  /** Whether {@link pid} is the nsenter the run entered its sandbox through (BashChild.entered). */
  #entered = false;

  constructor(
    readonly n: number,
    readonly session: string,
    readonly principal: string,
    readonly cmd: string,
    readonly output: { stdout: TaskOutput; stderr: TaskOutput },
  ) {
    this.finished = new Promise((resolve) => (this.#resolve = resolve));
    this.begun = new Promise((resolve) => (this.#begin = resolve));
  }

  /** `task:N`. */
  get id(): string {
    return `task:${this.n}`;
  }

  /** Whether the task reached a terminal state. */
  get terminal(): boolean {
    return TERMINAL.has(this.state);
  }

  /** Whether clients may see the task: once it has its pid, or ended without one (K-TASK-1). */
  get visible(): boolean {
    return this.pid !== null || this.terminal;
  }

  /**
   * Whether the run counts as cancelled (K-TASK-1), asked when its bash's exit is seen: a cancel
   * was requested while bash still ran. One that came after bash had exited by itself, before
   * the kernel saw the exit (bash a zombie its parent had not reaped, or reaped by its sandbox's
   * launcher and not yet reported), does not: bash ended normally, its state changes count
   * (K-BASH-4).
   */
  get cancelledBeforeExit(): boolean {
    return this.state === "cancelling" && !this.#exitedFirst;
  }

  /**
   * Resolves once nothing of a cancel's groups is alive or they were SIGKILLed (at once when no
   * cancel reached it).
   */
  get stopped(): Promise<void> {
    return this.#stopping ?? Promise.resolve();
  }

  /** The wire record. */
  record(): TaskRecord {
    return {
      task: this.id,
      session: this.session,
      principal: this.principal,
      state: this.state,
      cmd: this.cmd,
      pid: this.pid,
      started_ns: this.startedNs,
      finished_ns: this.finishedNs,
      result_ref: this.resultRef,
      error: this.error,
    };
  }

  /**
   * Records bash's pid (its process-group id). A cancel or suspend that arrived while bash was
   * still being started takes effect now.
   */
  spawned(pid: number, entered = false): void {
    this.pid = pid;
    this.#entered = entered;
    this.#begin();
    if (this.state === "cancelling") this.terminate();
    else if (this.state === "suspended") this.pause(true);
  }

  /**
   * SIGSTOP (`suspend`) or SIGCONT to what {@link signal} reaches (K-TASK-6). An entered run's
   * nsenter mirrors its child: it stops itself once it sees the run stop and continues the run
   * when continued. Stopped with the group, it stopped itself again after the resume and stayed
   * so, and the run's end was never seen; so it is spared the SIGSTOP, and continued again
   * should it stop itself after the SIGCONT (it had not yet seen the stop).
   */
  pause(suspend: boolean): void {
    if (this.pid === null) return;
    if (!this.#entered) {
      this.signal(suspend ? "SIGSTOP" : "SIGCONT");
      return;
    }
    if (suspend) {
      signalGroupButLeader(this.pid, "SIGSTOP");
      for (const group of otherGroupsOfSession(this.pid)) signalGroupOnly(group, "SIGSTOP");
      return;
    }
    this.signal("SIGCONT");
    const leader = this.pid;
    for (const ms of LEADER_RECHECK_MS) {
      setTimeout(() => {
        if (this.state === "running" && procStat(leader)?.[0] === "T") {
          signalGroupOnly(leader, "SIGCONT");
        }
      }, ms);
    }
  }

  /**
   * Signals the whole process group, the groups job control (`set -m`) gave jobs of its session
   * and those of descendants that started sessions of their own: a suspended sandboxed task stops
   * writing (P-SBX-4). A group already gone is ignored.
   */
  signal(sig: Deno.Signal): boolean {
    return this.pid !== null && signalSession(this.pid, sig);
  }

  /**
   * Marks the task terminal and wakes every waiter. A task that ends while suspended (bash
   * exited by itself, a job it left holding its pipes, K-BASH-3) has its group continued: once
   * terminal it cannot be resumed (K-TASK-6), and that job would stay stopped for good.
   */
  settle(state: TaskState, resultRef: string | null, error: RpcErrorObject | null): void {
    if (this.state === "suspended") this.signal("SIGCONT");
    this.state = state;
    this.resultRef = resultRef;
    this.error = error;
    this.finishedNs = nowNs();
    this.#begin();
    this.#resolve();
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /**
   * Waits until the task is terminal or `ms` elapse; true when it timed out. A wait that times
   * out leaves nothing behind: a reaction on {@link finished} would stay until the task ends, and
   * a client polling in slices (the facade's 1 s, M-PROG-1) made ~1.3 KiB of them per slice.
   */
  waitFor(ms: number): Promise<boolean> {
    if (this.terminal) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve(true);
      }, ms);
      this.#waiters.add(wake);
    });
  }

  /**
   * SIGTERM now, SIGKILL after the grace period if any member remains (K-BASH-13). The grace runs
   * on even after bash itself has exited, so descendants that ignore SIGTERM are killed too.
   * Before bash exists this does nothing; {@link spawned} calls it again.
   */
  terminate(): void {
    if (this.pid === null || this.#stopping) return;
    this.#exitedFirst = processExited(this.pid);
    if (this.state === "suspended") this.signal("SIGCONT");
    // The groups this SIGTERM reaches beyond bash's own: a session a descendant started is
    // found only while that descendant's parent lives, and one that ignores SIGTERM is
    // orphaned once bash dies of it, yet must get the SIGKILL (probe67).
    const reached = otherGroupsOfSession(this.pid);
    if (this.#entered) {
      // nsenter passes on how the run ends: killed by the SIGTERM, it ended the task at once
      // with that signal, while bash ran its trap or, ignoring TERM, went on until the SIGKILL.
      signalGroupButLeader(this.pid, "SIGTERM");
      for (const group of reached) signalGroupOnly(group, "SIGTERM");
    } else {
      this.signal("SIGTERM");
    }
    this.#stopping = this.#killAfterGrace(this.pid, reached);
  }

  async #killAfterGrace(pgid: number, reached: number[]): Promise<void> {
    if (await sessionEndedWithin(pgid, KILL_GRACE_MS, reached)) return;
    this.signal("SIGKILL");
    // A group id is not given out again while the group has members: one still there after
    // the grace is the group signalled (unless it emptied and pids wrapped within 2 s).
    for (const group of reached) signalGroupOnly(group, "SIGKILL");
  }
}

/** Every task of the kernel, ids from one counter, scoped by session (K-TASK-2). */
export class TaskRegistry {
  #next = 1;
  #tasks = new Map<number, Task>();
  /** Each session's listed terminal tasks, oldest-finished first (K-TASK-2 keeps the newest 256). */
  #terminal = new Map<string, Set<Task>>();
  /** Tasks whose `timeout_ms` caller still waits within its budget, with how to wake it (K-EXEC-6). */
  #inBudget = new Map<Task, () => void>();
  /** Each session's tasks that ended within their budget and whose events are still held. */
  #hiddenEvents = new Map<string, Set<number>>();
  /** Synchronous execs: not listed, but stopped at shutdown like every other process group. */
  #unlisted = new Set<Task>();
  /** Set by {@link cancelAll}: no run starts after it. */
  #shut = false;

  constructor(private readonly bus: EventBus) {}

  /** Whether the session has a non-terminal task, listed or not (E-3 keeps such a session). */
  busy(session: string): boolean {
    for (const t of [...this.#tasks.values(), ...this.#unlisted]) {
      if (t.session === session && !t.terminal) return true;
    }
    return false;
  }

  /**
   * Fails once {@link cancelAll} has begun: a run registered after it would be stopped by
   * nothing, and outlive the kernel (G-SOCK-8).
   */
  ensureOpen(): void {
    if (this.#shut) throw new Error("the kernel is shutting down");
  }

  /** Fails with -32040 when the session already has 64 non-terminal tasks. */
  ensureCapacity(session: string): void {
    let live = 0;
    for (const t of this.#tasks.values()) if (t.session === session && !t.terminal) live++;
    if (live >= MAX_TASKS_PER_SESSION) throw quotaExceeded("tasks", MAX_TASKS_PER_SESSION);
  }

  /**
   * Registers a new running task. It stays invisible (no event, unknown to `task.get` and
   * `task.list`) until {@link spawned} gives it its pid, or it ends.
   */
  create(
    session: string,
    principal: string,
    cmd: string,
    output: { stdout: TaskOutput; stderr: TaskOutput },
  ): Task {
    const task = new Task(this.#next++, session, principal, cmd, output);
    this.#tasks.set(task.n, task);
    return task;
  }

  /** Records bash's pid and publishes the task's first event: from now on it is visible. */
  spawned(task: Task, pid: number, entered = false): void {
    task.spawned(pid, entered);
    this.publish(task);
  }

  /** Tracks a plain synchronous exec: no id, no events, but cancelled at shutdown. */
  createUnlisted(
    session: string,
    principal: string,
    cmd: string,
    output: { stdout: TaskOutput; stderr: TaskOutput },
  ): Task {
    const task = new Task(0, session, principal, cmd, output);
    this.#unlisted.add(task);
    task.finished.then(() => this.#unlisted.delete(task));
    return task;
  }

  /** Publishes the task's current state on `task.N` (§9.2). */
  publish(task: Task): void {
    if (task.n === 0) return;
    this.bus.publish(`task.${task.n}`, {
      task: task.id,
      state: task.state,
      result_ref: task.resultRef,
    }, { session: task.session });
  }

  /**
   * Ends a task and publishes the terminal event. A task that ends within its caller's wait
   * budget is forgotten at once (K-EXEC-6); otherwise the session keeps the 256 terminal tasks
   * that finished most recently (K-TASK-2).
   */
  finish(task: Task, state: TaskState, resultRef: string | null, error: RpcErrorObject | null) {
    task.settle(state, resultRef, error);
    if (task.n === 0) return;
    this.publish(task);
    const waiter = this.#inBudget.get(task);
    if (waiter) {
      this.#inBudget.delete(task);
      this.#tasks.delete(task.n);
      this.#keepEvents(task);
      waiter();
      return;
    }
    let done = this.#terminal.get(task.session);
    if (!done) this.#terminal.set(task.session, done = new Set());
    done.add(task);
    for (const old of done) {
      if (done.size <= MAX_TERMINAL_TASKS_KEPT) break;
      done.delete(old);
      this.#tasks.delete(old.n);
      this.bus.retire(`task.${old.n}`);
    }
  }

  /**
   * Forgets the tasks of a reclaimed session (E-3: a removed session keeps only its journal rows
   * and CAS blobs; none of its tasks is running) and lets go of their `task.N` events: kept,
   * each name ever used held 256 records, whose `result_ref` no longer named a value, and as
   * many rings, for the kernel's life.
   */
  forgetSession(session: string): void {
    for (const task of this.#terminal.get(session) ?? []) {
      this.#tasks.delete(task.n);
      this.bus.retire(`task.${task.n}`);
    }
    this.#terminal.delete(session);
    for (const n of this.#hiddenEvents.get(session) ?? []) this.bus.retire(`task.${n}`);
    this.#hiddenEvents.delete(session);
  }

  /**
   * Keeps the events of a task that ended within its caller's budget readable (K-EXEC-6) for as
   * long as a listed task's would be: for the newest 256 such tasks of the session.
   */
  #keepEvents(task: Task): void {
    let held = this.#hiddenEvents.get(task.session);
    if (!held) this.#hiddenEvents.set(task.session, held = new Set());
    held.add(task.n);
    for (const n of held) {
      if (held.size <= MAX_TERMINAL_TASKS_KEPT) break;
      held.delete(n);
      this.bus.retire(`task.${n}`);
    }
  }

  /**
   * Waits up to `timeoutMs` for a `timeout_ms` exec's task (K-EXEC-6); true when the budget
   * elapsed first. A task that finishes within the budget is never listed: its caller never
   * learned its id.
   */
  waitInBudget(task: Task, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#inBudget.delete(task);
        resolve(true);
      }, timeoutMs);
      this.#inBudget.set(task, () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
  }

  /** The session's task `id`; unknown or another session's → -32021 (K-TASK-8). */
  get(session: string, id: string): Task {
    const n = refNumber("task", id);
    const task = n === null ? undefined : this.#tasks.get(n);
    if (!task || task.session !== session || !task.visible) {
      throw new RpcError(ErrorCode.UNKNOWN_TASK, `unknown task: ${id}`, { task: id });
    }
    return task;
  }

  /** The session's tasks ascending by id (K-TASK-3). */
  list(session: string): Task[] {
    return [...this.#tasks.values()].filter((t) => t.session === session && t.visible);
  }

  /** Waits until the task is terminal or `timeoutMs` elapses; true when it timed out. */
  async wait(task: Task, timeoutMs: number | undefined): Promise<boolean> {
    if (task.terminal) return false;
    if (timeoutMs !== undefined) return await task.waitFor(timeoutMs);
    await task.finished;
    return false;
  }

  /** `task.cancel` (K-TASK-5). */
  cancel(task: Task): { task: string; cancel_requested: boolean; state: TaskState } {
    if (task.terminal) return { task: task.id, cancel_requested: false, state: task.state };
    if (task.state !== "cancelling") {
      task.terminate();
      task.state = "cancelling";
      this.publish(task);
    }
    return { task: task.id, cancel_requested: true, state: task.state };
  }

  /** `task.suspend` / `task.resume` (K-TASK-6). */
  pause(task: Task, suspend: boolean): TaskRecord {
    const target: TaskState = suspend ? "suspended" : "running";
    if (task.terminal || task.state === "cancelling") {
      throw new RpcError(
        ErrorCode.TASK_CONTROL_UNAVAILABLE,
        `task ${task.id} is ${task.state}`,
        { task: task.id, state: task.state },
      );
    }
    if (task.state !== target) {
      task.pause(suspend);
      task.state = target;
      this.publish(task);
    }
    return task.record();
  }

  /** Cancels every live task and waits for them to end and their groups to be gone (G-SOCK-8). */
  async cancelAll(): Promise<void> {
    this.#shut = true;
    const live = [...this.#tasks.values(), ...this.#unlisted].filter((t) => !t.terminal);
    for (const t of live) this.cancel(t);
    await Promise.all(live.map((t) => t.finished.then(() => t.stopped)));
  }
}
