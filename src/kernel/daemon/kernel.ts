import type { ClientConnection } from "../rpc/client_connection.ts";
import type { KernelServices } from "../rpc/kernel_services.ts";
import type { ShellState } from "../bash/shell_state.ts";
import { SessionRegistry } from "../session/registry.ts";
import { ShellViews } from "../session/shell_views.ts";
import { EventBus } from "../events/bus.ts";
import { Journal } from "../journal/journal.ts";
import { PtyRegistry } from "../pty/registry.ts";
import { Cas } from "../store/cas.ts";
import { Blanks } from "../store/blanks.ts";
import type { TranscriptValue } from "../values/spilled_outcome.ts";
import { TokenStore } from "../auth/tokens.ts";
import type { Policy } from "../policy/leash.ts";
import type { SandboxSetting } from "../policy/principal_sandbox.ts";
import { TaskRegistry } from "../tasks/registry.ts";
import { PlanStore } from "../plans/store.ts";
import { ScratchPool } from "../bash/scratch_pool.ts";
import { WarmShells } from "../exec/warm_shells.ts";
import { NetProxy } from "../net/proxy.ts";
import { Residents } from "../sandbox/residents.ts";
import { keepPlaceholderRecords } from "../sandbox/placeholder_records.ts";
import { releasesMade, retryLeftovers } from "../sandbox/placeholders.ts";
import { tokenRejected } from "../../protocol/errors.ts";
import { KILL_GRACE_MS } from "../../protocol/limits.ts";
import type { Attachment } from "../session/attachment.ts";
import { currentGrants, type Grants } from "../policy/grants.ts";
import { dirIdentity } from "../store/remade_dir.ts";
import { KernelLog } from "./kernel_log.ts";

/** Fixed facts a kernel runs with. */
export interface KernelConfig {
  stateDir: string;
  socketPath: string;
  bash: string;
  /** Variables the bash binary defines by itself, never session state. */
  bashVariables: ReadonlySet<string>;
  /** The local human principal, `uid:<euid>` (G-TRUST-2). */
  localHuman: string;
  /** HOME of the kernel process, for `~/` in policy globs (P-EVAL-1). */
  home: string | undefined;
  /** The policy now: re-read when its file changed (M-ONB-1), so read it where it is used. */
  readonly policy: Policy;
  /** The host's sandbox and what it always hides (P-SBX-1). */
  sandbox: SandboxSetting;
  /** The state a new session starts from (K-ATTACH-3). */
  initialState: () => ShellState;
}

/** One kernel process: its configuration and every registry it owns. */
export class Kernel implements KernelServices {
  readonly sessions: SessionRegistry<TranscriptValue>;
  readonly connections = new Set<ClientConnection>();
  readonly journal: Journal;
  readonly bus: EventBus;
  readonly cas: Cas;
  /** Empty files and directories the CAS takes for new blobs (issue 10). */
  readonly blanks: Blanks;
  readonly tokens: TokenStore;
  readonly tasks: TaskRegistry;
  readonly ptys: PtyRegistry;
  readonly plans = new PlanStore();
  /** Scratch directories of bash runs, reused. */
  readonly scratch: ScratchPool;
  /** At most one idle warm shell per session, ready for its next run (issue 10). */
  readonly warm: WarmShells;
  /** The resident sandboxes sandboxed runs enter, per session and confinement (P-SBX-4). */
  readonly residents: Residents;
  /** The filtering proxy of sandboxes with a network, started on first need (P-NET-1). */
  readonly net: NetProxy;
  #log: KernelLog | null = null;
  /** The identity of the state directory's `tmp/` as last seen ({@link checkTmp}). */
  #tmpIdentity: string;

  private constructor(readonly config: KernelConfig, cas: Cas, journal: Journal) {
    this.sessions = new SessionRegistry<TranscriptValue>(
      () => new ShellViews(config.initialState(), config.localHuman),
      (session) =>
        this.tasks.busy(session) || this.ptys.list({ session, principal: null }).length > 0,
      undefined,
      (session) => {
        this.warm.drop(session);
        this.residents.drop(session);
        this.net.drop(session);
        this.tasks.forgetSession(session);
      },
    );
    this.journal = journal;
    this.bus = new EventBus(this.journal);
    this.cas = cas;
    this.#tmpIdentity = dirIdentity(cas.tmpDir);
    this.blanks = Blanks.open(cas.tmpDir);
    cas.useBlanks(this.blanks);
    this.scratch = new ScratchPool(cas.tmpDir);
    this.net = new NetProxy(
      cas.tmpDir,
      (channel, payload, audience) => this.bus.publish(channel, payload, audience),
    );
    this.residents = new Residents(
      config.sandbox.host,
      config.bash,
      cas.tmpDir,
      this.net,
      (line) => this.log(line),
    );
    this.warm = new WarmShells(config.bash, config.bashVariables, this.scratch, this.residents);
    this.tokens = new TokenStore(config.stateDir);
    this.tasks = new TaskRegistry(this.bus);
    this.ptys = new PtyRegistry(
      (channel, payload, audience) => this.bus.publish(channel, payload, audience),
      (channel) => this.bus.retire(channel),
    );
    try {
      this.#log = new KernelLog(`${config.stateDir}/kernel.log`);
    } catch {
      this.#log = null;
    }
    const left = keepPlaceholderRecords(config.stateDir);
    for (const path of left.removed) {
      this.log(`removed the placeholder a killed kernel left: ${path}`);
    }
    for (const path of left.kept) this.log(`kept ${path}: changed since a killed kernel made it`);
    retryLeftovers(); // those a sandbox of another kernel binds, once it has ended
  }

