/**
 * Records the paths a command touches (issue 14): each resolved physically against every possible
 * cwd, `/dev/tcp` redirections as connections, links the run may create, and the git
 * repositories it runs in, with the checks made once the whole source is walked.
 */
import type { EffectSet } from "./_effect_set.ts";
import type { EffectState, FsKind } from "./effect_types.ts";
import type { Cwds } from "./_cwds.ts";
import { globMayClimb } from "./_paths.ts";
import { ProgramLookups, type Resolution } from "./_program_resolution.ts";
import { normalizePath } from "../bash/lexical_path.ts";
import { isFile } from "../bash/regular_file.ts";
import { type ArgValue, type GitConfigScope, STATIC } from "./commands/command_io.ts";
import { isInertSource, isSpecialDevice, namedDescriptor } from "./_shell_tables.ts";
import {
  devSocket,
  globMayMatchLink,
  hasHardLinks,
  linkInTree,
  physicalPath,
} from "./_physical_paths.ts";
import {
  findRepository,
  gitConfigPaths,
  gitKeyRunsCode,
  gitRemoteNames,
  gitRunsConfiguredCode,
  present,
  type Repository,
} from "./_git_repository.ts";
import { PathChecks } from "./_path_checks.ts";
import { toolConfigFiles, toolConfigured } from "./_tool_config.ts";
import { trackedGitlinks, trackedProtected } from "./_git_index.ts";

/**
 * `GIT_*` variables that move the repository, its configuration, index or objects, name programs
 * git runs, or make it write trace files: with one set, the repository and config files checked
 * here are not the ones git uses, inherited value or not.
 */
const GIT_REDIRECT =
  /^GIT_(DIR|COMMON_DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|CONFIG(_.*)?|EXEC_PATH|TEMPLATE_DIR|NAMESPACE|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM|REPLACE_REF_BASE|SHALLOW_FILE|GRAFT_FILE|ATTR_.*|EXTERNAL_DIFF|DIFF_OPTS|(SEQUENCE_)?EDITOR|PAGER|SSH(_COMMAND)?|ASKPASS|PROXY_COMMAND|TRACE.*)$/;

/**
 * How a command uses a path: an operand, a file it writes data into, a redirection's target, or a
 * name it replaces (`replace`: a new file renamed or created over it, so a link there is replaced,
 * not written through).
 */
export type PathUse = "operand" | "output" | "redirect" | "replace";

/**
 * The config files of the submodules `repo`'s index tracks (a nested repository added as a
 * gitlink has its `.git` right in the work tree): git status recurses into each and runs what
 * they name. Null when the index is not understood.
 */
function submoduleConfigFiles(repo: Repository): string[] | null {
  const links = trackedGitlinks(`${repo.gitDir}/index`);
  if (links === null) return null;
  return links.flatMap((link) => {
    const dir = `${repo.workTree === "/" ? "" : repo.workTree}/${link}`;
    const sub = present(`${dir}/.git`) ? findRepository(dir) : null;
    return sub === null ? [] : [`${sub.commonDir}/config`, `${sub.gitDir}/config.worktree`];
  });
}

/** How many steps following a source's descriptor copies may take before it is opaque (E-4). */
const DESCRIPTOR_STEPS = 100_000;

/**
 * A path through a process's links into the file system: `/proc/PID/root` and `/cwd` (or a
 * task's), and anything below a descriptor (`/proc/self/fd/3/x`, `/dev/fd/3/x`), which
 * `/proc/PID/map_files` is too.
 */
const PROCESS_LINK =
  /^\/proc\/[^/]+\/(task\/[^/]+\/)?((root|cwd)(\/|$)|(fd|map_files)\/[^/]+\/)|^\/dev\/fd\/[^/]+\//;

/** A process's environment, read as a file. */
const ENVIRON = /^\/proc\/[^/]+\/(task\/[^/]+\/)?environ$/;

/** Path effects of one derivation. */
export class PathRecorder {
  readonly #state: EffectState;
  readonly #effects: EffectSet;
  readonly #checks = new PathChecks();
  /** Files the source's redirections put on each descriptor ("*": one bash picks), and how. */
  readonly #onDescriptor = new Map<string, { kind: FsKind; path: string }[]>();
  /** Descriptors copied onto others: `2>&1` is ["2", "1"]. */
  readonly #copies: [string, string][] = [];
  /**
   * Descriptors the source opens anew by name (`>/dev/stderr` opens "2" as fs_write); `output`:
   * as a command's output operand (`tee /dev/stderr`), which cp writes into when a directory.
   */
  readonly #reopened: { fd: string; kind: FsKind; output: boolean }[] = [];
  /** {@link toolConfigured}'s answer for each command: its files are looked at once (E-4). */
  readonly #configured = new Map<string, string | null>();

