/** The resident sandboxes of the kernel: one per session and confinement, while it is used. */
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { within } from "../../protocol/within.ts";
import type { SandboxNet } from "../net/destinations.ts";
import type { EndpointLease } from "../net/proxy.ts";
import { confinementKey, type Sandboxing } from "./command.ts";
import { compiledLauncher } from "./compiled_launcher.ts";
import type { SandboxHost } from "./probe.ts";
import { blockPlaceholders, directoryPlaceholdersToMake } from "./placeholders.ts";
import { guardProtection } from "./protection_guard.ts";
import { Resident } from "./resident.ts";
import { type SandboxView, writableIn } from "./view.ts";

/**
 * How long a resident whose last run or warm shell has exited stays up: long enough for the run
 * that discarded a warm shell to spawn cold in the same sandbox.
 */
const IDLE_GRACE_MS = 1000;

/**
 * Longest wait of a new sandbox for the runs going on that may write where it would make a
 * placeholder (P-SBX-6): long enough for a `git init` or the start of a `git clone`, which make
 * `.git/hooks` and `.git/config` right after `.git`.
 */
const PLACEHOLDER_WAIT_MS = 10_000;

/**
 * Starts of a resident at most for one {@link Residents.get}: a protected name that keeps coming
 * and going on the host may stop a few in a row.
 */
const STALE_TRIES = 5;

/** Where the proxy for a sandbox's network is reached (the kernel's `NetProxy`). */
export interface ProxyEndpoints {
  /** A hold on the host directory holding the Unix socket of the proxy for `net` in `session`. */
  endpoint(session: string, net: SandboxNet): EndpointLease;
}

interface Entry {
  session: string;
  sandboxing: Sandboxing;
  starting: Promise<Resident>;
  resident: Resident | null;
}

/**
 * One {@link Resident} per (session, confinement key), started on first use and killed once
 * nothing runs in it ({@link IDLE_GRACE_MS} later), when its session goes ({@link drop}) and at
 * shutdown ({@link closeAll}); one that died is forgotten and the next run starts another.
 * Sessions never share one: their runs' scratch files stay apart.
 */
export class Residents {
  #entries = new Map<string, Entry>();
  #stopping = new Set<Promise<void>>();
  /** Residents replaced while runs went on in them ({@link #retire}), with their entries. */
  #retiring = new Map<Resident, Entry>();
  /** Sandboxes that are no resident (a PTY's), counted as writers until they end ({@link writing}). */
  #others = new Set<{ view: SandboxView; ended: Promise<unknown> }>();
  #closed = false;
  /** The compiled launcher (`compiled_launcher.ts`), compiled when the first resident starts. */
  #launcher: Promise<string | null> | null = null;
  /** Stops a compile of the launcher at shutdown. */
  #compiling = new AbortController();

  constructor(
    private readonly host: SandboxHost,
    private readonly bash: string,
    /** Where each resident's scratch directory is made, and the compiled launcher kept. */
    private readonly parent: string,
    /** The proxy of sandboxes with a network, started on first need (P-NET-3). */
    private readonly proxy: ProxyEndpoints,
    /** Writes a diagnostic line to the kernel's log. */
    private readonly log: (line: string) => void,
    /** Whether runs are started by a launcher inside when it can ({@link Resident.start}). */
    private readonly launch = true,
  ) {}

  /**
   * The session's resident for `sandboxing`, once runs can enter it; started when missing. A start
   * that fails (bwrap binds by path: a protected name the host removed between the view's scan and
   * the bind stops it) is tried again with the sandboxing computed afresh, up to
   * {@link STALE_TRIES} starts in all; a refusal (-32010) is not.
   */
  async get(session: string, sandboxing: Sandboxing): Promise<Resident> {
    for (let tries = 1;; tries++) {
      try {
        return await this.#entry(session, sandboxing).starting;
      } catch (e) {
        // whether the view went stale cannot be told after the fact: the name may be back
        const again = e instanceof RpcError || tries >= STALE_TRIES
          ? null
          : sandboxing.afresh?.() ?? null;
        if (again === null) throw e;
        sandboxing = again;
      }
    }
  }

  /**
   * Stops every resident holding a placeholder at one of `lifted` (P-SBX-6) and resolves once
   * they are gone, so that a run of an approved plan writing there finds the name free (no new
   * placeholder is made there while its resident lives: {@link blockPlaceholders}).
   */
  #free(lifted: readonly string[]): Promise<unknown> {
    for (const [id, entry] of this.#entries) {
      const { paths } = entry.sandboxing.view.protection;
      if (paths.some((p) => p.absent && lifted.includes(p.path))) this.#stop(id);
    }
    for (const [resident, entry] of this.#retiring) {
      const { paths } = entry.sandboxing.view.protection;
      if (paths.some((p) => p.absent && lifted.includes(p.path))) this.#kill(resident);
    }
    return Promise.all(this.#stopping);
  }

