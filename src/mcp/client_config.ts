/** `shoal-mcp --print-config CLIENT`: a ready-to-paste client configuration for this installation (M-CLI-6). */

/** The MCP clients `--print-config` writes for. */
export const CLIENTS = ["claude-desktop", "claude-code", "vscode", "cursor"] as const;

/** One of {@link CLIENTS}. */
export type Client = typeof CLIENTS[number];

/** Whether `name` is one of {@link CLIENTS}. */
export function isClient(name: string): name is Client {
  return (CLIENTS as readonly string[]).includes(name);
}

/** What a sandboxed agent's configuration carries (the kernel's `onboard` result). */
export interface Provisioned {
  token: string;
  /** The project directory the agent's session starts in. */
  project: string;
  /** HOME and the XDG variables the kernel found the policy and state by. */
  env: Record<string, string>;
}

/**
 * The command directories of a login shell, in its order, kept at the end of PATH: a client's
 * minimal environment has only `/usr/bin:/bin`, so an agent found nothing installed in
 * `/usr/local/bin` (or by Homebrew on macOS), which a terminal finds.
 */
const SYSTEM_PATH = [
  ...(Deno.build.os === "darwin" ? ["/opt/homebrew/bin"] : []),
  "/usr/local/bin",
  "/usr/bin",
  "/bin",
];

/** How this installation is started: its absolute command and a PATH that finds its kernel. */
export interface Install {
  command: string;
  /** Directories holding `shoal-kernel` (and, from a checkout, `deno`), then {@link SYSTEM_PATH}. */
  path: string;
}

function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/**
 * This installation: a compiled `shoal-mcp` with `shoal-kernel` beside it, or the checkout's
 * `bin/shoal-mcp` with its `bin/shoal-kernel` and the Deno running it now.
 */
export function thisInstall(): Install {
  if (Deno.build.standalone) {
    const exe = Deno.execPath();
    return { command: exe, path: [...new Set([dirname(exe), ...SYSTEM_PATH])].join(":") };
  }
  // The URL's path escapes a space or a non-ASCII letter (My%20Projects): decoded, it names the file.
  const bin = decodeURIComponent(new URL("../../bin", import.meta.url).pathname);
  const dirs = [bin, dirname(Deno.execPath()), ...SYSTEM_PATH];
  return { command: `${bin}/shoal-mcp`, path: [...new Set(dirs)].join(":") };
}

/** `word` as one shell word: as is when plain, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The configuration text for `client`: JSON for the editors and Claude Desktop, a command line
 * for Claude Code. With `agent` the facade attaches with its token and starts the session in its
 * project (M-ONB-1); without, as the local human.
 */
export function clientConfig(client: Client, install: Install, agent: Provisioned | null): string {
  // The project travels in the environment, not as `--project`: a facade with no arguments to
  // parse never loads Deno's Node layer (node:util), which then stays resident (issue 33).
  const env: Record<string, string> = agent === null
    ? { PATH: install.path }
    : { PATH: install.path, SHOAL_TOKEN: agent.token, SHOAL_PROJECT: agent.project, ...agent.env };
  const args: string[] = [];
  if (client === "claude-code") {
    // `claude mcp add` keys a server of its default, local scope by the directory it runs in, and
    // Claude Code shows it only when started there: run in the project, whichever directory the
    // line is pasted in (the user scope would start this project's agent in every other one, the
    // project scope would write the token into the project's .mcp.json)
    const words = agent === null
      ? ["claude", "mcp", "add", "shoal"]
      : ["claude", "mcp", "add", "--scope", "local", "shoal"];
    for (const [name, value] of Object.entries(env)) words.push("--env", `${name}=${value}`);
    const line = [...words, "--", install.command, ...args].map(shellWord).join(" ");
    return agent === null ? line : `cd ${shellWord(agent.project)} && ${line}`;
  }
  const server = { command: install.command, args, env };
  const config = client === "vscode"
    ? { servers: { shoal: { type: "stdio", ...server } } }
    : { mcpServers: { shoal: server } };
  return JSON.stringify(config, null, 2);
}
