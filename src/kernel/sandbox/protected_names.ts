/**
 * Protected names (P-SBX-6): files and directories inside a write root that a later, unconfined
 * program runs or loads as the local human, so a sandboxed agent may not write them.
 */

/** Protected file names, read-only at every depth of a write root. */
export const PROTECTED_FILES: readonly string[] = [
  ".gitconfig",
  ".gitmodules",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".envrc",
  ".mcp.json",
];

/** Protected directory names, read-only with everything below them. */
export const PROTECTED_DIRS: readonly string[] = [
  ".vscode",
  ".idea",
  ".cursor",
  ".claude",
  ".devcontainer",
];

/**
 * The parts of a `.git` directory that git runs or reads as configuration: `config.worktree` too,
 * which git reads as fully as `config` once per-worktree config is on (`git sparse-checkout init`
 * turns it on).
 */
export const PROTECTED_GIT_PARTS: readonly string[] = [
  ".git/hooks",
  ".git/config",
  ".git/config.worktree",
];

/** Whether `name` is one a policy may lift with `writable_protected`. */
export function isProtectedName(name: string): boolean {
  return PROTECTED_FILES.includes(name) || PROTECTED_DIRS.includes(name) ||
    PROTECTED_GIT_PARTS.includes(name);
}

/**
 * The `.git` part a path below a `.git` directory (`rest`, its segments after `.git`) falls on:
 * `hooks`, `config` or `config.worktree` of the repository itself or of a submodule's
 * (`modules/NAME/…`, NAME may hold `/`), else null.
 */
function gitPart(rest: readonly string[]): string | null {
  if (rest[0] !== "modules") {
    return PROTECTED_GIT_PARTS.includes(`.git/${rest[0]}`) ? `.git/${rest[0]}` : null;
  }
  if (rest.includes("hooks")) return ".git/hooks";
  const last = rest[rest.length - 1];
  return rest.length > 2 && (last === "config" || last === "config.worktree")
    ? `.git/${last}`
    : null;
}

/**
 * Whether the path `segments` below a write root falls on a protected name not `lifted`: a
 * protected file, anything at or below a protected directory, or `.git/hooks`, `.git/config`
 * (a submodule's, in `.git/modules/`, too).
 */
export function fallsOnProtected(segments: readonly string[], lifted: readonly string[]): boolean {
  return segments.some((segment, i) => {
    if (segment === ".git" && i + 1 < segments.length) {
      const part = gitPart(segments.slice(i + 1));
      return part !== null && !lifted.includes(part);
    }
    return (PROTECTED_FILES.includes(segment) || PROTECTED_DIRS.includes(segment)) &&
      !lifted.includes(segment);
  });
}
