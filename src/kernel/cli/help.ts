/** The text of `shoal-kernel --help` and its usage lines (K-CLI-1..3). */
import { socketHelp } from "../../protocol/socket_path.ts";

/** The usage lines printed for bad command lines. */
export const USAGE =
  `usage: shoal-kernel [serve] [--session NAME] [--socket PATH] [--state-dir DIR] [--policy FILE] [--bash PATH]
       shoal-kernel token create <principal> <profile> [--cap CAP]... [--ttl SECONDS] [--state-dir DIR]
       shoal-kernel token list|revoke <id> [--state-dir DIR]
       shoal-kernel approve <plan_ref> | deny <plan_ref> [--reason TEXT] | approvals [--socket PATH] [--session NAME]
       shoal-kernel onboard <agent:NAME> [--project DIR]
       shoal-kernel connect [--socket PATH] [--session NAME]
       shoal-kernel --help | --version`;

/** The full help for `os`: every subcommand, option, environment variable, default path and the log. */
export function helpText(os: string): string {
  return `${USAGE}

shoal-kernel runs bash sessions for agents behind a private Unix socket. shoal-mcp starts it
on first use; run it yourself to see its log in the terminal.

serve (the default):
  --session NAME     picks the default socket path (default: default)
  --socket PATH      socket to serve on (default: see "Paths")
  --state-dir DIR    journal, content store, tokens and kernel.log (default: see "Paths")
  --policy FILE      JSONC policy (default: see "Paths"; else the built-in policy)
  --bash PATH        bash >= 4.4 to run (default: /bin/bash, /usr/bin/bash, bash on PATH)
token create|list|revoke   manage agent bearer tokens in <state>/tokens.json
approve|deny|approvals     act on pending plans as the local human, over the socket
onboard                    grant agent:NAME the project profile on DIR (default: the current
                           directory) in the policy file, make or reuse its token (its secret
                           kept in <state>/agent_secrets.json), print both as one JSON line;
                           what shoal-mcp --print-config runs
connect                    relay stdin and stdout to the socket until either side closes (how a
                           shoal-mcp without network permission reaches the kernel); prints
                           "shoal-kernel: connected <path>" to stderr once connected
Every option also takes the form --option=value. Exit status: 0 done, 1 error, 2 usage,
3 another kernel owns the socket, 4 (connect) no kernel listens on the socket.

Environment (empty counts as unset):
  XDG_RUNTIME_DIR, TMPDIR  where the default socket lives${os === "darwin" ? " on Linux" : ""}
  XDG_STATE_HOME, HOME     where the state directory lives
  XDG_CONFIG_HOME          where the default policy file lives
  SHOAL_TOKEN              removed at start, so no session inherits it
  SHOAL_PROJECT            removed at start too (it is shoal-mcp's project, not a session's)

Paths:
  socket   ${socketHelp(os)}
           (a stale socket is replaced at start)
  state    $XDG_STATE_HOME/shoal, else ~/.local/state/shoal
  policy   $XDG_CONFIG_HOME/shoal/leash.jsonc, else ~/.config/shoal/leash.jsonc; re-read
           when it changes (a malformed edit keeps the policy loaded before)
  log      stderr and <state>/kernel.log
`;
}

/** The help for this OS. */
export const HELP = helpText(Deno.build.os);