  /**
   * Opens the state directory's stores (the journal unless the caller opened it already) and
   * returns a kernel ready to serve.
   */
  static async start(config: KernelConfig, journal?: Journal): Promise<Kernel> {
    const cas = await Cas.open(config.stateDir);
    return new Kernel(config, cas, journal ?? Journal.open(config.stateDir));
  }

  /**
   * Makes `tmp/` of the state directory again when it was removed under the running kernel (it
   * looks disposable), and starts afresh what lived in it: warm shells, idle scratch directories,
   * resident sandboxes and their launcher. Otherwise every later run failed until a restart. A
   * `tmp/` made again meanwhile (a staging file found it gone) is another directory too.
   */
  checkTmp(): void {
    let identity;
    try {
      identity = dirIdentity(this.cas.tmpDir);
    } catch {
      return; // cannot be made (a full disk): the run's own write names the state directory
    }
    if (identity === this.#tmpIdentity) return;
    this.#tmpIdentity = identity;
    this.log(`${this.cas.tmpDir} was removed: made again, warm shells and sandboxes start afresh`);
    this.warm.dropAll();
    this.scratch.forgetIdle();
    this.residents.restartAll();
    this.net.restartAll();
  }

  /** Writes a diagnostic line to stderr and kernel.log (G-STATE-2). */
  log(line: string): void {
    const text = `shoal-kernel: ${line}\n`;
    const bytes = new TextEncoder().encode(text);
    try {
      Deno.stderr.writeSync(bytes);
    } catch {
      // stderr closed (detached kernel)
    }
    this.#log?.write(bytes);
  }

  /**
   * Whether a token-attached connection's token is no longer valid (T-TOK-4): revoked, expired,
   * unknown, or the store is unreadable (fail closed). When so, its subscriptions end.
   */
  tokenLapsed(conn: ClientConnection): boolean {
    if (!conn.attachment || !this.attachmentLapsed(conn.attachment)) return false;
    this.bus.removeSubscriber(conn.subscriber);
    return true;
  }

  /** Whether an attachment's token no longer validates, or the store is unreadable (fail closed). */
  attachmentLapsed(attachment: Attachment): boolean {
    if (!attachment.token) return false;
    try {
      return this.tokens.validate(attachment.token) === null;
    } catch (e) {
      this.log(`token store unreadable: ${e instanceof Error ? e.message : e}`);
      return true;
    }
  }

  /**
   * Re-checks an attached connection before each request: a lapsed token is -32030 (T-TOK-4),
   * and the request runs under the policy in force now ({@link refreshGrants}).
   */
  revalidate(conn: ClientConnection): void {
    if (this.tokenLapsed(conn)) {
      throw tokenRejected();
    }
    if (conn.attachment) this.refreshGrants(conn.attachment);
  }

  /**
   * The attachment's grants under the policy in force now, kept in it: an edit of the policy
   * file reaches connections attached before it, not only the next attach (M-ONB-1).
   */
  refreshGrants(attachment: Attachment): Grants {
    attachment.grants = currentGrants(this.config, attachment.grants);
    return attachment.grants;
  }

  /**
   * Stops every task, warm shell and PTY process group, then every resident sandbox, removes the
   * scratch directories and blanks, and closes the journal (G-SOCK-8).
   */
  async shutdown(): Promise<void> {
    for (const conn of this.connections) conn.close();
    const stopped = Promise.all([
      this.tasks.cancelAll(),
      this.warm.closeAll(),
      this.ptys.closeAll(),
    ]);
    // A sandboxed run's end is reported by its resident's launcher, which an agent's process
    // can stop (SIGSTOP, ptrace): past the kill grace its resident is killed, ending its runs
    // with it (P-SBX-4), instead of the shutdown waiting for that report for good.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise((resolve) => timer = setTimeout(resolve, 2 * KILL_GRACE_MS));
    await Promise.race([stopped, grace]);
    clearTimeout(timer);
    await this.residents.closeAll();
    await stopped;
    await releasesMade(); // the placeholders of the sandboxes just ended go before the kernel
    this.net.closeAll();
    this.scratch.clear();
    await this.blanks.close();
    this.journal.close();
    this.#log?.close();
  }
}
