/**
 * The human's git identity inside a sandbox. `git commit` needs `user.name` and `user.email`,
 * which live in ~/.gitconfig, hidden with the rest of HOME (P-SBX-3): every agent's commit failed
 * with "Author identity unknown". The kernel copies those two settings and `init.defaultBranch`,
 * and nothing else of the human's git configuration (credential helpers, URL rewrites that carry
 * tokens, aliases and programs git would run), to a file of its own, shown read-only at
 * `~/.gitconfig` in a view that does not show the human's: git reads it as the global level, so a
 * repository's own identity still wins.
 */
import { isUnder, OWN_MOUNTS, type SandboxView } from "./view.ts";

/** What git lists of the human's global configuration: these settings and no other. */
const COPIED = "^(user\\.(name|email)|init\\.defaultbranch)$";

/** A value as a git config file quotes it. */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\t/g, "\\t")}"`;
}

/**
 * The config file text of the identity settings in `listing` (`git config -z` output: `key\nvalue`
 * records ended by NUL), the last of each key winning as in git; null when none is set.
 */
export function identityConfig(listing: string): string | null {
  const settings = new Map<string, string>();
  for (const record of listing.split("\0")) {
    const cut = record.indexOf("\n");
    if (cut < 0) continue;
    const value = record.slice(cut + 1);
    if (!/[\n\0]/.test(value)) settings.set(record.slice(0, cut), value);
  }
  if (settings.size === 0) return null;
  const lines: string[] = [];
  for (const section of ["user", "init"]) {
    const keys = [...settings].filter(([key]) => key.startsWith(`${section}.`));
    if (keys.length === 0) continue;
    lines.push(`[${section}]`);
    for (const [key, value] of keys) {
      lines.push(`\t${key.slice(section.length + 1)} = ${quoted(value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/**
 * A function giving the host path of the identity file, written in `stateDir` from the human's
 * global git configuration when first asked (one `git config`, run with the kernel's environment
 * outside any repository), or null when git is missing or sets none of it.
 */
export function gitIdentityFile(stateDir: string): () => string | null {
  let file: string | null | undefined;
  return () => {
    if (file !== undefined) return file;
    file = null;
    try {
      const listed = new Deno.Command("git", {
        args: ["config", "-z", "--global", "--includes", "--get-regexp", COPIED],
        cwd: "/",
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      const text = identityConfig(new TextDecoder().decode(listed.stdout));
      if (text === null) return file;
      const path = `${stateDir}/git-identity`;
      Deno.writeTextFileSync(path, text, { mode: 0o600 });
      Deno.chmodSync(path, 0o600);
      file = path;
    } catch {
      // no git: nothing to show
    }
    return file;
  };
}

/**
 * `view` with `identity` (a host file) shown read-only at `home`'s `.gitconfig`, unless the view
 * shows or masks that place already, or there is no identity or home.
 */
export function withGitIdentity(
  view: SandboxView,
  home: string | undefined,
  identity: string | null,
): SandboxView {
  if (identity === null || home === undefined) return view;
  let real: string;
  try {
    real = Deno.realPathSync(home);
  } catch {
    return view;
  }
  const path = `${real === "/" ? "" : real}/.gitconfig`;
  if (OWN_MOUNTS.some((own) => isUnder(path, own))) return view;
  if (view.mounts.some((m) => isUnder(path, m.path))) return view;
  if (view.masks.some((mask) => isUnder(path, mask.path))) return view;
  return { ...view, files: [{ path, source: identity }] };
}
