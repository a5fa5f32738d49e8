/**
 * A resident sandbox: one long-lived bubblewrap whose namespaces (mount, PID, IPC, network) the
 * runs of one confinement enter with nsenter(1), so a run pays an exec, not a namespace setup.
 */
import { basename } from "node:path";
import { groupExists } from "../bash/group_leader.ts";
import { ScratchPool } from "../bash/scratch_pool.ts";
import { confinementKey, sandboxCommand, type Sandboxing, SCRATCH_MOUNT } from "./command.ts";

/** The util-linux tools that enter a resident sandbox. */
export interface EnterTools {
  nsenter: string;
  setpriv: string;
}

/** How often, and how many times at most, an ended run's group is looked at until it is gone. */
const SWEEP_POLL_MS = 50;
const SWEEP_TRIES = 40;

/** The process group of `pid`, or null once it is gone. */
function processGroupOf(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return null;
  }
}

/** The live children of `pid`. */
function childrenOf(pid: number): number[] {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim();
    return text === "" ? [] : text.split(" ").map(Number);
  } catch {
    return [];
  }
}

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
  /** Scratch directories of its runs, inside the directory bound at {@link SCRATCH_MOUNT}. */
  readonly pool: ScratchPool;
  /** Process groups of the runs and warm shells in it that still live (their nsenter pids). */
  #live = new Set<number>();
  /** Groups never swept: the kernel's own, which bwrap, its init and the waiting bash share. */
  readonly #spared: ReadonlySet<number | null>;
  #killed = false;

  private constructor(
    private readonly child: Deno.ChildProcess,
    /** The host directory bound at {@link SCRATCH_MOUNT}. */
    private readonly dir: string,
    /** nsenter into the namespaces of the sandbox's init (its root, the working directory next). */
    private readonly enter: readonly string[],
    /** setpriv: no new privileges, and no capabilities kept (P-SBX-4 as bwrap runs it). */
    private readonly confine: readonly string[],
    /** The {@link confinementKey} of its sandbox. */
    readonly key: string,
    /** Called once when the last run or warm shell in it has exited. */
    private readonly onIdle: () => void,
    /** The host pid of the sandbox's init (bwrap's child, pid 1 inside). */
    private readonly init: number,
  ) {
    this.pool = new ScratchPool(dir);
    this.#spared = new Set([processGroupOf(Deno.pid), processGroupOf(init)]);
  }

  /**
   * Starts a resident for `sandboxing` over a fresh directory below `parent`; resolves once
   * runs can enter it, or rejects (its processes killed) when bwrap fails.
   */
  static async start(
    tools: EnterTools,
    bash: string,
    sandboxing: Sandboxing,
    parent: string,
    onIdle: () => void,
  ): Promise<Resident> {
    const key = confinementKey(sandboxing);
    const dir = Deno.makeTempDirSync({ dir: parent, prefix: "sandbox-" });
    const [cmd, ...args] = sandboxCommand({ ...sandboxing, cwd: "/", scratch: dir }, [
      bash,
      "--noprofile",
      "--norc",
      "-c",
      "builtin echo; builtin read -r",
    ]);
    const child = new Deno.Command(cmd, {
      args,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const reader = child.stdout.getReader();
      const { done } = await reader.read();
      reader.cancel().catch(() => {});
      if (done) throw new Error("bwrap exited before its sandbox was ready");
      const init = Number(
        Deno.readTextFileSync(`/proc/${child.pid}/task/${child.pid}/children`)
          .split(" ")[0],
      );
      if (!(init > 0)) throw new Error("no sandbox init under bwrap");
      const enter = [tools.nsenter, "-t", String(init), "-m", "-i", "-p"];
      if (!sandboxing.view.net) enter.push("-n");
      const ownUserns = namespaceOf(init, "user") === namespaceOf("self", "user");
      // In the kernel's own user namespace (a root kernel) the entered run would keep the
      // kernel's capabilities: they go, as bwrap's --cap-drop ALL takes them. In bwrap's user
      // namespace an exec as the (non-root) user keeps none.
      if (!ownUserns) enter.push("-U", "--preserve-credentials");
      enter.push("-r");
      const drop = ownUserns ? ["--bounding-set", "-all", "--inh-caps", "-all"] : [];
      const confine = [tools.setpriv, "--no-new-privs", ...drop];
      return new Resident(child, dir, enter, confine, key, onIdle, init);
    } catch (e) {
      await stop(child);
      Deno.removeSync(dir, { recursive: true });
      throw e;
    }
  }

  /** Resolves when bwrap has exited (killed, or its sandbox died): nothing can enter it then. */
  get ended(): Promise<unknown> {
    return this.child.status;
  }

  /**
   * The argv that runs `argv` inside, in the host directory `cwd` (visible in the view): its top
   * process is nsenter, the process group leader when spawned as one.
   */
  command(cwd: string, argv: readonly string[]): string[] {
    const wd = `--wdns=${Deno.realPathSync(cwd)}`;
    return [...this.enter, wd, "--", ...this.confine, "--", ...argv];
  }

  /** Where scratch directory `dir` of its {@link pool} appears inside. */
  inside(dir: string): string {
    return `${SCRATCH_MOUNT}/${basename(dir)}`;
  }

  /**
   * Counts `child` (spawned with {@link command} as a group leader) as a user until it exits;
   * then what it left behind is swept ({@link sweep}).
   */
  hold(child: Deno.ChildProcess): void {
    this.#live.add(child.pid);
    child.status.finally(() => {
      this.#live.delete(child.pid);
      this.#sweepAfter(child.pid, SWEEP_TRIES);
      if (this.#live.size === 0) this.onIdle();
    });
  }

  /** Whether nothing it ran (a run or a warm shell) still lives. */
  get idle(): boolean {
    return this.#live.size === 0;
  }

  /**
   * Sweeps now and, while the ended run's group `pgid` still has members (dying: their orphans
   * are not yet init's), again every {@link SWEEP_POLL_MS} until it is gone.
   */
  #sweepAfter(pgid: number, tries: number): void {
    const gone = !groupExists(pgid);
    this.#sweep();
    if (!gone && tries > 0) setTimeout(() => this.#sweepAfter(pgid, tries - 1), SWEEP_POLL_MS);
  }

  /**
   * Kills what runs that have ended left in the sandbox, as a sandbox of their own would have
   * died with them (P-SBX-4): a process whose parent is gone belongs to the sandbox's init, so
   * every group among init's children that is no live run's (a background job, a process that
   * started its own session) is killed.
   */
  #sweep(): void {
    for (const pid of childrenOf(this.init)) {
      const group = processGroupOf(pid);
      if (group === null || this.#spared.has(group) || this.#live.has(group)) continue;
      try {
        Deno.kill(-group, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  }

  /** Kills bwrap (its PID namespace and everything in it go along) and removes its directory. */
  async kill(): Promise<void> {
    if (this.#killed) return;
    this.#killed = true;
    await stop(this.child);
    this.pool.clear();
    try {
      Deno.removeSync(this.dir, { recursive: true });
    } catch {
      // already gone
    }
  }
}

/** Kills a resident's bwrap and waits for it. */
async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch {
    // already exited
  }
  await Promise.allSettled([child.status, child.stdin.close(), child.stdout.cancel()]);
}
