/**
 * A resident sandbox: one long-lived bubblewrap whose namespaces (mount, PID, IPC, network) the
 * runs of one confinement enter with nsenter(1), so a run pays an exec, not a namespace setup.
 */
import { basename } from "node:path";
import { within } from "../../protocol/within.ts";
import type { BashChild } from "../bash/bash_child.ts";
import { groupExists, newSession, processIds, spawnGroupLeader } from "../bash/group_leader.ts";
import { isFile } from "../bash/regular_file.ts";
import { ScratchPool } from "../bash/scratch_pool.ts";
import { type ShellState, spawnDir } from "../bash/shell_state.ts";
import { confinementKey, sandboxCommand, type Sandboxing, SCRATCH_MOUNT } from "./command.ts";
import { hostEnv, insideArgv } from "./host_env.ts";
import { Launcher, lines } from "./launcher.ts";
import { launcherArgs } from "./launcher_script.ts";
import { outerUserns } from "./outer_userns.ts";
import { relayOf, relayRuns } from "./net_relay.ts";
import { limitCommand } from "./process_limit.ts";
import { filteredCommand } from "./unix_socket_filter.ts";
import { holdPlaceholders, releaseAfter } from "./placeholders.ts";
import {
  checkProtection,
  childrenOf,
  ProtectionWatch,
  sandboxInit,
  untilEnded,
} from "./protected_mounts.ts";
import { lowerFloorOf } from "./port_floor.ts";
import { madeIn } from "../net/made_in.ts";
import { proxyEnv } from "../net/proxy_env.ts";

/** The util-linux tools that enter a resident sandbox, and the launcher that starts its runs. */
export interface EnterTools {
  nsenter: string;
  setpriv: string;
  /** The host path of the launcher compiled in C (`compiled_launcher.ts`), or null: perl's. */
  launcher: string | null;
}

/** The name of the compiled launcher in a resident's directory (shown at {@link SCRATCH_MOUNT}). */
const LAUNCHER_FILE = "launcher";

/** The perl that runs the launcher (perl-base is Essential on Debian; /usr is in every view). */
const PERL = "/usr/bin/perl";

/** How often, and how many times at most, an ended run's group is looked at until it is gone. */
const SWEEP_POLL_MS = 50;
/**
 * Longest wait of a spawn for the launcher's next spare: its fork takes a few ms on a loaded host,
 * while entering through nsenter costs three execs on the host, which load it further.
 */
const SPARE_WAIT_MS = 1000;
const SWEEP_TRIES = 40;

/** The namespace of `kind` that `pid` is in (a /proc/PID/ns link text). */
function namespaceOf(pid: number | "self", kind: string): string {
  return Deno.readLinkSync(`/proc/${pid}/ns/${kind}`);
}

/**
 * One bwrap holding a view open: its command (a bash waiting on a pipe the kernel holds) exists
 * only once every mount is in place, so the namespaces are complete when it is ready. It dies
 * with the kernel (`--die-with-parent`) or when {@link kill}ed; its PID namespace takes every
 * process that entered it along (P-SBX-4).
 */
export class Resident {
  /**
   * The runs and warm shells in it that still live, by their nsenter pid, which names their
   * process group and session: whether each may have started processes (a warm shell waiting
   * for its source has not).
   */
  #live = new Map<number, boolean>();
  /**
   * Spawns waiting for the launcher's next spare ({@link untilSpare}): they keep it from being
   * idle, as the runs they start will.
   */
  #waiting = 0;
  /** Waiters of {@link calm}, called once no run goes on. */
  #calmed: (() => void)[] = [];
  /** Ended runs whose leftovers are being swept ({@link #sweepAfter}). */
  #ending = new Set<number>();
  /** The host pid of the command the sandbox's init runs (the launcher, or a waiting bash): spared. */
  readonly #shell: number;
  /** The host pid of its network relay (`net_relay.ts`), or null: it has no proxy. */
  readonly #relay: number | null;
  #killed = false;
  /** Whether bwrap has exited: its init's pid may then name another process (pids wrap around). */
  #exited = false;

