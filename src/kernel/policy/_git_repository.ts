/**
 * Whether git would run code the repository or user configured (issue 14): `core.fsmonitor` runs
 * on `git status`, diff drivers and textconv on `git diff`/`log -p`/`show`/`blame`, filters on
 * checkout and add, hooks on commit, merge, checkout… git stays exact only when none of that is
 * configured: the config files it reads hold no key that names a program, and (for subcommands
 * that run hooks) the hooks directory holds no hook.
 */
import { readSmallFile } from "../bash/small_file.ts";

/**
 * Config keys (last part, lowercase) whose value is a program git runs on local work, or that
 * move it elsewhere. Programs git runs only for remotes (credential helpers, ssh, proxies) do not
 * count: every subcommand that talks to a remote is opaque anyway, except in a partial clone.
 */
const CODE_KEYS = new Set([
  "fsmonitor",
  "hookspath",
  "pager",
  "editor",
  "external",
  "textconv",
  "command",
  "clean",
  "smudge",
  "process",
  "driver",
  "program",
  "worktree",
  "difffilter",
  "alternaterefscommand",
  "cmd",
  // `gpg.ssh.defaultKeyCommand`: run by a signed commit or tag (gpg.format ssh, no signing key)
  "defaultkeycommand",
  // `pull.twohead`/`pull.octopus`: the strategy `git merge` uses when given none, a
  // `git-merge-NAME` found along PATH when not built in
  "twohead",
  "octopus",
  // a partial clone's promisor remote: reading a blob it lacks fetches it (`git log -p` runs
  // `git fetch origin`, connects and writes a pack)
  "promisor",
  "partialclone",
]);

/** Sections whose every key configures a program, or that pull in other files. */
const CODE_SECTIONS = new Set(["include", "includeif", "pager"]);

/** Whether setting config key (or section) `name` names a program git runs, or pulls in files. */
export function gitKeyRunsCode(name: string): boolean {
  const parts = name.toLowerCase().split(".");
  return CODE_SECTIONS.has(parts[0]) || CODE_KEYS.has(parts.at(-1)!);
}

/** A repository git would use from a directory. */
export interface Repository {
  /** The git directory (`.git` or what a `.git` file points at). */
  gitDir: string;
  /** The common directory (shared by worktrees): config and hooks live there. */
  commonDir: string;
  /** The work tree: the directory holding `.git`. */
  workTree: string;
}

/** The most entries of a hooks directory the analysis reads (git ships 14 samples). */
const HOOKS_READ_LIMIT = 1000;

/** The most of a git file (a config, a `.git` pointer) the analysis reads. */
const GIT_FILE_LIMIT = 1024 * 1024;

/**
 * The text of a file git reads, or null when it is no small regular file: a FIFO an agent put
 * there would block the kernel, /dev/zero fill its memory (`readSmallFile`).
 */
function readText(path: string): string | null {
  return readSmallFile(path, GIT_FILE_LIMIT);
}

/** Whether something is at `path` (a dangling symlink counts). */
export function present(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The repository git discovers from `dir` (walking up), or null when there is none. */
export function findRepository(dir: string): Repository | null {
  for (let current = dir;; current = current.slice(0, current.lastIndexOf("/")) || "/") {
    const dotGit = `${current === "/" ? "" : current}/.git`;
    let info: Deno.FileInfo | null = null;
    try {
      info = Deno.statSync(dotGit);
    } catch {
      // not here: look further up
    }
    const workTree = current;
    if (info?.isDirectory) return { gitDir: dotGit, commonDir: dotGit, workTree };
    if (info?.isFile) {
      const pointer = /^gitdir: (.*)$/m.exec(readText(dotGit) ?? "")?.[1]?.trim();
      if (pointer === undefined) return null;
      const gitDir = pointer.startsWith("/") ? pointer : `${current}/${pointer}`;
      const common = readText(`${gitDir}/commondir`)?.trim();
      const commonDir = common === undefined
        ? gitDir
        : common.startsWith("/")
        ? common
        : `${gitDir}/${common}`;
      return { gitDir, commonDir, workTree };
    }
    if (current === "/") return null;
  }
}

/** Why a git config text configures code, or null. Lines it does not understand count. */
function configReason(text: string, file: string, submodule = false): string | null {
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^\s+/, "");
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header !== null) {
      section = header[1].toLowerCase().split(".")[0];
      if (CODE_SECTIONS.has(section)) return `${file} has a [${section}] section`;
      const rest = line.slice(line.indexOf("]") + 1).trim();
      if (rest === "" || rest.startsWith("#") || rest.startsWith(";")) continue;
      return `${file} is not understood`;
    }
    const key = /^([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(line)?.[1]?.toLowerCase();
    if (key === undefined) continue;
    // a submodule's git directory names its work tree: core.worktree is every one's
    if (submodule && section === "core" && key === "worktree") continue;
    if (CODE_KEYS.has(key)) return `${file} sets ${section}.${key}`;
  }
  return null;
}

