/** Test helpers: the kernel's deno process, its memory from /proc, and an agent with a policy. */
import { REPO, type Sandbox, sandbox } from "../mcp/_facade.ts";
import { KERNEL_BIN, startKernel, type TestKernel } from "./_kernel.ts";

/** Memory figures of a process from /proc/<pid>/status, in KiB. */
export interface Memory {
  /** Resident set size now (VmRSS). */
  rss: number;
  /** Peak resident set size since the process started (VmHWM). */
  hwm: number;
}

/** VmRSS and VmHWM of `pid` in KiB. */
export function memoryKiB(pid: number): Memory {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
    if (!m) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(m[1]);
  };
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** The pid of the deno process serving `socket` (found by its command line, not the sh wrapper). */
export function kernelPid(socket: string): number {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      const exe = Deno.readLinkSync(`/proc/${entry.name}/exe`);
      if (argv.includes(socket) && /\/deno$/.test(exe)) found.push(Number(entry.name));
    } catch {
      // exited meanwhile, or not ours to inspect
    }
  }
  if (found.length !== 1) throw new Error(`expected one kernel process, found ${found}`);
  return found[0];
}

/** Whether `/proc/<pid>` exists and is not a zombie. */
export function processLive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) [ZX]/s.test(stat);
  } catch {
    return false;
  }
}

/** A kernel started with a policy file, and a bearer token for the agent principal. */
export interface AgentKernel {
  kernel: TestKernel;
  /** The bearer secret of `principal`. */
  token: string;
}

/**
 * Starts a kernel in a fresh sandbox whose policy file holds `policy` for `principal`, after
 * creating a token for that principal with `shoal-kernel token create` in the kernel's state dir.
 */
export async function startKernelWithAgent(
  principal: string,
  policy: Record<string, unknown>,
): Promise<AgentKernel> {
  const box: Sandbox = await sandbox();
  try {
    const token = await createToken(box, principal);
    const file = `${box.dir}/leash.jsonc`;
    await Deno.writeTextFile(file, JSON.stringify({ principal: { [principal]: policy } }));
    const kernel = await startKernel(["--policy", file], box);
    return { kernel, token };
  } catch (e) {
    await box.cleanup();
    throw e;
  }
}

/** Runs `shoal-kernel token create <principal> <principal>` for the sandbox's state dir. */
async function createToken(box: Sandbox, principal: string): Promise<string> {
  const out = await new Deno.Command(KERNEL_BIN, {
    args: ["token", "create", principal, principal, "--state-dir", `${box.dir}/state/shoal`],
    env: box.env(),
    clearEnv: true,
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`token create failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout).trim();
}
