/** Whether a PTY's program can be started: the `execvp` lookup, seen from inside a sandbox. */
import { isAbsolute, join, resolve } from "node:path";
import { type SandboxView, visibleIn } from "../sandbox/view.ts";
import { isExecutableFile } from "../bash/executable_file.ts";

/**
 * Whether `execvp` in the child would find `cmd` (PATH from the child's env, glibc default when
 * unset). In a sandbox only what its `view` shows counts: a host file the run cannot see is as
 * missing as inside, so the answer tells an agent nothing about files outside its grants.
 */
export function programExists(
  cmd: string,
  cwd: string,
  env: Record<string, string>,
  view: SandboxView | null,
): boolean {
  const found = (path: string) =>
    isExecutableFile(path) && (view === null || visibleIn(view, path));
  if (cmd === "") return false;
  if (cmd.includes("/")) return found(resolve(cwd, cmd));
  const dirs = (env.PATH ?? "/bin:/usr/bin").split(":");
  return dirs.some((dir) => found(join(isAbsolute(dir) ? dir : resolve(cwd, dir), cmd)));
}
