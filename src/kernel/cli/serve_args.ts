import { SESSION_NAME } from "../../protocol/socket_path.ts";

/** Options of `shoal-kernel [serve]` (K-CLI-1). */
export interface ServeArgs {
  session: string;
  socket?: string;
  stateDir?: string;
  policy?: string;
  bash?: string;
}

/** Thrown for bad usage; the CLI prints it and exits 2. */
export class UsageError extends Error {}

const FLAGS: Record<string, keyof ServeArgs> = {
  "--session": "session",
  "--socket": "socket",
  "--state-dir": "stateDir",
  "--policy": "policy",
  "--bash": "bash",
};

/** Parses the serve flags; each takes one value. */
export function parseServeArgs(args: string[]): ServeArgs {
  const out: ServeArgs = { session: "default" };
  for (let i = 0; i < args.length; i++) {
    const key = FLAGS[args[i]];
    const value = args[i + 1];
    if (!key) throw new UsageError(`unknown argument: ${args[i]}`);
    if (value === undefined) throw new UsageError(`${args[i]} needs a value`);
    out[key] = value;
    i++;
  }
  if (!SESSION_NAME.test(out.session)) throw new UsageError(`invalid session name: ${out.session}`);
  return out;
}