/**
 * Why git in `repo` may run configured code, or null: the repository, user (`home`, XDG) and
 * system config files, its submodules' (those below its `modules` and the `submodules` config
 * files given), and with `hooks` the hooks directory.
 */
export function gitRunsConfiguredCode(
  repo: Repository | null,
  home: string | undefined,
  env: Readonly<Record<string, string>>,
  hooks: boolean,
  submodules: readonly string[] = [],
): string | null {
  if (home === undefined) return "git reads configuration from an unknown HOME";
  const xdg = env.XDG_CONFIG_HOME ?? `${home}/.config`;
  const files = [`${home}/.gitconfig`, `${xdg}/git/config`, "/etc/gitconfig"];
  if (repo !== null) {
    files.push(`${repo.commonDir}/config`, `${repo.gitDir}/config.worktree`);
    const modules = submoduleConfigs(`${repo.commonDir}/modules`);
    if (modules === null) return `${repo.commonDir}/modules holds too many entries`;
    files.push(...modules, ...submodules);
  }
  for (const file of files) {
    const text = readText(file);
    if (text === null && present(file)) return `${file} cannot be read as a config file`;
    const submodule = repo !== null &&
      (file.startsWith(`${repo.commonDir}/modules/`) || submodules.includes(file));
    const reason = text === null ? null : configReason(text, file, submodule);
    if (reason !== null) return reason;
  }
  if (hooks && repo !== null) {
    try {
      let seen = 0;
      for (const entry of Deno.readDirSync(`${repo.commonDir}/hooks`)) {
        if (!entry.name.endsWith(".sample")) return `git hook ${entry.name}`;
        // a directory of a million samples (a repository an agent made) is not read on
        if (++seen === HOOKS_READ_LIMIT) return `${repo.commonDir}/hooks holds too many entries`;
      }
    } catch {
      // no hooks directory
    }
  }
  return null;
}

/**
 * The config files of the submodules below a `modules` directory, nested ones too: `git status`
 * and others recurse into submodules and run what their configs name. Null past the bound.
 */
function submoduleConfigs(modules: string): string[] | null {
  const configs: string[] = [];
  const pending = [modules];
  let seen = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    try {
      for (const entry of Deno.readDirSync(dir)) {
        if (++seen > HOOKS_READ_LIMIT) return null;
        const path = `${dir}/${entry.name}`;
        if (entry.name === "config" || entry.name === "config.worktree") configs.push(path);
        else if (entry.isDirectory && !/^(objects|refs|logs|hooks|info)$/.test(entry.name)) {
          pending.push(path);
        }
      }
    } catch {
      // no submodules
    }
  }
  return configs;
}

/** Files whose change makes git run other code: a write to them in the same source is opaque. */
export function gitConfigPaths(repo: Repository | null, home: string | undefined): string[] {
  const paths = home === undefined ? [] : [`${home}/.gitconfig`, `${home}/.config/git`];
  if (repo !== null) paths.push(repo.gitDir, repo.commonDir);
  return paths;
}

/** The remotes a repository's configuration names (`[remote "origin"]`). */
export function gitRemoteNames(repo: Repository | null): string[] {
  if (repo === null) return [];
  const text = readText(`${repo.commonDir}/config`) ?? "";
  return [...text.matchAll(/^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]/gim)].map((m) =>
    m[1].replace(/\\(.)/g, "$1")
  );
}
