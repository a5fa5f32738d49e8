import { UsageError } from "../protocol/usage_error.ts";
import { SESSION_NAME, type SocketEnv, socketPath } from "../protocol/socket_path.ts";
import { projectSession } from "../protocol/project_session.ts";
import type { Client } from "./client_config.ts";

/** Flag values given on the command line; empty values count as unset (M-CLI-1). */
export interface CommandLine {
  socket?: string;
  session?: string;
  token?: string;
  /** The directory the session is to start in (M-ONB-1). */
  project?: string;
}

/** What the command line asks for: serve MCP on stdio, or print help, version or a client configuration. */
export type Command =
  | { action: "serve"; flags: CommandLine }
  | { action: "help" }
  | { action: "version" }
  | { action: "print-config"; client: Client; project?: string; asHuman: boolean };

/** What an empty command line asks for: serve, with no flags (parsing it would give the same). */
export const NO_ARGUMENTS: Command = { action: "serve", flags: {} };

/** Reads environment variables; a denied read counts as unset with one warning per name (M-PERM-4). */
export class EnvReader {
  #warned = new Set<string>();

  constructor(readonly warn: (line: string) => void) {}

  /** The variable's value, or undefined when unset, empty or not readable. */
  get(name: string): string | undefined {
    let value: string | undefined;
    try {
      value = Deno.env.get(name);
    } catch (e) {
      if (!this.#warned.has(name)) {
        this.#warned.add(name);
        this.warn(`shoal-mcp: cannot read ${name} (${errorText(e)}); treating it as unset`);
      }
      return undefined;
    }
    return value === "" ? undefined : value;
  }

  /** Whether the variable is set to the empty string (which {@link get} treats as unset). */
  setButEmpty(name: string): boolean {
    try {
      return Deno.env.get(name) === "";
    } catch {
      return false;
    }
  }
}

/** Everything the facade needs to reach its kernel. */
export interface FacadeConfig {
  /** The session attached to: the one named, else the project's own (M-ONB-1), else `default`. */
  session: string;
  /** The session name the socket is found by (G-SOCK-1): the one named, else `default`. */
  socketSession: string;
  token: string | null;
  /** The socket path, or null when it cannot be determined (see `socketProblem`). */
  socket: string | null;
  /** Why `socket` is null (M-PERM-4), else null. */
  socketProblem: string | null;
  /** The runtime root `socket` lies below, where the G-SOCK-10 check starts (`/` when explicit). */
  socketRoot: string;
  /** What default discovery read (G-SOCK-1), or null for an explicit path; the relay gets the same. */
  socketEnv: SocketEnv | null;
  /** The directory the session starts in, sent on every attach (M-ONB-1), or null. */
  project: string | null;
  autostart: boolean;
  /** The kernel executable to autostart (M-CLI-1). */
  kernel: string;
  /** The PATH the kernel is looked up on, named when autostart fails (M-PERM-4). */
  searchPath: string | null;
}

/** Merges flags over environment (M-CLI-1) and applies the socket rule (G-SOCK-1); throws {@link UsageError} for an invalid session. */
export function resolveConfig(flags: CommandLine, env: EnvReader): FacadeConfig {
  const named = flags.session ?? env.get("SHOAL_SESSION");
  if (named !== undefined && !SESSION_NAME.test(named)) {
    throw new UsageError(`invalid session name: ${JSON.stringify(named)}`);
  }
  const token = flags.token ?? env.get("SHOAL_TOKEN") ?? null;
  if (token === null && env.setButEmpty("SHOAL_TOKEN")) {
    // M-CLI-1 counts it as unset; said, since a configuration that meant a token acts as the human
    env.warn(
      "shoal-mcp: SHOAL_TOKEN is set but empty, so no token is sent: this facade acts as the " +
        "local human, unconfined (no sandbox, no approvals)",
    );
  }
  const project = flags.project ?? env.get("SHOAL_PROJECT");
  if (project !== undefined && !project.startsWith("/")) {
    const from = flags.project === undefined ? "SHOAL_PROJECT" : "--project";
    throw new UsageError(`${from} needs an absolute path when serving, got ${project}`);
  }
  // A project's own session, on the default session's kernel (M-ONB-1): one kernel for all.
  const session = named ?? (project === undefined ? "default" : projectSession(project));
  const socketSession = named ?? "default";
  const explicit = flags.socket ?? env.get("SHOAL_SOCKET");
  const socketEnv = explicit === undefined
    ? { XDG_RUNTIME_DIR: env.get("XDG_RUNTIME_DIR"), TMPDIR: env.get("TMPDIR") }
    : {};
  let socket: string | null = null;
  let socketProblem: string | null = null;
  let socketRoot = "/";
  // The uid is only consulted by rules 3-4, so a denied uid lookup matters only there.
  const needsUid = explicit === undefined &&
    (Deno.build.os === "darwin" || socketEnv.XDG_RUNTIME_DIR === undefined);
  const uid = needsUid ? effectiveUid() : { uid: 0 };
  if ("problem" in uid) socketProblem = uid.problem;
  else {
    try {
      ({ path: socket, root: socketRoot } = socketPath(
        socketSession,
        explicit,
        socketEnv,
        uid.uid,
      ));
    } catch (e) {
      socketProblem = e instanceof Error ? e.message : String(e);
    }
  }
  return {
    session,
    socketSession,
    token,
    socket,
    socketProblem,
    socketRoot,
    socketEnv: explicit === undefined ? socketEnv : null,
    project: project ?? null,
    autostart: env.get("SHOAL_NO_AUTOSTART") === undefined,
    kernel: env.get("SHOAL_KERNEL") ?? "shoal-kernel",
    searchPath: env.get("PATH") ?? null,
  };
}

/** The effective uid, or why it cannot be read (M-PERM-4). */
export function effectiveUid(): { uid: number } | { problem: string } {
  try {
    const uid = Deno.uid();
    if (uid === null) return { problem: "the effective uid is unknown on this platform" };
    return { uid };
  } catch (e) {
    return {
      problem: `permission denied for sys:uid (needed to find the socket path; ${errorText(e)})`,
    };
  }
}

/** The message of an error value. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
