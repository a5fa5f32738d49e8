/**
 * The secrets of the tokens `shoal-mcp --print-config` made (M-ONB-1), so that printing the
 * configuration again reuses the token instead of minting one per run. `tokens.json` keeps only
 * digests (T-TOK-2), so the secret is kept beside it, in `<state>/agent_secrets.json` (mode 0600,
 * written by rename like the token store): the state directory is private (0700) and masked in
 * every sandbox (P-SBX-3), the same protection the token store itself has.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { TokenStore } from "./tokens.ts";

/** The token an onboarded agent uses, and whether it was made just now. */
export interface AgentToken {
  id: string;
  secret: string;
  created: boolean;
}

interface SecretsFile {
  version: 1;
  secrets: Record<string, string>;
}

function readSecrets(path: string): SecretsFile {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { version: 1, secrets: {} };
    throw e;
  }
  // What to do, said with every refusal: nothing here is lost by starting a new file, as the
  // tokens it names stay in tokens.json until revoked.
  const aside = "move it aside and onboard again for a new token (`shoal-kernel token list` " +
    "shows the old ones, to revoke)";
  let parsed: Partial<SecretsFile>;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`malformed agent secrets file ${path}: ${(e as Error).message}; ${aside}`);
  }
  if (typeof parsed?.version === "number" && parsed.version > 1) {
    throw new Error(
      `${path} was written by a newer shoal (version ${parsed.version}; this one reads ` +
        `version 1): onboard with that newer shoal, or ${aside}`,
    );
  }
  if (parsed?.version !== 1 || typeof parsed.secrets !== "object" || parsed.secrets === null) {
    throw new Error(`${path}: not an agent secrets file; ${aside}`);
  }
  return parsed as SecretsFile;
}

/** Replaces the file by rename; a failed write (a full disk) leaves no temporary file behind. */
function writeSecrets(dir: string, path: string, file: SecretsFile): void {
  const temp = `${dir}/.agent_secrets.json.${randomBytes(8).toString("hex")}.tmp`;
  try {
    Deno.writeTextFileSync(temp, JSON.stringify(file, null, 2) + "\n", {
      createNew: true,
      mode: 0o600,
    });
    Deno.renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * The token of `principal` recorded by an earlier onboarding when it is still active in the
 * store of `stateDir`, else a new one (profile `project`), recorded for next time.
 */
export function agentToken(stateDir: string, principal: string): AgentToken {
  const path = `${stateDir}/agent_secrets.json`;
  const file = readSecrets(path);
  const store = new TokenStore(stateDir);
  const kept = file.secrets[principal];
  const identity = kept === undefined ? null : store.validate(kept);
  if (identity !== null && identity.principal === principal) {
    return { id: identity.id, secret: kept!, created: false };
  }
  const { id, secret } = store.create(principal, "project", []);
  file.secrets[principal] = secret;
  writeSecrets(stateDir, path, file);
  return { id, secret, created: true };
}
