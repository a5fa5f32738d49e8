import { parseCommandArgs, pathOption, stringOption, UsageError } from "../../protocol/cli_args.ts";
import { SESSION_NAME } from "../../protocol/socket_path.ts";

/** Options of `shoal-kernel [serve]` (K-CLI-1). */
export interface ServeArgs {
  session: string;
  socket?: string;
  stateDir?: string;
  policy?: string;
  bash?: string;
}

const OPTIONS = {
  session: { type: "string" },
  socket: { type: "string" },
  "state-dir": { type: "string" },
  policy: { type: "string" },
  bash: { type: "string" },
} as const;

/** Parses the serve flags (`--x v` or `--x=v`); each takes one value, the last one wins. */
export function parseServeArgs(args: string[]): ServeArgs {
  const parsed = parseCommandArgs(args, OPTIONS, false);
  const session = stringOption(parsed, "session") ?? "default";
  if (!SESSION_NAME.test(session)) throw new UsageError(`invalid session name: ${session}`);
  return {
    session,
    socket: pathOption(parsed, "socket"),
    stateDir: pathOption(parsed, "state-dir"),
    policy: pathOption(parsed, "policy"),
    bash: pathOption(parsed, "bash"),
  };
}
