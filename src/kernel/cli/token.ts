import { parseCommandArgs, pathOption, stringOption, UsageError } from "../../protocol/cli_args.ts";
import { stateDir, type StateDirEnv } from "../../protocol/state_dir.ts";
import { ensurePrivateDir } from "../auth/private_dir.ts";
import { TokenInputError } from "../auth/token_input.ts";
import { TokenStore } from "../auth/tokens.ts";
import { printCliError } from "./cli_error.ts";

const USAGE =
  `usage: shoal-kernel token create <principal> <profile> [--cap CAP]... [--ttl SECONDS] [--state-dir DIR]
       shoal-kernel token list [--state-dir DIR]
       shoal-kernel token revoke <id> [--state-dir DIR]`;

interface TokenArgs {
  positional: string[];
  caps: string[];
  ttl?: number;
  stateDir?: string;
}

/**
 * `shoal-kernel token …` (K-CLI-2); `args` are the words after `token`. Returns the exit
 * status: 0 done, 1 failure (e.g. unknown id, no state directory), 2 usage error.
 */
export function runTokenCommand(args: string[], env: StateDirEnv): Promise<number> {
  return Promise.resolve(tokenCommand(args, env));
}

function tokenCommand(args: string[], env: StateDirEnv): number {
  const [command, ...rest] = args;
  try {
    const parsed = parseTokenArgs(command, rest);
    const dir = stateDir(parsed.stateDir, env);
    if (command === "create") {
      const [principal, profile] = parsed.positional;
      ensurePrivateDir(dir);
      const { id, secret } = new TokenStore(dir).create(
        principal,
        profile,
        parsed.caps,
        parsed.ttl,
      );
      console.log(secret);
      console.error(`created ${id} (secret shown once)`);
    } else if (command === "list") {
      for (const t of new TokenStore(dir).list()) {
        console.log(`${t.id}\t${t.principal}\t${t.profile}\t${t.state}`);
      }
    } else {
      const [id] = parsed.positional;
      new TokenStore(dir).revoke(id);
      console.error(`revoked ${id}`);
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof TokenInputError) {
      printCliError(err.message, USAGE);
      return 2;
    }
    printCliError(err instanceof Error ? err.message : String(err));
    return 1;
  }
}

const POSITIONALS: Record<string, string[]> = {
  create: ["principal", "profile"],
  list: [],
  revoke: ["id"],
};

const OPTIONS = { "state-dir": { type: "string" } } as const;
const CREATE_OPTIONS = {
  ...OPTIONS,
  cap: { type: "string", multiple: true },
  ttl: { type: "string" },
} as const;

function parseTokenArgs(command: string | undefined, rest: string[]): TokenArgs {
  const names = command === undefined ? undefined : POSITIONALS[command];
  if (!names) throw new UsageError(`unknown token command: ${command ?? "(none)"}`);
  const parsed = parseCommandArgs(rest, command === "create" ? CREATE_OPTIONS : OPTIONS, true);
  const out: TokenArgs = {
    positional: parsed.positionals,
    caps: (parsed.values.cap as string[] | undefined) ?? [],
    stateDir: pathOption(parsed, "state-dir"),
  };
  const ttl = stringOption(parsed, "ttl");
  if (ttl !== undefined) {
    if (!/^\d+$/.test(ttl) || !Number.isSafeInteger(Number(ttl))) {
      throw new UsageError(`--ttl needs a whole number of seconds, got ${ttl}`);
    }
    out.ttl = Number(ttl);
  }
  if (out.positional.length !== names.length) {
    throw new UsageError(
      `token ${command} takes ${
        names.length ? names.map((n) => `<${n}>`).join(" ") : "no arguments"
      }`,
    );
  }
  if (command === "create" && out.positional[0] === "") {
    throw new UsageError("principal must not be empty");
  }
  return out;
}
