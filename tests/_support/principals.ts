/**
 * Test support for principals: policy files, tokens made by the real `shoal-kernel token` CLI,
 * and the kernel CLI as a subprocess.
 */
import { ensurePrivateDir } from "../../src/kernel/auth/private_dir.ts";
import { TokenStore } from "../../src/kernel/auth/tokens.ts";
import { defaultPolicy, policyFor, type PrincipalPolicy } from "../../src/kernel/policy/leash.ts";
import { stateDir } from "../../src/protocol/state_dir.ts";
import type { Rec } from "./rec.ts";
import { DARWIN_RULE, KERNEL_BIN, type Sandbox } from "./sandbox.ts";

/** A principal's policy entry granting nothing but `overrides` (sandboxed, nothing self-approved). */
export function principalPolicy(overrides: Partial<PrincipalPolicy> = {}): PrincipalPolicy {
  return {
    fs_read: [],
    fs_write: [],
    fs_delete: [],
    net_connect: [],
    net_listen: [],
    proc_spawn: [],
    env_read: [],
    env_write: [],
    secret_use: [],
    session_write: false,
    journal_read: false,
    time: false,
    auto_apply: "never",
    opaque: "deny",
    hermetic: false,
    sandbox: true,
    approve_in_client: false,
    writable_protected: [],
    approver: false,
    self_approve: [],
    ...overrides,
  };
}

/** The local human principal of this test process (G-TRUST-2). */
export const LOCAL_HUMAN = `uid:${Deno.uid()}`;

/**
 * The resolved policy of a sandboxed agent that may read and write `proj` and nothing else, for
 * tests that drive the sandbox's modules without a kernel.
 */
export function projectSandboxPolicy(proj: string): PrincipalPolicy {
  return {
    ...policyFor(defaultPolicy(), "agent:a", "uid:0")!,
    fs_read: [`${proj}/**`],
    fs_write: [`${proj}/**`],
    fs_delete: [],
    net_connect: [],
    net_listen: [],
    sandbox: true,
    hermetic: false,
  };
}

/** An agent that may run anything, in grant unasked; without `sandbox` (writePolicy: unsandboxed). */
export const RUNNER = { proc_spawn: ["*"], opaque: "allow", auto_apply: "in-grant" };

/** What a sandboxed test agent may do besides its `fs` grants: run anything, in grant unasked. */
export const AGENT_RIGHTS = {
  proc_spawn: ["*"],
  opaque: "allow",
  auto_apply: "in-grant",
  session_write: true,
  env_read: ["*"],
  env_write: ["*"],
  sandbox: true,
};

/** A sandboxed agent that may read, write and delete in `~/proj` (its project). */
export const PROJECT_AGENT = {
  fs: { read: ["~/proj/**"], write: ["~/proj/**"], delete: ["~/proj/**"] },
  ...AGENT_RIGHTS,
};

/**
 * A sandboxed agent that may run anything and read and write below each of `dirs`: its test's own
 * directories (below /tmp, where its private /tmp shows through only there). Not all of /tmp: while
 * its sandbox is up, the kernel protects every repository below its write roots (P-SBX-6) and
 * holds the missing `commondir` and `config.worktree` of each with a placeholder, and below /tmp
 * those are other tests' (the other part of scripts/test.sh, other worktrees' runs): a test
 * listing its `.git` found them, a removal of its tree met one made after it had emptied the
 * `.git` (ENOTEMPTY).
 */
export function dirAgent(...dirs: string[]) {
  const roots = dirs.map((dir) => `${dir}/**`);
  return { fs: { read: roots, write: roots }, ...AGENT_RIGHTS };
}

/**
 * A sandboxed agent ({@link dirAgent}) whose irreversible work below `dir` needs approval, which
 * its client may give.
 */
export function asksInClient(dir: string) {
  const agent = dirAgent(dir);
  return {
    ...agent,
    fs: { ...agent.fs, delete: [`${dir}/**`] },
    auto_apply: "reversible",
    approve_in_client: true,
  };
}

/**
 * Writes `principals` as a JSONC Leash file (with a comment and trailing commas) at `target`, or
 * at `leash.jsonc` in a sandbox; creates missing parent directories and returns the path. An
 * entry that does not say `sandbox` gets `"sandbox": false`, so a test that is not about the
 * bubblewrap sandbox behaves the same on hosts with and without it (P-SBX-2).
 */
export async function writePolicy(target: Sandbox | string, principals: Rec): Promise<string> {
  const path = typeof target === "string" ? target : `${target.dir}/leash.jsonc`;
  await Deno.mkdir(path.replace(/\/[^/]*$/, ""), { recursive: true });
  const entries = Object.fromEntries(
    Object.entries(principals).map(([name, entry]) => [name, { sandbox: false, ...entry as Rec }]),
  );
  const body = JSON.stringify({ principal: entries }, null, 2).replace(/\n(\s*)}/g, ",\n$1}");
  await Deno.writeTextFile(path, `// test policy\n${body}\n`);
  return path;
}

/** Subcommands that connect to a kernel by the socket rule (K-CLI-3, the relay). */
const CONNECTING = new Set(["approvals", "approve", "deny", "connect"]);

/**
 * `args` of the kernel CLI, on macOS with the sandbox's default socket made explicit for a
 * subcommand that connects and names no socket or session (as {@link Sandbox.env} does for the
 * facade; see DARWIN_RULE).
 */
function sandboxSocketArgs(box: Sandbox, args: string[]): string[] {
  if (!DARWIN_RULE || !CONNECTING.has(args[0])) return args;
  const named = args.some((a) => /^--(socket|session)(=|$)/.test(a));
  return named ? args : [...args, "--socket", box.socket()];
}

/** What a CLI run printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `bin/shoal-kernel args` as a process in the sandbox environment (plus `extraEnv`). */
export async function kernelCli(
  box: Sandbox,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<CliResult> {
  const out = await new Deno.Command(KERNEL_BIN, {
    args: sandboxSocketArgs(box, args),
    env: box.env(extraEnv),
    clearEnv: true,
    cwd: box.dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/**
 * Creates a token (of `ttlSeconds` when given) in the sandbox's state dir as `shoal-kernel token
 * create <principal> <profile>` does, with the same code in this process: a CLI process per token
 * took 1-2 s of a loaded 2-core host, in hundreds of tests' set-ups (the command itself is run
 * by tests/kernel/cli/token_test.ts). Returns its id and bearer secret.
 */
export function createToken(
  box: Sandbox,
  principal: string,
  profile = "test",
  ttlSeconds?: number,
): Promise<{ id: string; secret: string }> {
  const dir = stateDir(undefined, box.env());
  ensurePrivateDir(dir);
  return Promise.resolve(new TokenStore(dir).create(principal, profile, [], ttlSeconds));
}