  private constructor(
    private readonly child: Deno.ChildProcess,
    /** The host directory bound at {@link SCRATCH_MOUNT}. */
    private readonly dir: string,
    /** Scratch directories of its runs, inside {@link dir}. */
    readonly pool: ScratchPool,
    /** nsenter into the namespaces of the sandbox's init (its root, the working directory next). */
    private readonly enter: readonly string[],
    /**
     * nsenter into the inner user namespace where bwrap made two (`outer_userns.ts`); setpriv:
     * no new privileges, and no capabilities kept (P-SBX-4 as bwrap runs it); then prlimit, with
     * the sandbox's process limit.
     */
    private readonly confine: readonly string[],
    /** The {@link confinementKey} of its sandbox. */
    readonly key: string,
    /**
     * Called when the last run or warm shell in it has exited, or the last spawn waiting for a
     * spare stopped waiting, with none of either left.
     */
    private readonly onIdle: () => void,
    /** The host pid of the sandbox's init (bwrap's child, pid 1 inside). */
    private readonly init: number,
    /** The launcher that starts its runs, or null: they enter with {@link command}. */
    private readonly launcher: Launcher | null,
    /**
     * The proxy environment (P-NET-1) a run entering with {@link command} gets on top of the
     * session's: the launcher hands it to the runs it starts itself.
     */
    private readonly proxyEnv: readonly [string, string][],
    /** The pins and protected paths its sandbox was started with, watched (P-SBX-6). */
    private readonly protection: ProtectionWatch,
  ) {
    this.#shell = childrenOf(init)[0];
    this.#relay = proxyEnv.length === 0 ? null : relayOf(this.#shell);
    child.status.finally(() => {
      this.#exited = true;
      protection.close();
      // its directory goes with it, also when it died on its own (an agent's `kill -KILL -1`
      // ends its launcher): nothing inside is left to use it, and a new one is started afresh
      this.#removeDir();
    });
  }

  /**
   * Starts a resident for `sandboxing` over a fresh directory below `parent`; resolves once
   * runs can enter it, or rejects (its processes killed) when bwrap fails. Its command is the
   * launcher ({@link Launcher}) when `launch`: the compiled one of `tools` when there is one and
   * it starts, else perl's when perl is there and starts; else a bash that only waits: runs then
   * enter with nsenter and setpriv ({@link command}). `proxy` is the
   * directory of the proxy's socket for `sandboxing.net`: the launcher starts behind its
   * forwarder and hands the proxy environment to every run (a waiting bash has no proxy).
   */
  static async start(
    tools: EnterTools,
    bash: string,
    sandboxing: Sandboxing,
    parent: string,
    onIdle: () => void,
    launch = true,
    proxy: string | null = null,
  ): Promise<Resident> {
    const dir = madeIn(parent, `sandbox-${Deno.pid}-`, "the sandbox's directory");
    const pool = new ScratchPool(dir, true);
    const open = (argv: string[], launcher: boolean, proxy: string | null) =>
      Resident.#open(tools, argv, launcher, { ...sandboxing, proxy }, dir, pool, onIdle);
    try {
      const launchers: string[][] = [];
      if (launch && tools.launcher !== null) {
        // another name of the kernel's one, read-only inside: the kernel's directory is never
        // shown (P-SBX-3), and both lie in it; a copy where the file system takes no hard link
        try {
          Deno.linkSync(tools.launcher, `${dir}/${LAUNCHER_FILE}`);
        } catch {
          Deno.copyFileSync(tools.launcher, `${dir}/${LAUNCHER_FILE}`);
        }
        launchers.push([`${SCRATCH_MOUNT}/${LAUNCHER_FILE}`]);
      }
      if (launch && isFile(PERL)) launchers.push([PERL, ...launcherArgs()]);
      for (const argv of launchers) {
        try {
          return await open(argv, true, proxy);
        } catch {
          // this launcher did not start: the next, or runs enter the other way
        }
      }
      return await open(
        [bash, "--noprofile", "--norc", "-c", "builtin echo ready; builtin read -r"],
        false,
        null,
      );
    } catch (e) {
      Deno.removeSync(dir, { recursive: true });
      throw e;
    }
  }