  /** Where the command names looked up resolved, at most `lookups` of them. */
  readonly #programs: ProgramLookups;

  constructor(state: EffectState, effects: EffectSet, lookups: number) {
    this.#state = state;
    this.#effects = effects;
    this.#programs = new ProgramLookups(lookups);
  }

  /**
   * Where a program that runs resolves ({@link ProgramLookups.resolve}); writing a `PATH`
   * directory searched before it is opaque.
   */
  program(
    name: string,
    path: string | undefined,
    cwd: string | null,
    platform: string,
  ): Resolution {
    const resolution = this.#programs.resolve(name, path, cwd, platform);
    this.#checks.shadowing(resolution.shadowing);
    return resolution;
  }

  /**
   * Why known command `command` is configured beyond what analysis sees, or null (K-EFF-6); its
   * configuration files are checked against what the whole source writes.
   */
  toolConfigured(command: string): string | null {
    const known = this.#configured.get(command);
    if (known !== undefined) return known;
    const reason = this.#toolConfigured(command);
    this.#configured.set(command, reason);
    return reason;
  }

  /** {@link toolConfigured}, looked at now. */
  #toolConfigured(command: string): string | null {
    const { env, changedEnv, home } = this.#state;
    // GNU getopt then takes every word after the first operand as one (`mv a -t b c`)
    if (changedEnv.has("POSIXLY_CORRECT") && Object.hasOwn(env, "POSIXLY_CORRECT")) {
      return `${command} configured by POSIXLY_CORRECT`;
    }
    const files = toolConfigFiles(command, env, home);
    this.#checks.toolPaths(command, [...files, ...files.flatMap((f) => physicalPath(f) ?? [])]);
    return toolConfigured(command, env, changedEnv, home);
  }

  /** Why the run is opaque after all (links, PATH, git configuration), or null. */
  finish(): string | null {
    const reopened = this.#reopenedFiles();
    if (reopened === null) this.#effects.opaque("too many descriptors to follow");
    for (const { kind, path, output } of reopened ?? []) {
      if (output && !isFile(path)) {
        this.#effects.opaque(`an output through a descriptor that may hold a directory: ${path}`);
      }
      this.#checks.record(kind, path);
      if (kind === "fs_write" && hasHardLinks(path)) {
        this.#effects.opaque(`write to a file with several hard links: ${path}`);
      }
      this.#effects.paths(kind, [path]);
    }
    return this.#checks.finish();
  }

  /**
   * The files a descriptor's name may reopen with another access than the redirection that put
   * them there was judged for (K-EFF-3 [FIX]: `: 2<f >/dev/stderr` truncates f, `exec 3>>f; cat
   * </dev/fd/3` reads it), each once: those on that descriptor, directly or through copies,
   * whatever their order (a function may run after a later `exec 3<f`), and those on a descriptor
   * bash picked, which may be any. `output`: reopened as a command's output operand. Null when
   * following the copies would take more than {@link DESCRIPTOR_STEPS}.
   */
  #reopenedFiles(): { kind: FsKind; path: string; output: boolean }[] | null {
    const sources = new Map<string, string[]>();
    for (const [to, from] of this.#copies) {
      const list = sources.get(to) ?? [];
      list.push(from);
      sources.set(to, list);
    }
    const charged = new Map<string, { kind: FsKind; path: string; output: boolean }>();
    const asked = new Set<string>();
    let steps = 0;
    for (const { fd, kind, output } of this.#reopened) {
      const question = JSON.stringify([fd, kind, output]);
      if (asked.has(question)) continue;
      asked.add(question);
      const seen = new Set([fd, "*"]);
      const stack = [fd, "*"];
      while (stack.length > 0) {
        const at = stack.pop()!;
        const files = this.#onDescriptor.get(at) ?? [];
        const from = sources.get(at) ?? [];
        steps += 1 + files.length + from.length;
        if (steps > DESCRIPTOR_STEPS) return null;
        for (const file of files) {
          if (file.kind === kind) continue;
          const key = JSON.stringify([kind, file.path]);
          const known = charged.get(key);
          if (known === undefined) charged.set(key, { kind, path: file.path, output });
          else known.output ||= output;
        }
        for (const next of from) {
          if (!seen.has(next)) {
            seen.add(next);
            stack.push(next);
          }
        }
      }
    }
    return [...charged.values()];
  }

  /**
   * A redirection `op` of descriptor `n` (its number as written; null: the operator's default) to
   * `target` (K-EFF-3): its file is read and/or written, and may be opened anew by a
   * descriptor's name (K-EFF-3 [FIX]); a copy (`2>&1`, `3<&0-`) makes one descriptor another's.
   */
  redirect(op: string, n: string | null, target: ArgValue, cwds: Cwds): void {
    // the descriptor redirected: its number, "*" for one bash picks (`{var}>f`)
    const fd = n === null
      ? (op.startsWith("<") ? "0" : "1")
      : /^\d+$/.test(n)
      ? String(Number(n))
      : "*";
    if (op === ">&" || op === "<&") {
      const copied = target.text === null ? null : /^(\d+-?|-)$/.exec(target.text);
      if (copied !== null) {
        if (copied[1] !== "-") this.#copies.push([fd, String(parseInt(copied[1]))]);
        return;
      }
      // `>&file` is `&>file` (a `<&` of a file name is a bash error)
      const fds = n === null && op === ">&" ? ["1", "2"] : [fd];
      this.#opened(op === ">&" ? "fs_write" : "fs_read", target, cwds, fds);
      return;
    }
    const fds = op === "&>" || op === "&>>" ? ["1", "2"] : [fd];
    if (op === "<" || op === "<>") this.#opened("fs_read", target, cwds, fds);
    if (op !== "<") this.#opened("fs_write", target, cwds, fds);
  }

  /** A redirection's file opened as `kind` on descriptors `fds` ("*": one bash picks). */
  #opened(
    kind: "fs_read" | "fs_write",
    target: ArgValue,
    cwds: Cwds,
    fds: readonly string[],
  ): void {
    const paths = this.path(kind, target, cwds, "redirect");
    for (const fd of fds) {
      const files = this.#onDescriptor.get(fd) ?? [];
      for (const path of paths) files.push({ kind, path });
      this.#onDescriptor.set(fd, files);
    }
  }

  /**
   * `path` resolved physically, as a list of one; none, and opaque, when its links cannot be
   * followed (a loop, or a target that is not UTF-8): judged as written, the link's own path
   * would stand for wherever it leads.
   */
  #physical(path: string): string[] {
    const physical = physicalPath(path);
    if (physical !== null) return [physical];
    this.#effects.opaque(`symbolic links not followed: ${path}`);
    return [];
  }

  /** Why the directory a relative path is resolved in is not known. */
  #unknownCwd(): string {
    // a later cd may also have lost it, but the session's own cwd already says enough
    return this.#state.cwdLossy
      ? "the working directory's name is not UTF-8"
      : "unknown working directory";
  }

  /** The cwds themselves as a path effect. */
  cwd(kind: FsKind, cwds: Cwds): void {
    if (cwds === null) this.#effects.opaque(this.#unknownCwd());
    else this.#effects.paths(kind, cwds.flatMap((cwd) => this.#physical(cwd)));
  }

  /** A word's path from every possible cwd, unnormalized; null (and opaque) when unknown. */
  candidates(arg: ArgValue, cwds: Cwds): string[] | null {
    if (arg.text === null || !arg.single || globMayClimb(arg.text)) {
      this.#effects.opaque("dynamic path");
      return null;
    }
    if (arg.text.startsWith("/")) return [arg.text];
    if (cwds === null) {
      this.#effects.opaque(this.#unknownCwd());
      return null;
    }
    return cwds.map((cwd) => `${cwd}/${arg.text}`);
  }

  /**
   * Records a path effect for a word, resolved physically (symlinks of its existing prefix)
   * against every possible cwd; `link` marks a path the command may turn into a link. Reading an
   * inert device is nothing. A special device (K-EFF-3) as a redirection's target or a command's
   * output touches no file of its own, nor does a descriptor's name read as an operand (`jq .
   * /dev/stdin`); a descriptor's name reopens the descriptor's file ({@link finish}). Returns the
   * paths recorded.
   */
  path(kind: FsKind, arg: ArgValue, cwds: Cwds, use: PathUse = "operand", link = false): string[] {
    if (arg.text === "") return [];
    const candidates = this.candidates(arg, cwds);
    if (candidates === null) return [];
    const paths: string[] = [];
    for (const candidate of candidates) {
      const lexical = normalizePath(candidate);
      const socket = use === "redirect" ? devSocket(lexical) : null;
      if (socket !== null) {
        if (socket.port === null) this.#effects.opaque(`socket port not numeric: ${lexical}`);
        // a host holding `*` is none: named as a destination it would read as a grant's glob
        else if (socket.host.includes("*")) this.#effects.opaque(`socket host a glob: ${lexical}`);
        else this.#effects.connect(socket.host, socket.port);
        continue;
      }
      const fd = namedDescriptor(lexical);
      const operand = use === "operand" || use === "replace";
      if (fd !== null && (!operand || kind === "fs_read")) {
        this.#reopened.push({ fd, kind, output: use === "output" });
        continue;
      }
      if (!operand && isSpecialDevice(lexical)) continue;
      if (kind === "fs_read" && isInertSource(lexical)) continue;
      // through the run's root, cwd or an open directory: any file, under a name only a grant of
      // /proc or /dev matches (`cat /proc/self/root/etc/shadow`); the path is kept for the grants
      if (PROCESS_LINK.test(lexical)) this.#effects.opaque(`process link: ${lexical}`);
      // a process's whole environment, as `env` prints it
      if (kind === "fs_read" && ENVIRON.test(lexical)) this.#effects.names("env_read", ["*"]);
      // a device or process path is named as written, but /dev/shm and /dev/mqueue, directories
      // anyone may put links in, and `..` after /dev/fd/3 (it climbs from the directory on 3),
      // which are resolved below (the latter gives up)
      const device = /^\/(dev|proc)\//.test(lexical) && !/^\/dev\/(shm|mqueue)\//.test(lexical);
      if (device && !/(^|\/)\.\.(\/|$)/.test(candidate)) {
        paths.push(lexical);
        continue;
      }
      const follow = kind !== "fs_delete" && !link && use !== "replace";
      const physical = physicalPath(candidate, follow);
      if (physical === null) {
        this.#effects.opaque(`symbolic link loop or process link: ${lexical}`);
        continue;
      }
      if (globMayMatchLink(physical, follow)) {
        this.#effects.opaque(`glob may match a symbolic link: ${physical}`);
      }
      if (kind === "fs_write" && use !== "replace" && hasHardLinks(physical)) {
        this.#effects.opaque(`write to a file with several hard links: ${physical}`);
      }
      if (link) this.#checks.link(physical);
      else this.#checks.record(kind, physical);
      // a link replaced: what it leads to may be read into the new file (`sed -i`)
      const target = use === "replace" ? physicalPath(candidate) : physical;
      if (target !== null && target !== physical) this.path("fs_read", STATIC(target), cwds);
      // a link led elsewhere (`..` after one climbs from its target: the form as written says so)
      if (physical !== lexical) {
        this.#effects.wrote(physical, /(^|\/)\.\.(\/|$)/.test(candidate) ? candidate : lexical);
      }
      paths.push(physical);
    }
    this.#effects.paths(kind, paths);
    return paths;
  }

  /** A written destination that may become a link: the entries it creates are recorded. */
  link(
    dest: ArgValue,
    sources: readonly ArgValue[],
    cwds: Cwds,
    copy?: { links: boolean; use: PathUse },
  ): void {
    const candidates = dest.text === "" ? [] : this.candidates(dest, cwds);
    for (const candidate of candidates ?? []) {
      const physical = physicalPath(candidate, false);
      let isDir = false;
      try {
        isDir = physical !== null && Deno.statSync(physical).isDirectory;
      } catch {
        // a new name: the link is the destination itself
      }
      const names = sources.map((source) => source.text?.replace(/\/+$/, "").replace(/^.*\//, ""));
      const entries = isDir && names.length > 0 && names.every((name) => name)
        ? names.map((name) => STATIC(`${candidate}/${name}`))
        : [STATIC(candidate)];
      if (copy === undefined) this.#effects.paths("fs_write", physical === null ? [] : [physical]);
      else if (isDir) this.path("fs_write", STATIC(candidate), cwds, copy.use);
      for (const entry of entries) {
        if (copy === undefined || copy.links) this.path("fs_write", entry, cwds, "operand", true);
        if (copy === undefined) continue;
        // a replaced entry is not written through; a tree below it (cp -r) may still be
        const use = copy.use === "replace" ? "replace" : null;
        if (use !== null) {
          for (const written of this.path("fs_write", entry, cwds, use)) {
            if (linkInTree(written)) {
              this.#effects.opaque(`writes into a tree holding symbolic links: ${written}`);
            }
          }
          continue;
        }
        // cp opens an existing entry through the link it is or holds, a directory's files too;
        // a new one is the directory's, or the link or file named
        const followed = physicalPath(entry.text!);
        const through = followed !== physicalPath(entry.text!, false) ||
          (followed !== null && linkInTree(followed));
        if (!through && (isDir || copy.links)) continue;
        for (const written of this.path("fs_write", entry, cwds, copy.use)) {
          if (linkInTree(written)) {
            this.#effects.opaque(`writes into a tree holding symbolic links: ${written}`);
          }
        }
      }
    }
  }

  /**
   * The parents of `arg` that `mkdir -p` makes: each prefix of the word as written (`x/../y`
   * makes x) that is not there now, so a parent that exists is never named.
   */
  parents(arg: ArgValue, cwds: Cwds): void {
    const segments = (arg.text ?? "").split("/");
    for (let n = segments.length - 1; n > 0; n--) {
      const prefix = segments.slice(0, n).join("/");
      if (prefix === "" || segments[n - 1] === "" || segments[n - 1] === ".") continue;
      for (const candidate of this.candidates(STATIC(prefix), cwds) ?? []) {
        const path = normalizePath(candidate);
        if (!present(physicalPath(path) ?? path)) this.path("fs_write", STATIC(path), cwds);
      }
    }
  }

  /**
   * A file `name` below the session's HOME (`.netrc`), read only when it is there (an absent one
   * named every `wget` a read outside the project profile's grants: denied); opaque when HOME is
   * not known.
   */
  homePath(kind: FsKind, name: string, cwds: Cwds): void {
    const home = this.#state.home;
    if (home === undefined) this.#effects.opaque(`~/${name} of an unknown HOME`);
    else if (kind !== "fs_read" || present(`${home}/${name}`)) {
      this.path(kind, STATIC(`${home}/${name}`), cwds);
    }
  }

  /** A recursive read following the links below `root` (null: the cwds): opaque when one is. */
  followedTree(root: ArgValue | null, cwds: Cwds): void {
    const roots = root === null ? cwds ?? [] : this.candidates(root, cwds) ?? [];
    for (const candidate of roots) {
      const physical = physicalPath(candidate);
      if (physical !== null && linkInTree(physical)) {
        this.#effects.opaque(`follows symbolic links below ${physical}`);
      }
    }
  }

  /**
   * What git in `dir` (or the cwd) reads or writes: the work tree of the repository it finds
   * there, whole (from a subdirectory, `git rm ../f` deletes outside it and a commit writes
   * `.git`), and git directories outside it (a linked worktree's commit writes the main
   * repository's objects); the directory itself where there is no repository.
   */
  gitTree(kind: FsKind, dir: ArgValue | null, cwds: Cwds): void {
    if (dir === null) this.cwd(kind, cwds);
    else this.path(kind, dir, cwds);
    const dirs = dir === null ? cwds : this.candidates(dir, cwds);
    for (const candidate of dirs ?? []) {
      const repo = findRepository(physicalPath(candidate) ?? candidate);
      if (repo === null) continue;
      const tree = repo.workTree;
      const outside = (path: string) => !path.startsWith(`${tree === "/" ? "" : tree}/`);
      const common = normalizePath(repo.commonDir);
      const own = normalizePath(repo.gitDir);
      if (kind === "fs_write" && own !== common && outside(common)) {
        // a linked worktree's work writes its own git directory and the common one's objects,
        // refs and logs; it reads the rest (config, hooks, info) (M-ONB-3)
        this.#effects.paths("fs_read", this.#physical(common));
        const written = ["objects", "refs", "logs"].map((dir) => `${common}/${dir}`);
        const dirs = [tree, ...[own, ...written].filter(outside)];
        this.#effects.paths(kind, dirs.flatMap((path) => this.#physical(path)));
        continue;
      }
      const dirs = [repo.gitDir, repo.commonDir].map(normalizePath).filter(outside);
      this.#effects.paths(kind, [tree, ...dirs].flatMap((path) => this.#physical(path)));
    }
  }

  /**
   * git in `dir` (or the cwd): opaque when configuration or hooks may run code (issue 14), when a
   * `GIT_*` variable or the editor changed since the session's start configures it (K-EFF-6), or
   * when one, even inherited, moves what it reads and writes where this analysis does not look.
   */
  repository(dir: ArgValue | null, hooks: boolean, cwds: Cwds): void {
    const env = this.#state.env;
    const changed = this.#state.changedEnv;
    const variable = Object.keys(env).find((key) =>
      (key.startsWith("GIT_") && !/^GIT_(AUTHOR|COMMITTER)_/.test(key) &&
        (changed.has(key) || GIT_REDIRECT.test(key))) ||
      // the editor `git commit` runs even without a terminal, and the pager
      (/^(EDITOR|VISUAL|PAGER)$/.test(key) && changed.has(key))
    );
    if (variable !== undefined) {
      this.#effects.opaque(`git configured by ${variable}`);
      return;
    }
    const dirs = dir === null ? cwds : this.candidates(dir, cwds);
    for (const candidate of dirs ?? []) {
      const repo = findRepository(physicalPath(candidate) ?? candidate);
      const submodules = repo === null ? [] : submoduleConfigFiles(repo);
      if (submodules === null) this.#effects.opaque(`${repo!.gitDir}/index is not understood`);
      const reason = gitRunsConfiguredCode(repo, this.#state.home, env, hooks, submodules ?? []);
      if (reason !== null) this.#effects.opaque(reason);
      this.#checks.gitPaths([...gitConfigPaths(repo, this.#state.home), ...submodules ?? []]);
    }
  }

  /**
   * The configuration file of `scope` that git in `dir` (or the cwd) writes: the repository's
   * `config` (or `config.worktree`), both user files, or the system one. Opaque when there is no
   * repository yet (a `git init` earlier in the source makes one) or no HOME. "existing": the
   * `config` of a repository whose `.git` is in the directory itself, nothing where none is.
   */
  gitConfig(
    dir: ArgValue | null,
    scope: GitConfigScope,
    cwds: Cwds,
    keys: readonly string[] = [],
  ): void {
    // git runs it on later work, this source's or the next one's
    const code = keys.find(gitKeyRunsCode);
    if (code !== undefined) this.#effects.opaque(`git config sets ${code}`);
    if (scope === "system") {
      this.#effects.paths("fs_write", ["/etc/gitconfig"]);
      return;
    }
    if (scope === "global") {
      const home = this.#state.home;
      if (home === undefined) {
        this.#effects.opaque("git config without HOME");
        return;
      }
      const xdg = this.#state.env.XDG_CONFIG_HOME || `${home}/.config`;
      this.#effects.paths("fs_write", [`${home}/.gitconfig`, `${xdg}/git/config`]);
      return;
    }
    const dirs = dir === null ? cwds : this.candidates(dir, cwds);
    if (dirs === null) return;
    for (const candidate of dirs) {
      const physical = physicalPath(candidate) ?? candidate;
      if (scope === "existing") {
        if (!present(`${physical}/.git`)) continue;
        const repo = findRepository(physical);
        if (repo === null) this.#effects.opaque(`${physical}/.git is not understood`);
        else {
          const file = `${repo.commonDir}/config`;
          this.#effects.paths("fs_write", this.#physical(file));
        }
        continue;
      }
      const repo = findRepository(physical);
      if (repo === null) {
        this.#effects.opaque("git config outside a repository");
        continue;
      }
      const file = scope === "local"
        ? `${repo.commonDir}/config`
        : `${repo.gitDir}/config.worktree`;
      this.#effects.paths("fs_write", this.#physical(file));
    }
  }

  /** The remotes named by the configuration of the repository git in `dir` (or the cwd) uses. */
  gitRemotes(dir: ArgValue | null, cwds: Cwds): string[] {
    const dirs = dir === null ? cwds : this.candidates(dir, cwds);
    return (dirs ?? []).flatMap((candidate) =>
      gitRemoteNames(findRepository(physicalPath(candidate) ?? candidate))
    );
  }

  /**
   * git in `dir` (or the cwd) rewrites its work tree from history (checkout, reset, merge…): it
   * writes every protected path the index tracks (P-SBX-6); opaque when the index is not read.
   */
  gitWorkTree(dir: ArgValue | null, cwds: Cwds): void {
    const dirs = dir === null ? cwds : this.candidates(dir, cwds);
    for (const candidate of dirs ?? []) {
      const repo = findRepository(physicalPath(candidate) ?? candidate);
      if (repo === null) continue;
      const tracked = trackedProtected(`${repo.gitDir}/index`);
      if (tracked === null) {
        this.#effects.opaque(`${repo.gitDir}/index is not understood`);
        continue;
      }
      const paths = tracked.map((rel) => `${repo.workTree}/${rel}`);
      this.#effects.paths("fs_write", paths.flatMap((path) => this.#physical(path)));
    }
  }
}
