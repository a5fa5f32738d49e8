/**
 * Git's global excludes inside a sandbox: its placeholders (P-SBX-6), the empty directories that
 * hold absent protected names at a write root, are untracked directories to git, which `git clean
 * -fd` and `git stash -u` (which cleans what it stashed) tried to remove: each failed with
 * "Device or resource busy" and exited 1, and `git stash -u && git stash pop` left the work stashed
 * and in the tree at once. Listed as ignored, git leaves them alone, as it does the human's ignored
 * files; `git clean -x` still meets them.
 */
import { createHash } from "node:crypto";
import { repositoryRoot } from "./repository_root.ts";
import { isUnder, OWN_MOUNTS, type SandboxView } from "./view.ts";

/**
 * The excludes file text naming the placeholder directories of `view`, each anchored at the
 * repository that holds it (its write root when none does yet: `git init` there comes later), or
 * null when it has none.
 */
export function placeholderExcludes(view: SandboxView): string | null {
  const lines = new Set<string>();
  const roots = new Map<string, string>();
  for (const p of view.protection.paths) {
    if (!p.absent || p.text !== undefined) continue;
    const dir = p.path.slice(0, p.path.lastIndexOf("/")) || "/";
    let root = roots.get(dir);
    if (root === undefined) roots.set(dir, root = repositoryRoot(dir) ?? dir);
    lines.add(`${p.path.slice(root === "/" ? 0 : root.length)}/`);
  }
  return lines.size === 0 ? null : `${[...lines].sort().join("\n")}\n`;
}

/**
 * A function giving the host path of a file in `stateDir` holding an excludes text, written once
 * per distinct text, or null when it cannot be written.
 */
export function gitExcludesFile(stateDir: string): (text: string) => string | null {
  const written = new Map<string, string | null>();
  return (text) => {
    const known = written.get(text);
    if (known !== undefined) return known;
    const name = `git-excludes-${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
    let path: string | null = `${stateDir}/${name}`;
    try {
      Deno.writeTextFileSync(path, text, { mode: 0o600 });
      Deno.chmodSync(path, 0o600);
    } catch {
      path = null; // an unwritable state directory: git meets the placeholders as before
    }
    written.set(text, path);
    return path;
  };
}

/**
 * `view` with the excludes file of its placeholders shown read-only where git reads the global
 * excludes by default (`~/.config/git/ignore`), unless the view shows or masks that place.
 */
export function withGitExcludes(
  view: SandboxView,
  home: string | undefined,
  file: (text: string) => string | null,
): SandboxView {
  const text = placeholderExcludes(view);
  if (text === null || home === undefined) return view;
  let real: string;
  try {
    real = Deno.realPathSync(home);
  } catch {
    return view;
  }
  const path = `${real === "/" ? "" : real}/.config/git/ignore`;
  if (OWN_MOUNTS.some((own) => isUnder(path, own))) return view;
  if (view.mounts.some((m) => isUnder(path, m.path))) return view;
  if (view.masks.some((mask) => isUnder(path, mask.path))) return view;
  const source = file(text);
  if (source === null) return view;
  return { ...view, files: [...(view.files ?? []), { path, source }] };
}
