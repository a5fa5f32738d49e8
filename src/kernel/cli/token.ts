import { stateDir, type StateDirEnv } from "../../protocol/state_dir.ts";
import { ensurePrivateDir } from "../auth/private_dir.ts";
import { TokenInputError } from "../auth/token_input.ts";
import { TokenStore } from "../auth/tokens.ts";

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

class TokenUsageError extends Error {}

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
    if (err instanceof TokenUsageError || err instanceof TokenInputError) {
      console.error(`shoal-kernel: ${err.message}\n${USAGE}`);
      return 2;
    }
    console.error(`shoal-kernel: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

const POSITIONALS: Record<string, string[]> = {
  create: ["principal", "profile"],
  list: [],
  revoke: ["id"],
};

function parseTokenArgs(command: string | undefined, rest: string[]): TokenArgs {
  const names = command === undefined ? undefined : POSITIONALS[command];
  if (!names) throw new TokenUsageError(`unknown token command: ${command ?? "(none)"}`);
  const out: TokenArgs = { positional: [], caps: [] };
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i];
    if (!word.startsWith("--")) {
      out.positional.push(word);
      continue;
    }
    const value = rest[++i];
    if (value === undefined) throw new TokenUsageError(`${word} needs a value`);
    if (word === "--state-dir") out.stateDir = value;
    else if (word === "--cap" && command === "create") out.caps.push(value);
    else if (word === "--ttl" && command === "create") {
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
        throw new TokenUsageError(`--ttl needs a whole number of seconds, got ${value}`);
      }
      out.ttl = Number(value);
    } else throw new TokenUsageError(`unknown argument for token ${command}: ${word}`);
  }
  if (out.positional.length !== names.length) {
    throw new TokenUsageError(
      `token ${command} takes ${
        names.length ? names.map((n) => `<${n}>`).join(" ") : "no arguments"
      }`,
    );
  }
  if (command === "create" && out.positional[0] === "") {
    throw new TokenUsageError("principal must not be empty");
  }
  return out;
}
