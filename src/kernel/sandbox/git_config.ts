/**
 * What a repository's configuration says that the protection scan needs (P-SBX-6): where git
 * runs hooks from, and which other files it reads as configuration.
 */
import { readSmallFile } from "../bash/small_file.ts";
import { normalizePath } from "../bash/lexical_path.ts";

/** Largest repository config file (or file it includes) read ({@link gitSettings}). */
const CONFIG_READ_LIMIT = 1024 * 1024;

/** How deep git follows includes (its own limit is 10). */
const INCLUDE_DEPTH = 10;

/** What the scan needs of a repository's configuration ({@link gitSettings}). */
export interface GitSettings {
  /** The last `core.hooksPath` set, as written, or null. */
  hooksPath: string | null;
  /** The files included (`include.path`, `includeIf.*.path`), as absolute paths. */
  includes: string[];
}

/** A config value as git reads it: quotes and a trailing comment dropped, escapes undone. */
function configValue(raw: string): string {
  const value = raw.replace(/^"((?:[^"\\]|\\.)*)".*$|^([^#;]*).*$/, "$1$2").trim();
  return value.replace(/\\(.)/g, "$1");
}

/** Largest /etc/passwd read for a `~user` path. */
const PASSWD_READ_LIMIT = 4 * 1024 * 1024;

/**
 * `path` with a leading `~` or `~user` replaced by that home directory, as git expands a path in
 * its config (`home` is `~`'s, git's HOME), or null when that user is not in /etc/passwd; any
 * other path as it is.
 */
export function expandHome(path: string, home: string | undefined): string | null {
  const match = /^~([^/]*)(\/.*)?$/.exec(path);
  if (match === null) return path;
  const [, user, rest = ""] = match;
  const dir = user === ""
    ? home
    : readSmallFile("/etc/passwd", PASSWD_READ_LIMIT)?.split("\n").map((line) => line.split(":"))
      .find((fields) => fields[0] === user)?.[5];
  return dir === undefined ? null : normalizePath(`${dir}${rest}`);
}

/**
 * What a repository's config files (`files`, in the order git reads them) set that the scan
 * needs: the last `core.hooksPath` (git runs the hooks there instead of `.git/hooks`; husky sets
 * `.husky`), and every file they include (`include.path`, and `includeIf.*.path` whatever its
 * condition), followed in place as git does, each relative to the file naming it. A path under
 * `~` is expanded as git does ({@link expandHome}, `home` being HOME): a project below HOME is
 * reached that way too.
 */
export function gitSettings(files: readonly string[], home: string | undefined): GitSettings {
  const out: GitSettings = { hooksPath: null, includes: [] };
  const read = (file: string, depth: number) => {
    const text = readSmallFile(file, CONFIG_READ_LIMIT);
    if (text === null) return;
    let section = "";
    for (const raw of text.split("\n")) {
      let line = raw.trim();
      if (line.startsWith("[")) {
        // `[core]`, `[includeIf "gitdir:…"]`; an entry may follow on the same line
        const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]/.exec(line);
        section = header === null ? "" : header[1].toLowerCase();
        line = header === null ? "" : line.slice(header[0].length).trim();
      }
      const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
      if (entry === null) continue;
      const key = `${section}.${entry[1].toLowerCase()}`;
      if (key === "core.hookspath") out.hooksPath = expandHome(configValue(entry[2]), home);
      else if (key === "include.path" || key === "includeif.path") {
        const path = expandHome(configValue(entry[2]), home);
        if (path === null || path === "" || depth >= INCLUDE_DEPTH) continue;
        const at = normalizePath(
          path.startsWith("/") ? path : `${file.slice(0, file.lastIndexOf("/"))}/${path}`,
        );
        out.includes.push(at);
        read(at, depth + 1);
      }
    }
  };
  for (const file of files) read(file, 0);
  return out;
}

/**
 * The config files git reads before a repository's own, in its order: the system's
 * (`/etc/gitconfig`, or `GIT_CONFIG_SYSTEM`; none with `GIT_CONFIG_NOSYSTEM`), then the user's
 * (`GIT_CONFIG_GLOBAL`, else `$XDG_CONFIG_HOME/git/config` or `~/.config/git/config`, then
 * `~/.gitconfig`), as the kernel's environment names them: a relative `core.hooksPath` there
 * (`git config --global core.hooksPath .githooks`) names a directory in every repository.
 */
export function userConfigFiles(env: (name: string) => string | undefined): string[] {
  const set = (name: string) => env(name) || undefined;
  const files = set("GIT_CONFIG_NOSYSTEM") ? [] : [set("GIT_CONFIG_SYSTEM") ?? "/etc/gitconfig"];
  const global = set("GIT_CONFIG_GLOBAL");
  if (global !== undefined) return [...files, global];
  const home = set("HOME");
  const xdg = set("XDG_CONFIG_HOME") ?? (home === undefined ? undefined : `${home}/.config`);
  if (xdg !== undefined) files.push(`${xdg}/git/config`);
  if (home !== undefined) files.push(`${home}/.gitconfig`);
  return files;
}
