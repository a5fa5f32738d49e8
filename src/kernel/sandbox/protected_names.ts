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
  // VS Code's Dev Containers read it as they read .devcontainer/ (initializeCommand runs on the host)
  ".devcontainer.json",
  // ripgrep runs the --pre program it names, where RIPGREP_CONFIG_PATH points (sandbox-runtime's list)
  ".ripgreprc",
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
 * The parts of a `.git` directory that git runs or reads as configuration: `commondir` names the
 * directory git takes `config` and `hooks` from instead, and `config.worktree` is read as config
 * once the repository's config sets `extensions.worktreeConfig` (`git sparse-checkout` sets it).
 */
export const PROTECTED_GIT_PARTS: readonly string[] = [
  ".git/hooks",
  ".git/config",
  ".git/commondir",
  ".git/config.worktree",
];

/** The parts of a linked worktree's git directory (`.git/worktrees/ID/`) git reads as config. */
const WORKTREE_GIT_PARTS: readonly string[] = ["commondir", "config.worktree"];

/** Whether `name` is one a policy may lift with `writable_protected`. */
export function isProtectedName(name: string): boolean {
  return PROTECTED_FILES.includes(name) || PROTECTED_DIRS.includes(name) ||
    PROTECTED_GIT_PARTS.includes(name);
}

/**
 * The `.git` part a path below a `.git` directory (`rest`, its segments after `.git`) falls on:
 * one of {@link PROTECTED_GIT_PARTS} of the repository itself or of a submodule's
 * (`modules/NAME/…`, NAME may hold `/`), or `commondir`, `config.worktree` of a linked worktree's
 * (`worktrees/ID/…`), else null.
 */
function gitPart(rest: readonly string[]): string | null {
  if (rest[0] === "worktrees") {
    const part = rest.length === 3 && WORKTREE_GIT_PARTS.includes(rest[2]) ? rest[2] : null;
    return part === null ? null : `.git/${part}`;
  }
  if (rest[0] !== "modules") {
    return PROTECTED_GIT_PARTS.includes(`.git/${rest[0]}`) ? `.git/${rest[0]}` : null;
  }
  if (rest.includes("hooks")) return ".git/hooks";
  const last = `.git/${rest[rest.length - 1]}`;
  return rest.length > 2 && PROTECTED_GIT_PARTS.includes(last) ? last : null;
}

/**
 * Whether the path `segments` below a write root falls on a protected name not `lifted`: a
 * protected file, anything at or below a protected directory, or a part of a `.git` directory
 * ({@link gitPart}).
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