  /** Whether the session has a resident for `sandboxing`, ready or starting (none is started). */
  has(session: string, sandboxing: Sandboxing): boolean {
    return this.#entries.has(JSON.stringify([session, confinementKey(sandboxing)]));
  }

  /** The session's resident for `sandboxing` when it is ready, else null (it is starting). */
  ready(session: string, sandboxing: Sandboxing): Resident | null {
    return this.#entry(session, sandboxing).resident;
  }

  /** Kills the session's residents and everything running in them. */
  drop(session: string): void {
    for (const [id, entry] of this.#entries) if (entry.session === session) this.#stop(id);
    for (const [resident, of] of this.#retiring) if (of.session === session) this.#kill(resident);
  }

  /**
   * Kills every resident (the next run starts another) and forgets the compiled launcher: their
   * directories and the launcher were in the state directory's `tmp/`, which was removed.
   */
  restartAll(): void {
    this.#launcher = null;
    for (const id of [...this.#entries.keys()]) this.#stop(id);
  }

  /** Kills every resident and waits until they are gone; no new ones start. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    this.#compiling.abort();
    for (const id of [...this.#entries.keys()]) this.#stop(id);
    for (const resident of [...this.#retiring.keys()]) this.#kill(resident);
    await Promise.all(this.#stopping);
    // a compile whose resident's start failed is awaited by nothing else
    await this.#launcher;
  }

  /**
   * Replaces `resident` (of `entry`, under `id`), whose network relay an agent's process ended
   * (P-NET-1): the next run gets a fresh sandbox, while the runs going on in this one (a
   * background task) are left to end, without a network; it is stopped once none is left.
   */
  #retire(id: string, entry: Entry, resident: Resident): void {
    this.log(
      `a sandbox of session ${entry.session} lost its network relay: the next run starts in a ` +
        "fresh one (P-NET-1)",
    );
    this.#entries.delete(id);
    this.#retiring.set(resident, entry);
    resident.calm().then(() => this.#kill(resident));
  }

  /** Kills a retiring resident (once), counted among those stopping. */
  #kill(resident: Resident): void {
    if (!this.#retiring.delete(resident)) return;
    const done = resident.kill().finally(() => this.#stopping.delete(done));
    this.#stopping.add(done);
  }

  #entry(session: string, sandboxing: Sandboxing): Entry {
    if (this.#closed) throw new Error("the kernel is shutting down");
    const host = this.host;
    if (host.tier !== "B") throw new Error("this host has no sandbox");
    const id = JSON.stringify([session, confinementKey(sandboxing)]);
    const known = this.#entries.get(id);
    const running = known?.resident ?? null;
    // one that lost a protection goes; a new sandbox binds the name again (placeholder made afresh)
    if (running !== null && !running.protectionIntact) this.#stopBroken(id, known!, running);
    else if (running !== null && !running.netIntact) this.#retire(id, known!, running);
    else if (known !== undefined) return known;
    const onIdle = () =>
      setTimeout(() => {
        if (this.#entries.get(id) === entry && entry.resident?.idle) this.#stop(id);
      }, IDLE_GRACE_MS);
    const lease = sandboxing.net === null ? null : this.proxy.endpoint(session, sandboxing.net);
    const proxy = lease?.dir ?? null;
    const lifted = sandboxing.view.protection.lifted ?? [];
    this.#launcher ??= host.cc === null || !this.launch
      ? Promise.resolve(null)
      : compiledLauncher(this.parent, host.cc, this.#compiling.signal);
    const launcher = this.#launcher;
    const start = (): Promise<Resident> =>
      this.#writers(sandboxing).waits.length === 0
        ? launcher.then((compiled) => {
          // a compile the shutdown stopped: no sandbox is started for it
          if (this.#closed) throw new Error("the kernel is shutting down");
          return Resident.start(
            { ...host, launcher: compiled },
            this.bash,
            sandboxing,
            this.parent,
            onIdle,
            this.launch,
            proxy,
          );
        })
        : this.afterWriters(session, sandboxing).then(start);
    let starting: Promise<Resident>;
    if (lifted.length === 0) starting = start();
    else {
      const unblock = blockPlaceholders(lifted);
      starting = this.#free(lifted).then(start);
      starting.then((resident) => resident.ended.finally(unblock), unblock);
    }
    const entry: Entry = { session, sandboxing, starting, resident: null };
    const forget = () => {
      if (this.#entries.get(id) === entry) this.#entries.delete(id);
    };
    starting.then((resident) => {
      entry.resident = resident;
      resident.ended.then(forget); // a sandbox that died is started afresh on next use
      guardProtection(
        () => resident.busy,
        () => resident.protectionIntact,
        resident.ended,
        () => this.#stopBroken(id, entry, resident),
      );
    }, forget);
    // its proxy socket is held while it lives (a plan run's own grants end with it)
    starting.then((resident) => resident.ended, () => {}).then(() => lease?.release());
    this.#entries.set(id, entry);
    return entry;
  }

  /**
   * Stops `resident` (of `entry`, under `id`) and its runs: the host removed or replaced one of
   * its protections, so the name is free inside (P-SBX-6).
   */
  #stopBroken(id: string, entry: Entry, resident: Resident): void {
    this.log(
      `a protected path of a sandbox of session ${entry.session} was removed or replaced on ` +
        "the host: that sandbox and its runs are stopped (P-SBX-6)",
    );
    if (this.#entries.get(id) === entry) this.#stop(id);
    else resident.kill();
  }

  /**
   * Counts a sandbox that is no resident (a PTY's) as one with a run going on ({@link #writers})
   * until `ended` settles: its program may write where a new sandbox would make a placeholder, as a
   * resident's run may. Not counted, an agent's program in its PTY swapped a fresh placeholder (or
   * its directory) for a link, and the kernel's chmod and bwrap's mkdir of a bind's destination
   * followed it to files and directories of the human's (P-SBX-3).
   */
  writing(view: SandboxView, ended: Promise<unknown>): void {
    const entry = { view, ended };
    this.#others.add(entry);
    ended.finally(() => this.#others.delete(entry));
  }

  /**
   * The sandboxes, of any session, with a run going on that may write where `sandboxing` would
   * make a directory placeholder now (each as what settles when it may no longer: a resident's
   * calm, a PTY's end), and those paths: a placeholder there would land under the run (its `git
   * init` found a directory at `.git/config`), which may swap it for a link.
   */
  #writers(sandboxing: Sandboxing): { paths: string[]; waits: Promise<unknown>[] } {
    const paths = directoryPlaceholdersToMake(sandboxing.view.protection);
    const hit = new Set<string>();
    const waits: Promise<unknown>[] = [];
    if (paths.length === 0) return { paths: [], waits };
    // a retiring one's runs go on too (#retire)
    for (
      const { resident, sandboxing: other } of [
        ...this.#entries.values(),
        ...this.#retiring.values(),
      ]
    ) {
      if (resident === null || !resident.busy) continue;
      const writes = paths.filter((path) => writableIn(other.view, path));
      if (writes.length > 0) waits.push(resident.calm());
      for (const path of writes) hit.add(path);
    }
    for (const { view, ended } of this.#others) {
      const writes = paths.filter((path) => writableIn(view, path));
      if (writes.length > 0) waits.push(ended);
      for (const path of writes) hit.add(path);
    }
    return { paths: [...hit], waits };
  }

  /**
   * Resolves once no run going on in a resident may write where `sandboxing` would make a
   * placeholder ({@link #writers}), at once when none may; refuses with -32010 `sandbox_busy`
   * when some still may after {@link PLACEHOLDER_WAIT_MS}. `session` is the one asking, for the log.
   */
  async afterWriters(session: string, sandboxing: Sandboxing): Promise<void> {
    const deadline = performance.now() + PLACEHOLDER_WAIT_MS;
    let told = false;
    for (let w = this.#writers(sandboxing); w.waits.length > 0; w = this.#writers(sandboxing)) {
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new RpcError(
          ErrorCode.LEASH_DENIED,
          `a run still going may write ${w.paths.join(", ")}, which this sandbox holds ` +
            `read-only (P-SBX-6): run it again once that run has ended`,
          { reason: "sandbox_busy", paths: w.paths.slice(0, 100) },
        );
      }
      if (!told) {
        this.log(`a sandbox of session ${session} waits for runs that may write ${w.paths}`);
      }
      told = true;
      await within(Promise.race(w.waits), left);
    }
  }

  /** Forgets a resident and kills it, once started when it is still starting. */
  #stop(id: string): void {
    const entry = this.#entries.get(id)!;
    this.#entries.delete(id);
    const done = entry.starting.then((resident) => resident.kill(), () => {})
      .finally(() => this.#stopping.delete(done));
    this.#stopping.add(done);
  }
}
