import { ErrorCode, RpcError } from "../protocol/errors.ts";
import {
  ConnectionClosedError,
  OversizeRequestError,
  RpcConnection,
} from "../protocol/rpc_client.ts";
import {
  AUTOSTART_POLL_MS,
  AUTOSTART_WAIT_MS,
  droppedAttach,
  type SpawnedKernel,
  spawnKernel,
  waitForKernel,
} from "./autostart.ts";
import { sleep } from "../protocol/timers.ts";
import { FRAME_LIMIT } from "../protocol/limits.ts";
import { checkTrustedPath, UntrustedPathError } from "../protocol/trusted_path.ts";
import { effectiveUid, errorText, type FacadeConfig } from "./config.ts";
import { holdsSocketGrant } from "./permissions.ts";
import { connectThroughRelay, RelayConnectError } from "./relay.ts";
import { isUnreachable, unreachableReason } from "../protocol/relay.ts";

/** What the facade sends as `client` in `session.attach` (M-START-2). */
const CLIENT = { kind: "mcp", tty: false };

/**
 * Rethrows `e`, a closed connection as {@link kernelDisconnected} (M-START-4), a request too
 * large for the kernel's frame limit as `-32602` (M-IN-1: its MCP frame may be within it).
 */
function disconnected(e: unknown): never {
  if (e instanceof ConnectionClosedError) throw kernelDisconnected();
  if (e instanceof OversizeRequestError) throw new BridgeError(ErrorCode.INVALID_PARAMS, e.message);
  throw e;
}

/** A reason the kernel cannot be used right now (M-START-3). */
class Unavailable extends Error {}

/**
 * A kernel this facade did not start closed the connection during attach without an answer:
 * one shutting down (G-SOCK-8) keeps its socket taking connections it never serves until it
 * exits, which is when it closes them.
 */
class ClosedDuringAttach extends Unavailable {}

/** How an attach the kernel refused with -32030 is reported (M-START-3). */
const AUTH_FAILED = "authentication failed (-32030)";

/** What the log adds to {@link AUTH_FAILED}: why a pasted configuration stops working, and the way back. */
const AUTH_FAILED_HINT = "the kernel does not know this configuration's token (revoked, expired, " +
  "or kept in another state directory): print the configuration again (shoal-mcp --print-config " +
  "CLIENT --project DIR) and put it in the client in place of this one";

/** A failure of the bridge to the kernel rather than an error the kernel returned (M-OUT-5). */
export class BridgeError extends RpcError {}

/** The `-32603` error for a kernel that cannot be reached or attached (M-START-3). */
export function kernelUnavailable(reason: string): BridgeError {
  return new BridgeError(ErrorCode.INTERNAL_ERROR, `kernel unavailable: ${reason}`);
}

/** The `-32603` error for a request whose kernel connection dropped (M-START-4). */
export function kernelDisconnected(): BridgeError {
  return new BridgeError(ErrorCode.INTERNAL_ERROR, "kernel disconnected");
}

/**
 * The facade's main kernel connection (M-START-1..5): connects lazily (autostarting the kernel
 * once per attempt when allowed), attaches, multiplexes requests, and reconnects on the next
 * request after a drop. Also opens the extra attached connections subscriptions use.
 */
export class KernelClient {
  #conn: RpcConnection | null = null;
  #connecting: Promise<RpcConnection> | null = null;
  #attachment: Record<string, unknown> | null = null;
  #lastLogged: string | null = null;
  #closed = false;

  constructor(readonly config: FacadeConfig, readonly log: (line: string) => void) {}

  /** The `session.attach` result of the most recent main connection, if any. */
  get attachment(): Record<string, unknown> | null {
    return this.#attachment;
  }

  /**
   * Null while the main connection takes what is sent on it; once more than a frame's worth
   * ({@link FRAME_LIMIT}) waits for a kernel that does not read (stopped, or busy), a promise
   * settling when it has all been written or the connection closed. The transport then stops
   * reading stdin (M-START-5): a client's requests for a stopped kernel grew the facade by
   * three times their size, without bound.
   */
  backlog(): Promise<void> | null {
    const conn = this.#conn;
    if (conn === null || conn.isClosed || conn.unwritten <= FRAME_LIMIT) return null;
    return Promise.race([conn.flushed(), conn.closed]);
  }

  /** Whether the main connection is open now: a request is then written within its call. */
  get connected(): boolean {
    return this.#conn !== null && !this.#conn.isClosed;
  }

  /**
   * A check that the main connection open now is still the one: it throws
   * {@link kernelDisconnected} once that connection closed (or when there is none). A task lives
   * in the kernel that started it; a restarted kernel numbers its tasks anew, so its `task:N` is
   * another run (M-START-4).
   */
  sameKernel(): () => void {
    const conn = this.#conn !== null && !this.#conn.isClosed ? this.#conn : null;
    return () => {
      if (conn === null || conn.isClosed) throw kernelDisconnected();
    };
  }

