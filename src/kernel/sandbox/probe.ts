/** Finding and probing the host's sandbox once at kernel start (P-SBX-1). */
import { delimiter } from "node:path";
import { CONFINEMENT_FLAGS } from "./command.ts";

/** What the host offers: tier B with the bubblewrap to run, or tier D (no sandbox). */
export type SandboxHost = { tier: "B"; bwrap: string } | { tier: "D"; bwrap: null };

/** The host without a sandbox. */
export const NO_SANDBOX: SandboxHost = { tier: "D", bwrap: null };

/** The first executable `bwrap` on `path` (a `PATH` value), or null. */
function findBwrap(path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir.startsWith("/")) continue;
    try {
      const info = Deno.statSync(`${dir}/bwrap`);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return `${dir}/bwrap`;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/**
 * Looks for `bwrap` on `path` and runs it once with the flags every sandboxed run uses over a
 * read-only root; tier B only when that run succeeds (a kernel without user namespaces, or in a
 * container that forbids them, gets tier D and works as before). Off Linux (`os`, a
 * `Deno.build.os` value) nothing is looked for or run: tier D (no Seatbelt profile yet).
 */
export async function detectSandbox(
  path: string,
  os: string = Deno.build.os,
): Promise<SandboxHost> {
  if (os !== "linux") return NO_SANDBOX;
  const bwrap = findBwrap(path);
  if (bwrap === null) return NO_SANDBOX;
  try {
    const probe = await new Deno.Command(bwrap, {
      args: [
        ...CONFINEMENT_FLAGS,
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "true",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return probe.success ? { tier: "B", bwrap } : NO_SANDBOX;
  } catch {
    return NO_SANDBOX;
  }
}
