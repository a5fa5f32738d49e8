import { parseCommandArgs, stringOption, UsageError } from "../protocol/cli_args.ts";
import { SESSION_NAME, type SocketEnv, socketPath } from "../protocol/socket_path.ts";
import { type Client, CLIENTS, isClient } from "./client_config.ts";

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

const OPTIONS = {
  socket: { type: "string" },
  session: { type: "string" },
  token: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  "print-config": { type: "string" },
  project: { type: "string" },
  "as-human": { type: "boolean" },
} as const;

/**
 * Parses `[--socket PATH] [--session NAME] [--token TOKEN] [--project DIR] | --help | --version |
 * --print-config CLIENT [--project DIR | --as-human]` (`--x v` or `--x=v`); throws
 * {@link UsageError} (M-CLI-1/2/4/6, M-ONB-1).
 */
export function parseCommandLine(args: readonly string[]): Command {
  // `deno task mcp -- ARGS` may forward the `--`.
  const parsed = parseCommandArgs(args[0] === "--" ? args.slice(1) : args, OPTIONS, false);
  if (parsed.values.help === true) return { action: "help" };
  if (parsed.values.version === true) return { action: "version" };
  const client = stringOption(parsed, "print-config");
  if (client !== undefined) {
    if (!isClient(client)) {
      throw new UsageError(`unknown client ${client}; one of ${CLIENTS.join(", ")}`);
    }
    const project = stringOption(parsed, "project") || undefined;
    const asHuman = parsed.values["as-human"] === true;
    if (asHuman && project !== undefined) {
      throw new UsageError("--as-human gives no project: the agent runs as you, everywhere");
    }
    return { action: "print-config", client, project, asHuman };
  }
  if (parsed.values["as-human"] === true) throw new UsageError("--as-human needs --print-config");
  const flags: CommandLine = {};
  for (const key of ["socket", "session", "token", "project"] as const) {
    const value = stringOption(parsed, key);
    if (value !== undefined && value !== "") flags[key] = value;
  }
  if (flags.project !== undefined && !flags.project.startsWith("/")) {
    throw new UsageError(`--project needs an absolute path when serving, got ${flags.project}`);
  }
  return { action: "serve", flags };
}

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
}

/** Everything the facade needs to reach its kernel. */
export interface FacadeConfig {
  session: string;
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
  const session = flags.session ?? env.get("SHOAL_SESSION") ?? "default";
  if (!SESSION_NAME.test(session)) {
    throw new UsageError(`invalid session name: ${JSON.stringify(session)}`);
  }
  const token = flags.token ?? env.get("SHOAL_TOKEN") ?? null;
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
      ({ path: socket, root: socketRoot } = socketPath(session, explicit, socketEnv, uid.uid));
    } catch (e) {
      socketProblem = e instanceof Error ? e.message : String(e);
    }
  }
  return {
    session,
    token,
    socket,
    socketProblem,
    socketRoot,
    socketEnv: explicit === undefined ? socketEnv : null,
    project: flags.project ?? null,
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