  /**
   * Sends one request on the main connection; kernel errors reject as {@link RpcError}. With
   * `exact`, the result keeps numbers a double cannot hold ({@link RpcConnection.request}).
   */
  request(method: string, params: Record<string, unknown> = {}, exact = false): Promise<unknown> {
    const conn = this.#conn;
    // Connected: the request is written within this call, not after a turn of awaits.
    const reply = conn !== null && !conn.isClosed
      ? conn.request(method, params, exact)
      : this.connection().then((c) => c.request(method, params, exact));
    return reply.catch(disconnected);
  }

  /** The attached main connection, establishing it first when there is none (one attempt at a time). */
  connection(): Promise<RpcConnection> {
    if (this.#conn !== null && !this.#conn.isClosed) return Promise.resolve(this.#conn);
    this.#connecting ??= this.#establishMain().then(
      (conn) => {
        this.#connecting = null;
        this.#adopt(conn);
        return conn;
      },
      (e) => {
        this.#connecting = null;
        throw this.#unavailable(e);
      },
    );
    return this.#connecting;
  }

  /**
   * Establishes the main connection. A kernel shutting down (G-SOCK-8) takes connections until
   * it has exited and closes each unanswered: the call that met it failed, where M-START-4 has
   * the next request reconnect. So such an attempt is made again every
   * {@link AUTOSTART_POLL_MS} for up to {@link AUTOSTART_WAIT_MS}, until the kernel is gone and
   * the next one (autostarted, M-START-1) answers.
   */
  async #establishMain(): Promise<RpcConnection> {
    const deadline = Date.now() + AUTOSTART_WAIT_MS;
    while (true) {
      try {
        return await this.#establish(true);
      } catch (e) {
        if (!(e instanceof ClosedDuringAttach) || Date.now() >= deadline) throw e;
      }
      await sleep(AUTOSTART_POLL_MS);
    }
  }

  /**
   * A new connection attached like the main one, for one subscription (M-SUB-2). The main
   * connection is established first, so a kernel being autostarted is waited for.
   */
  async openAttached(): Promise<RpcConnection> {
    await this.connection();
    try {
      return await this.#establish(false);
    } catch (e) {
      throw this.#unavailable(e);
    }
  }

  /** Closes the main connection; later requests fail as unavailable. */
  close(): void {
    this.#closed = true;
    this.#conn?.close();
  }

  #adopt(conn: RpcConnection): void {
    this.#conn = conn;
    this.#lastLogged = null;
    conn.closed.then(() => {
      if (!this.#closed && this.#conn === conn) this.log("shoal-mcp: kernel connection closed");
    });
  }

  #unavailable(e: unknown): BridgeError {
    const reason = errorText(e);
    if (reason !== this.#lastLogged) {
      this.#lastLogged = reason;
      const hint = reason === AUTH_FAILED ? `: ${AUTH_FAILED_HINT}` : "";
      this.log(`shoal-mcp: kernel unavailable: ${reason}${hint}`);
    }
    return kernelUnavailable(reason);
  }

  /**
   * Connects and attaches: the main connection (`main`), which may autostart the kernel and
   * starts the session in the project (M-ONB-1), or one for a subscription, which does neither:
   * its attach moved the session back to the project from wherever the agent's `cd` had taken it.
   */
  async #establish(main: boolean): Promise<RpcConnection> {
    if (this.#closed) throw new Unavailable("the facade is shutting down");
    const { socket, socketProblem, socketRoot } = this.config;
    if (socket === null) throw new Unavailable(socketProblem ?? "no socket path");
    const euid = effectiveUid();
    if ("problem" in euid) throw new Unavailable(euid.problem);
    const { socketSession, socketEnv } = this.config;
    const discovery = socketEnv === null ? null : { session: socketSession, env: socketEnv };
    // Without the `unix:` grant for the socket (a release, M-PERM-3) the kernel's relay connects.
    const direct = holdsSocketGrant(socket);
    const open = direct
      ? () => RpcConnection.connect(socket)
      : () => connectThroughRelay(this.config.kernel, socket, this.config.searchPath, discovery);
    // G-SOCK-10: the path is checked before every connect, autostart polls included.
    const connect = async () => {
      checkTrustedPath(socket, socketRoot, euid.uid);
      return await open();
    };
    let conn: RpcConnection;
    let spawned: SpawnedKernel | null = null;
    try {
      // No socket file, nothing a connect could reach: the kernel is spawned within this call,
      // before the facade reads its client's first request and sets up its server, not after the
      // turn of the event loop a failing connect takes (issue 33: ~8 ms of a cold first exec).
      const absent = main && direct && this.config.autostart &&
        !checkTrustedPath(socket, socketRoot, euid.uid);
      if (absent) throw new Deno.errors.NotFound(`no socket at ${socket}`);
      conn = await connect();
    } catch (e) {
      if (e instanceof UntrustedPathError) throw new Unavailable(e.message);
      if (!main || !this.config.autostart || isPermissionError(e) || isRefusedRelay(e)) {
        throw new Unavailable(connectProblem(socket, e));
      }
      spawned = spawnKernel(this.config.kernel, socket, this.config.searchPath);
      if ("problem" in spawned) throw new Unavailable(spawned.problem);
      const waited = await waitForKernel(connect, spawned);
      if ("problem" in waited) throw new Unavailable(waited.problem);
      conn = waited.conn;
    }
    try {
      const result = await conn.request("session.attach", {
        session: this.config.session,
        token: this.config.token,
        // Kernels before M-ONB-1 ignore it (C-6): the session then starts where the kernel did.
        ...(this.config.project === null || !main ? {} : { cwd: this.config.project }),
        client: CLIENT,
      });
      const elsewhere = main ? ignoredProject(result, this.config.project, socket) : null;
      if (elsewhere !== null) throw new Unavailable(elsewhere);
      if (typeof result === "object" && result !== null && !Array.isArray(result)) {
        this.#attachment = result as Record<string, unknown>;
      }
      return conn;
    } catch (e) {
      conn.close();
      if (e instanceof Unavailable) throw e;
      if (e instanceof RpcError && e.code === ErrorCode.AUTH_FAILED) {
        throw new Unavailable(AUTH_FAILED);
      }
      if (
        e instanceof RpcError && e.code === ErrorCode.INVALID_PARAMS && main && this.config.project
      ) {
        throw new Unavailable(projectGone(this.config.project, e.message));
      }
      if (e instanceof RpcError) throw new Unavailable(`attach failed: ${e.message} (${e.code})`);
      const closed = "the kernel closed the connection during attach";
      if (spawned === null || "problem" in spawned) throw new ClosedDuringAttach(closed);
      throw new Unavailable(await droppedAttach(spawned) ?? closed);
    }
  }
}

