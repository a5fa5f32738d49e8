import { SESSION_NAME, socketPath } from "../protocol/socket_path.ts";

/** The usage line printed for bad command lines (M-CLI-2). */
export const USAGE = "usage: shoal-mcp [--socket PATH] [--session NAME] [--token TOKEN]";

/** Flag values given on the command line; empty values count as unset (M-CLI-1). */
export interface CommandLine {
  socket?: string;
  session?: string;
  token?: string;
}

/** A parsed command line, or the reason it is a usage error (null for `-h`/`--help`). */
export type CommandLineResult =
  | { ok: true; flags: CommandLine }
  | { ok: false; reason: string | null };

const FLAGS: Record<string, keyof CommandLine> = {
  "--socket": "socket",
  "--session": "session",
  "--token": "token",
};

/** Parses `[--socket PATH] [--session NAME] [--token TOKEN]` (also `--flag=value`) (M-CLI-1/2). */
export function parseCommandLine(args: readonly string[]): CommandLineResult {
  const flags: CommandLine = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "-h" || arg === "--help") return { ok: false, reason: null };
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const key = FLAGS[name];
    if (key === undefined) return { ok: false, reason: `unknown argument: ${arg}` };
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (i + 1 < args.length) value = args[++i];
    else return { ok: false, reason: `missing value for ${name}` };
    if (value !== "") flags[key] = value;
    else delete flags[key];
  }
  return { ok: true, flags };
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
  autostart: boolean;
  /** The kernel executable to autostart (M-CLI-1). */
  kernel: string;
}

/** Merges flags over environment (M-CLI-1) and applies the socket rule (G-SOCK-1); throws a reason string for an invalid session. */
export function resolveConfig(flags: CommandLine, env: EnvReader): FacadeConfig {
  const session = flags.session ?? env.get("SHOAL_SESSION") ?? "default";
  if (!SESSION_NAME.test(session)) {
    throw new Error(`invalid session name: ${JSON.stringify(session)}`);
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
  const needsUid = explicit === undefined && socketEnv.XDG_RUNTIME_DIR === undefined;
  const uid = needsUid ? effectiveUid() : { uid: 0 };
  if ("problem" in uid) socketProblem = uid.problem;
  else ({ path: socket, root: socketRoot } = socketPath(session, explicit, socketEnv, uid.uid));
  return {
    session,
    token,
    socket,
    socketProblem,
    socketRoot,
    autostart: env.get("SHOAL_NO_AUTOSTART") === undefined,
    kernel: env.get("SHOAL_KERNEL") ?? "shoal-kernel",
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
