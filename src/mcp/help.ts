/** The text of `shoal-mcp --help` (M-CLI-5) and its usage line (M-CLI-2). */
import { RELEASE_KERNEL } from "./permissions.ts";
import { CLIENTS } from "./client_config.ts";
import { socketHelp } from "../protocol/socket_path.ts";

/** The usage line printed for bad command lines (M-CLI-2). */
export const USAGE =
  "usage: shoal-mcp [--socket PATH] [--session NAME] [--token TOKEN] [--project DIR] | --help | --version | --print-config CLIENT [--project DIR | --as-human]";

/** The full help for `os`: every option, environment variable, default path and the kernel log. */
export function helpText(os: string): string {
  return `${USAGE}

shoal-mcp serves MCP on stdin/stdout for one agent client and forwards every tool call to
shoal-kernel, a daemon on a private Unix socket that it starts on first use.

Options:
  --socket PATH          kernel socket to use (default: see "Paths" below)
  --session NAME         kernel session to attach to (default: with --project or SHOAL_PROJECT,
                         the project's own session, <dir name>-<8 hex digits>; else default)
  --token TOKEN          bearer token of an agent principal (visible in process listings;
                         prefer SHOAL_TOKEN)
  --project DIR          start the session in DIR (absolute) on every attach
  --print-config CLIENT  print a ready-to-paste configuration for CLIENT, one of
                         ${CLIENTS.join(", ")}, with absolute paths for this install.
                         The agent runs as agent:CLIENT, sandboxed, with read, write and
                         delete in its project (--project DIR, default: the current
                         directory): this adds it to the policy file and makes or reuses its
                         token (${RELEASE_KERNEL} onboard), reporting each change on stderr
  --as-human             with --print-config: the old configuration without a token; the
                         agent acts as you, unconfined (a warning says so)
  --version              print "shoal-mcp <version>" and exit
  -h, --help             print this help and exit
Every option also takes the form --option=value; options win over the environment.

Environment (empty counts as unset):
  SHOAL_SOCKET        the socket path, like --socket
  SHOAL_SESSION       the session name, like --session
  SHOAL_TOKEN         the bearer token, like --token (preferred)
  SHOAL_PROJECT       the project directory, like --project (the printed configurations set it)
  SHOAL_KERNEL        the kernel executable to autostart (default: ${RELEASE_KERNEL}, found on PATH)
  SHOAL_NO_AUTOSTART  any value: never start a kernel, only connect to a running one
  PATH                where ${RELEASE_KERNEL} is looked up; a client's minimal PATH may lack its
                      directory, so the printed configurations set it
  XDG_RUNTIME_DIR, TMPDIR, HOME  used to find the default socket (below)${
    os === "darwin" ? " on Linux" : ""
  }

Paths:
  socket   ${socketHelp(os)}
  state    $XDG_STATE_HOME/shoal, else ~/.local/state/shoal (journal.db, cas/, tokens.json)
  policy   $XDG_CONFIG_HOME/shoal/leash.jsonc, else ~/.config/shoal/leash.jsonc (re-read
           by a running kernel when it changes)
  logs     shoal-mcp writes diagnostics to stderr (your client's MCP log); the kernel writes
           its own to <state>/kernel.log
`;
}

/** The help for this OS. */
export const HELP = helpText(Deno.build.os);