/**
 * The reason for an attach the kernel refused as invalid while the facade asked for `project`:
 * the kernel checks that the directory exists (K-ATTACH cwd), so it is gone since the
 * configuration was printed (M-ONB-1), and only printing a new one helps.
 */
function projectGone(project: string, message: string): string {
  return `attach failed: the project ${project} of this configuration (SHOAL_PROJECT) is not a ` +
    `directory any more (moved or deleted?; the kernel said: ${message}): print the configuration ` +
    "again for where it is now (shoal-mcp --print-config CLIENT --project DIR) and put it in the " +
    "client in place of this one";
}

/**
 * Why an attach whose session is not in `project` cannot be used, or null when it is there (or
 * no project was asked for). A kernel of this version moves the session there or refuses the
 * attach; one that answers from elsewhere predates M-ONB-1 (a kernel autostarted before shoal was
 * upgraded, still serving), and running the agent's commands in its own cwd, under a policy it
 * read before the upgrade, only gave 'policy denies this source' with nothing naming the cause.
 */
function ignoredProject(result: unknown, project: string | null, socket: string): string | null {
  if (project === null) return null;
  const display = (result as { cwd?: { display?: unknown } } | null)?.cwd?.display;
  if (typeof display !== "string") return null;
  const bare = (path: string) => path.replace(/(?<=.)\/+$/, "");
  const wanted = new Set([bare(project)]);
  try {
    wanted.add(Deno.realPathSync(project));
  } catch {
    // the kernel's own check would have refused a project that cannot be resolved
  }
  if (wanted.has(bare(display))) return null;
  return `the kernel on ${socket} left the session in ${display}, not in the project ` +
    `${project}: it is older than this facade and ignores SHOAL_PROJECT (a kernel started ` +
    "before shoal was upgraded, still running); stop that kernel, and the next call starts " +
    "the current one";
}

function isPermissionError(e: unknown): boolean {
  return e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied;
}

function isRefusedRelay(e: unknown): boolean {
  return e instanceof RelayConnectError && !e.unreachable;
}

/** Why connecting to `socket` failed, naming the permission and path when one was denied (M-PERM-4). */
function connectProblem(socket: string, e: unknown): string {
  // The relay words its reason as this function does.
  if (e instanceof RelayConnectError) return e.message;
  if (e instanceof Deno.errors.NotCapable) {
    return `permission denied for unix:${socket} (the facade may only use the socket it was started for)`;
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return `permission denied for unix:${socket} (${errorText(e)})`;
  }
  if (isUnreachable(e)) return unreachableReason(socket, e);
  return `cannot connect to ${socket}: ${errorText(e)}`;
}
