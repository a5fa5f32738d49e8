/**
 * The human's git identity inside a sandbox. `git commit` needs `user.name` and `user.email`,
 * which live in ~/.gitconfig, hidden with the rest of HOME (P-SBX-3): every agent's commit failed
 * with "Author identity unknown". The kernel copies those two settings and `init.defaultBranch`,
 * and nothing else of the human's git configuration (credential helpers, URL rewrites that carry
 * tokens, aliases and programs git would run), to a file of its own, shown read-only at
 * `~/.gitconfig` in a view that does not show the human's: git reads it as the global level, so a
 * repository's own identity still wins.
 */
import { surelyMissing } from "../bash/surely_missing.ts";
import { isUnder, OWN_MOUNTS, type SandboxView } from "./view.ts";

/** What git lists of the human's global configuration: these settings and no other. */
const COPIED = "^(user\\.(name|email)|init\\.defaultbranch)$";

/** How long the kernel's start waits for `git config` (it takes ~10 ms). */
const GIT_WAIT_MS = 2000;

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

/** `git config` listing the identity settings of the global level, outside any repository. */
function listing(signal?: AbortSignal): Deno.Command {
  return new Deno.Command("git", {
    args: ["config", "-z", "--global", "--includes", "--get-regexp", COPIED],
    cwd: "/",
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    signal,
  });
}

/** The listing's text, or null when git failed (exit 1: none of the settings is set). */
function listed(output: Deno.CommandOutput): string | null {
  return output.success ? new TextDecoder().decode(output.stdout) : null;
}

/** The files git reads as the global level (git-config(1), FILES): where the identity changes. */
function globalFiles(env: Record<string, string>): string[] {
  if (env.GIT_CONFIG_GLOBAL) return [env.GIT_CONFIG_GLOBAL];
  const xdg = env.XDG_CONFIG_HOME || (env.HOME ? `${env.HOME}/.config` : "");
  return [...(env.HOME ? [`${env.HOME}/.gitconfig`] : []), ...(xdg ? [`${xdg}/git/config`] : [])];
}

/** What tells a change of `files`: each one's identity, size and times, or its absence. */
function stamp(files: readonly string[]): string {
  return files.map((file) => {
    if (surelyMissing(file)) return "-"; // one absent for most humans: no NotFound thrown
    try {
      const s = Deno.statSync(file);
      return `${s.dev}:${s.ino}:${s.size}:${s.mtime?.getTime()}:${s.ctime?.getTime()}`;
    } catch {
      return "-";
    }
  }).join("|");
}

/** The human's git identity settings as listed once, and the global files they came from. */
export interface GitListing {
  files: readonly string[];
  /** The files' {@link stamp} before the listing was made. */
  seen: string;
  /** `git config -z` output, or null (no git, none set). */
  text: string | null;
}

/**
 * The listing of the identity settings, made while the kernel starts (`env` is the kernel's): run
 * when first needed, its ~10 ms were part of the first sandboxed exec (issue 33).
 */
export async function listGitIdentity(env: Record<string, string>): Promise<GitListing> {
  const files = globalFiles(env);
  const seen = stamp(files);
  try {
    // an `include.path` naming a FIFO would hold the kernel's start for good
    return { files, seen, text: listed(await listing(AbortSignal.timeout(GIT_WAIT_MS)).output()) };
  } catch {
    return { files, seen, text: null }; // no git, or it took too long: nothing to show
  }
}

/**
 * A function giving the host path of the identity file in `stateDir`, written from `first` when
 * first asked, or null when git is missing or sets none of it. Once the human changes a global git
 * file (a name set after the kernel started, an email changed), the next sandboxed run lists the
 * settings again and gets the new identity.
 */
export function gitIdentityFile(stateDir: string, first: GitListing): () => string | null {
  let { seen, text } = first;
  let file: string | null | undefined;
  return () => {
    const now = stamp(first.files);
    if (now !== seen) {
      seen = now;
      file = undefined;
      try {
        text = listed(listing().outputSync());
      } catch {
        text = null;
      }
    }
    if (file !== undefined) return file;
    file = null;
    const config = text === null ? null : identityConfig(text);
    if (config === null) return file;
    try {
      const path = `${stateDir}/git-identity`;
      Deno.writeTextFileSync(path, config, { mode: 0o600 });
      Deno.chmodSync(path, 0o600);
      file = path;
    } catch {
      // an unwritable state directory: nothing to show
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
