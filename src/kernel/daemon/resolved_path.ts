/**
 * The kernel's own paths (state directory, policy file) as they resolve at start. Resolved once,
 * they stay the files the kernel started with: a symlink on the way to them that a sandboxed
 * agent may replace (one inside its write grant) cannot redirect the kernel's later reads of its
 * policy or tokens to files of the agent's.
 */
import { basename, dirname } from "node:path";

/**
 * The absolute `path` with its existing part resolved through symlinks; the part that does not
 * exist yet (a policy file made later) is kept as written below it.
 */
export function resolvedPath(path: string): string {
  const rest: string[] = [];
  for (let head = path;; head = dirname(head)) {
    try {
      const real = Deno.realPathSync(head);
      return [real === "/" ? "" : real, ...rest.reverse()].join("/") || "/";
    } catch {
      if (dirname(head) === head) return path;
      rest.push(basename(head));
    }
  }
}
