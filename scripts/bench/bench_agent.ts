/**
 * What the in-process sandbox benches share: a temporary HOME holding a project, and the sandbox
 * setting and policy of an agent granted that project to read and write, nothing else.
 */
import { type SandboxSetting } from "../../src/kernel/policy/principal_sandbox.ts";
import { detectSandbox, type SandboxHost } from "../../src/kernel/sandbox/probe.ts";
import { defaultPolicy, policyFor, type PrincipalPolicy } from "../../src/kernel/policy/leash.ts";
import type { ShellState } from "../../src/kernel/bash/shell_state.ts";
import type { ScratchPool } from "../../src/kernel/bash/scratch_pool.ts";
import type { BashRun, ByteSink } from "../../src/kernel/shells/run.ts";
import type { WarmShell } from "../../src/kernel/shells/warm_shell.ts";
import type { Resident } from "../../src/kernel/sandbox/resident.ts";

/** A bench's agent: its directories, sandbox setting and policy. */
export interface BenchAgent {
  host: SandboxHost;
  /** The temporary directory holding everything (remove it at the end). */
  dir: string;
  home: string;
  /** `home/proj`, the project granted. */
  proj: string;
  setting: SandboxSetting;
  policy: PrincipalPolicy;
}

/**
 * A new bench agent in a temporary directory named with `prefix`, with `bash` as its shell; exits
 * the process, saying so, where no usable bubblewrap is (tier D: nothing to measure).
 */
export async function benchAgent(prefix: string, bash: string): Promise<BenchAgent> {
  const host = await detectSandbox(Deno.env.get("PATH") ?? "/usr/bin:/bin", bash);
  if (host.tier !== "B") {
    console.log("note: no usable bubblewrap on this host (tier D): nothing to measure");
    Deno.exit(0);
  }
  const dir = await Deno.makeTempDir({ prefix });
  const home = `${dir}/home`;
  const proj = `${home}/proj`;
  await Deno.mkdir(proj, { recursive: true });
  await Deno.mkdir(`${dir}/state`);
  const setting: SandboxSetting = {
    host,
    home,
    masked: [`${dir}/state`],
    gitIdentity: () => null,
    gitExcludes: () => null,
  };
  const policy = {
    ...policyFor(defaultPolicy(), "uid:0", "uid:0")!,
    fs_read: ["~/proj/**"],
    fs_write: ["~/proj/**"],
    fs_delete: [],
    net_connect: [],
    net_listen: [],
    sandbox: true,
    hermetic: false,
  };
  return { host, dir, home, proj, setting, policy };
}

/** The shell a bench runs its source with, and where its cold runs take scratch directories. */
export interface BenchShell {
  bash: string;
  bashVariables: ReadonlySet<string>;
  state: ShellState;
  scratch: ScratchPool;
}

/** A `runBash` of SRC by SHELL in RESIDENT (null: unconfined), handed to WARM when given. */
export function benchRun(
  shell: BenchShell,
  src: string,
  resident: Resident | null,
  warm: WarmShell | null,
  stdout: ByteSink,
): BashRun {
  return {
    ...shell,
    src,
    warm,
    stdout,
    stderr: { write: () => Promise.resolve() },
    sandbox: resident === null ? null : () => Promise.resolve(resident),
  };
}
