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

/** The parts of a `.git` directory that git runs or reads as configuration. */
export const PROTECTED_GIT_PARTS: readonly string[] = [".git/hooks", ".git/config"];

/** Whether `name` is one a policy may lift with `writable_protected`. */
export function isProtectedName(name: string): boolean {
  return PROTECTED_FILES.includes(name) || PROTECTED_DIRS.includes(name) ||
    PROTECTED_GIT_PARTS.includes(name);
}