  /**
   * Runs `argv` in bwrap and waits for its first line: a launcher's first spare, or the waiting
   * bash's `ready`.
   */
  static async #open(
    tools: EnterTools,
    argv: string[],
    launcher: boolean,
    sandboxing: Sandboxing & { proxy: string | null },
    dir: string,
    pool: ScratchPool,
    onIdle: () => void,
  ): Promise<Resident> {
    // a session of its own: nothing inside has the kernel's controlling terminal, which a process
    // of the agent's that attached to the launcher (same uid) would write to and type into
    const session = newSession(sandboxCommand({ ...sandboxing, cwd: "/", scratch: dir }, argv));
    const { protection } = sandboxing.view;
    const release = holdPlaceholders(protection);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(session.cmd, {
        ...session,
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
    } catch (e) {
      release();
      throw e;
    }
    // a forwarded or net_listen port below 1024 needs the namespace's floor lowered (P-NET-1)
    const floor = lowerFloorOf(child.pid, sandboxing.portFloor, tools.nsenter);
    let init: number | null = null;
    // its placeholders go once nothing of the sandbox is left to bind them
    releaseAfter(child.status.then(() => init === null ? undefined : untilEnded(init)), release);
    let driver: Launcher | null = null;
    let watch: ProtectionWatch | null = null;
    try {
      // The first run's scratch directory is made while the sandbox starts, not once it has
      // (its directory and state FIFO, and the kernel's first mkfifo loads that C library call:
      // 1-5 ms on the path of an autostarted kernel's first exec, issue 33). One that cannot be
      // made now is left to the run, which meets the failure itself.
      try {
        pool.release(pool.acquire());
      } catch {
        // the run's own acquire tells
      }
      const reports = lines(child.stdout);
      const first = await reports.next();
      if (first.done) throw new Error("bwrap exited before its sandbox was ready");
      init = sandboxInit(child.pid);
      watch = new ProtectionWatch(init, protection);
      checkProtection(init, protection);
      await floor; // before its first run
      if (launcher) {
        if (!first.value.startsWith("spare ")) throw new Error("the launcher did not start");
        driver = new Launcher(childrenOf(init)[0], child.stdin, first.value, reports);
      } else {
        reports.return(undefined).catch(() => {});
      }
      const enter = [tools.nsenter, "-t", String(init), "-m", "-i", "-p", "-n"];
      const ownUserns = namespaceOf(init, "user") === namespaceOf("self", "user");
      // In the kernel's own user namespace (a root kernel) the entered run would keep the
      // kernel's capabilities: they go, as bwrap's --cap-drop ALL takes them. In bwrap's user
      // namespace an exec as the (non-root) user keeps none.
      const outer = ownUserns ? null : outerUserns(init);
      // bwrap's two nested user namespaces: the outer one first, the inner one (init's, pid 1
      // inside) from inside
      const inner = outer === null
        ? []
        : [tools.nsenter, "-t", "1", "-U", "--preserve-credentials", "--"];
      if (outer !== null) {
        child.status.finally(outer.close);
        enter.push(`--user=${outer.path}`, "--preserve-credentials");
      } else if (!ownUserns) {
        enter.push("-U", "--preserve-credentials");
      }
      enter.push("-r");
      const drop = ownUserns ? ["--bounding-set", "-all", "--inh-caps", "-all"] : [];
      // the run gets the sandbox's process limit, as what bwrap started did
      const limit = limitCommand(sandboxing.prlimit);
      const confine = [...inner, tools.setpriv, "--no-new-privs", ...drop, "--", ...limit];
      const key = confinementKey(sandboxing);
      const netEnv = sandboxing.net === null || sandboxing.proxy === null
        ? []
        : proxyEnv(sandboxing.net.port);
      return new Resident(
        child,
        dir,
        pool,
        enter,
        confine,
        key,
        onIdle,
        init,
        driver,
        netEnv,
        watch,
      );
    } catch (e) {
      watch?.close();
      await stop(child, driver);
      throw e;
    }
  }

  /**
   * Whether every protection it was started with is still a mount point in it. One the host
   * removed or renamed (a placeholder deleted, `git clean -fdx`, `rm -rf .git`) is detached from
   * every other mount namespace by Linux, and the name is then free inside (P-SBX-6).
   */
  get protectionIntact(): boolean {
    return this.protection.intact;
  }

  /**
   * Whether its network relay, when it has one, still runs: a run in a sandbox whose relay an
   * agent's process killed would reach neither the proxy nor a forwarded port (P-NET-1).
   */
  get netIntact(): boolean {
    return this.#relay === null || relayRuns(this.#relay);
  }

  /** Whether it was killed or its bwrap has exited: nothing can enter it any more. */
  get stopped(): boolean {
    return this.#killed || this.#exited;
  }

  /** Resolves when bwrap has exited (killed, or its sandbox died): nothing can enter it then. */
  get ended(): Promise<unknown> {
    return this.child.status;
  }

  /**
   * The argv that runs `argv` inside, in the host directory `cwd` (visible in the view), under the
   * sandbox's socket filter (nsenter enters no filter; the launcher's runs inherit it), installed
   * on the host before nsenter: a process of the entering chain is in the sandbox's PID namespace
   * before it execs `argv`, where an agent's process could ptrace it before a filter installed
   * inside would be. Its top process is nsenter (after perl's exec), the process group leader
   * when spawned as one.
   */
  command(cwd: string, argv: readonly string[]): string[] {
    const wd = `--wdns=${Deno.realPathSync(cwd)}`;
    return filteredCommand([...this.enter, wd, "--", ...this.confine, "--", ...argv]);
  }

  /**
   * Starts `argv` inside as a group leader in `state`'s cwd and exactly its environment (K-BASH-1),
   * its scratch directory `dir` from {@link pool}: by the launcher when it has a spare waiting,
   * else through {@link command}. The child's pid is its host pid either way (P-SBX-4).
   */
  spawn(state: ShellState, argv: readonly string[], dir: string): BashChild {
    // nsenter would enter whatever process now has its init's pid (pids wrap around)
    if (this.stopped) throw new Error("its sandbox has stopped");
    const cwd = spawnDir(state);
    const launched = this.launcher?.spawn(
      Deno.realPathSync(cwd),
      argv,
      state.env,
      dir,
      this.inside(dir),
    );
    if (launched !== null && launched !== undefined) return launched;
    // nsenter, setpriv (and setsid) run on the host: names that would load code there are set
    // only inside
    const { host, inside } = hostEnv([...state.env, ...this.proxyEnv]);
    const child = spawnGroupLeader(this.command(cwd, insideArgv(inside, argv)), {
      ...state,
      env: host,
    });
    return Object.assign(child, { entered: true });
  }

  /**
   * Null when a spawn now starts through its launcher's waiting spare, or cannot (no launcher, or
   * it is gone); else a promise that resolves once the spare the launcher is forking waits, or
   * after {@link SPARE_WAIT_MS} (a spawn then enters through nsenter). Until then it is not
   * {@link idle}: the caller spawns at once after, before any timer (its idle stop) can fire.
   */
  untilSpare(): Promise<void> | null {
    const spare = this.launcher?.untilSpare() ?? null;
    if (spare === null) return null;
    this.#waiting++;
    return within(spare, SPARE_WAIT_MS).then(() => {
      this.#waiting--;
      // a waiter that spawns nothing after all leaves it idle: its stop is counted from now
      if (this.idle) this.onIdle();
    });
  }

  /** Whether its runs are started by a launcher inside (else they enter with {@link command}). */
  get launches(): boolean {
    return this.launcher !== null;
  }

  /** Where scratch directory `dir` of its {@link pool} appears inside. */
  inside(dir: string): string {
    return `${SCRATCH_MOUNT}/${basename(dir)}`;
  }

  /**
   * Counts `child` (spawned with {@link command} as a group leader) as a user until it exits;
   * then what it left behind is swept ({@link #sweep}). A warm shell is held `waiting` until
   * {@link running}.
   */
  hold(child: BashChild, waiting = false): void {
    const run = child.pid;
    this.#live.set(run, !waiting);
    child.status.finally(() => {
      this.#live.delete(run);
      this.#ending.add(run);
      this.#sweepAfter(run, SWEEP_TRIES);
      if (!this.busy) { for (const resolve of this.#calmed.splice(0)) resolve(); }
      if (this.idle) this.onIdle();
    });
  }

  /** Marks the held warm shell `pid` as running a source from now on. */
  running(pid: number): void {
    if (this.#live.has(pid)) this.#live.set(pid, true);
  }

  /** Whether a run goes on in it (a warm shell waiting for its source is none). */
  get busy(): boolean {
    return [...this.#live.values()].some((running) => running);
  }

  /** Resolves once no run goes on in it any more ({@link busy}), or its bwrap has exited. */
  calm(): Promise<void> {
    if (!this.busy || this.#exited) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#calmed.push(resolve);
    this.child.status.finally(resolve);
    return promise;
  }

  /** Whether nothing it ran (a run or a warm shell) still lives, and no spawn waits for a spare. */
  get idle(): boolean {
    return this.#live.size === 0 && this.#waiting === 0;
  }

  /**
   * Sweeps now and, while the ended run's group still has members (dying: their orphans are not
   * yet init's) or the sweep killed something (whose orphans may follow), again every
   * {@link SWEEP_POLL_MS}, at most `tries` more times.
   */
  #sweepAfter(run: number, tries: number): void {
    const dying = groupExists(run);
    const killed = this.#sweep();
    if ((dying || killed) && tries > 0) {
      setTimeout(() => this.#sweepAfter(run, tries - 1), SWEEP_POLL_MS);
    } else {
      this.#ending.delete(run);
    }
  }

  /**
   * Kills what ended runs left in the sandbox, as a sandbox of their own would have died with
   * them (P-SBX-4), and nothing of a run still going. A process whose parent is gone belongs to
   * the sandbox's init; its session tells whose it is, since every run leads its own session
   * (a double-forked child keeps it): a live run's is spared, an ended run's killed with its
   * group. One in a session started inside (`setsid`) cannot be told apart: it is killed only
   * when no live run can have started it (none but warm shells waiting). True when it killed.
   */
  #sweep(): boolean {
    let killed = false;
    let busy: boolean | undefined;
    if (this.#exited) return false; // every process inside died with its PID namespace
    for (const pid of childrenOf(this.init)) {
      if (pid === this.#shell) continue;
      const ids = processIds(pid);
      if (ids === null || this.#live.has(ids.session)) continue;
      if (!this.#ending.has(ids.session)) {
        busy ??= [...this.#live.values()].some((running) => running);
        if (busy) continue;
      }
      try {
        Deno.kill(-ids.group, "SIGKILL");
        killed = true;
      } catch {
        // gone meanwhile
      }
    }
    return killed;
  }

  /** Kills bwrap (its PID namespace and everything in it go along) and removes its directory. */
  async kill(): Promise<void> {
    if (this.#killed) return;
    this.#killed = true;
    await stop(this.child, this.launcher);
    this.#removeDir();
  }

  /** Removes its directory and its runs' scratch directories in it. */
  #removeDir(): void {
    this.pool.clear();
    try {
      Deno.removeSync(this.dir, { recursive: true });
    } catch {
      // already gone
    }
  }
}

/** Kills a resident's bwrap and waits for it. */
async function stop(child: Deno.ChildProcess, launcher: Launcher | null): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch {
    // already exited
  }
  // a launcher holds bwrap's stdin and reads its stdout until it ends
  const pipes = launcher === null
    ? [child.stdin.close(), child.stdout.cancel()]
    : [launcher.close()];
  await Promise.allSettled([child.status, ...pipes]);
}
