/**
 * The `TMPDIR` of a sandboxed run (M-ONB-3): a kernel started from a terminal that sets one
 * (pam_tmpdir's `/tmp/user/1000`, `~/tmp`), or by a client passing its own, gave every session
 * that value, and inside an agent's sandbox it named a directory the sandbox does not show: the
 * agent's first `mktemp` failed (`No such file or directory`), and with it every build and test
 * tool that writes temporary files there. Such a run gets the sandbox's own private `/tmp`
 * instead, for that run only: the session keeps its value, as the run's state is diffed against
 * the environment it was given.
 */
import { isUnder, PRIVATE_TMP, type SandboxView, shows } from "./view.ts";

/** Whether the sandbox of `view` shows the host directory `dir` (symlink-free), writable. */
function writableInside(dir: string, view: SandboxView): boolean {
  if (view.masks.some((mask) => isUnder(dir, mask.path))) return false;
  return view.mounts.some((mount) => mount.writable && shows(mount.path, dir));
}

/**
 * Sets `TMPDIR` in `env`, a sandboxed run's environment, to the sandbox's private /tmp when it
 * names a directory the sandbox of `view` does not show writable; leaves it as it is otherwise,
 * and when it is unset or empty.
 */
export function sandboxTmpdir(env: Map<string, string>, view: SandboxView): void {
  const value = env.get("TMPDIR");
  if (value === undefined || value === "") return;
  const dir = value.replace(/(?<=.)\/+$/, "");
  if (dir === PRIVATE_TMP) return;
  let real: string | null = null;
  try {
    if (dir.startsWith("/") && Deno.statSync(dir).isDirectory) real = Deno.realPathSync(dir);
  } catch {
    // gone on the host: not inside either
  }
  if (real === null || !writableInside(real, view)) env.set("TMPDIR", PRIVATE_TMP);
}
