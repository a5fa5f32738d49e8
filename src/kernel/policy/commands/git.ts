/** git: the work tree its known subcommands read or write. */
import type { FsKind } from "../effect_types.ts";
import { type ArgValue, type CommandIO, type GitConfigScope, STATIC } from "./command_io.ts";

const GIT_READ = new Set(["status", "log", "diff", "show", "blame", "ls-files", "rev-parse"]);
const GIT_WRITE = new Set([
  "add",
  "commit",
  "checkout",
  "switch",
  "restore",
  "reset",
  "merge",
  "rebase",
  "stash",
  "tag",
  "init",
  "mv",
  "rm",
]);

/** Subcommand options that write files, run programs or read files outside the work tree. */
const GIT_UNFOLLOWED = ["output", "ext-diff", "exec", "no-index", "contents"];

/** Whether `--name` is one of {@link GIT_UNFOLLOWED}, a longer form, or an abbreviation git may accept. */
function gitUnfollowed(word: string): boolean {
  const name = /^--([^=]+)/.exec(word)?.[1];
  return name !== undefined &&
    GIT_UNFOLLOWED.some((option) => option.startsWith(name) || name.startsWith(option));
}

/** `git config` options that choose the file, by the scope they name. */
const CONFIG_SCOPES: Record<string, GitConfigScope> = {
  "--local": "local",
  "--worktree": "worktree",
  "--global": "global",
  "--system": "system",
};

/** `git config` options that change the configuration (the others' forms read it). */
const CONFIG_WRITES = [
  "--add",
  "--replace-all",
  "--unset",
  "--unset-all",
  "--rename-section",
  "--remove-section",
];

/** `git config` options that only shape what is read or written. */
const CONFIG_SHAPES =
  /^--(bool|int|bool-or-int|bool-or-str|path|expiry-date|type=.*|no-type|null|name-only|show-origin|show-scope|includes|no-includes|fixed-value|default=.*|comment=.*|all)$|^-z$/;

/**
 * Which configuration file `git config ARGS` writes: its scope, or "read" for the forms that only
 * read, or null for what is not followed (another file, an editor, an unknown option).
 */
function configWrite(rest: readonly ArgValue[]): GitConfigScope | "read" | null {
  let scope: GitConfigScope = "local";
  let writes = false;
  const operands: string[] = [];
  for (const arg of rest) {
    const text = arg.text!;
    if (text in CONFIG_SCOPES) scope = CONFIG_SCOPES[text];
    else if (CONFIG_WRITES.includes(text)) writes = true;
    else if (/^--(get|get-all|get-regexp|get-urlmatch|list)$|^-l$/.test(text)) operands.push("get");
    else if (CONFIG_SHAPES.test(text)) continue;
    else if (text.startsWith("-")) return null;
    else operands.push(text);
  }
  const [first, ...others] = operands;
  if (["set", "unset", "rename-section", "remove-section"].includes(first)) return scope;
  if (["get", "list"].includes(first)) return writes ? null : "read";
  if (first === undefined || first === "edit") return null;
  return writes || others.length > 0 ? scope : "read";
}

/** The keys or sections `git config ARGS` sets, renames or removes (its operands less values). */
function configKeys(rest: readonly ArgValue[]): string[] {
  const operands = rest.map((arg) => arg.text!).filter((text) => !text.startsWith("-"));
  const verb = ["set", "unset", "rename-section", "remove-section"].includes(operands[0] ?? "");
  const words = verb ? operands.slice(1) : operands;
  const has = (verb: string) =>
    operands[0] === verb || rest.some((arg) => arg.text === `--${verb}`);
  // removing a key or section adds no program
  if (has("unset") || has("unset-all") || has("remove-section")) return [];
  return has("rename-section") ? words.slice(0, 2) : words.slice(0, 1);
}

/** `git remote` subcommands that change the configuration and reach no other repository. */
const REMOTE_WRITES = new Set(["add", "rename", "remove", "rm", "set-url", "set-branches"]);

/** The configuration `git remote ARGS` writes ("local"), or null when it reads or fetches. */
function remoteWrite(rest: readonly ArgValue[]): "local" | null {
  const fetches = rest.some((arg) => /^(-f|--fetch|--mirror.*)$/.test(arg.text!));
  return REMOTE_WRITES.has(rest[0]?.text ?? "") && !fetches ? "local" : null;
}

/** Options, operands and option values of a subcommand's words, up to `--`. */
interface Scanned {
  /** Short option letters and long option names (without dashes or value). */
  options: string[];
  operands: string[];
  /** The values of short options that take one, by letter. */
  values: Map<string, string>;
}

/**
 * Scans `rest`: `valueShort` letters take a value (the rest of their cluster or the next word),
 * as do the long options of `valueLong` given without `=`. A dynamic word counts by its prefix.
 */
function scan(rest: readonly ArgValue[], valueShort: string, valueLong: string[]): Scanned {
  const scanned: Scanned = { options: [], operands: [], values: new Map() };
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i].text ?? rest[i].prefix;
    if (word === "--") break;
    if (word.startsWith("--")) {
      const name = word.slice(2).replace(/=.*$/s, "");
      scanned.options.push(name);
      if (!word.includes("=") && valueLong.includes(name)) i++;
    } else if (word.startsWith("-") && word.length > 1) {
      for (let j = 1; j < word.length; j++) {
        scanned.options.push(word[j]);
        if (!valueShort.includes(word[j])) continue;
        const value = j + 1 < word.length ? word.slice(j + 1) : rest[++i]?.text ?? "";
        scanned.values.set(word[j], value);
        break;
      }
    } else scanned.operands.push(word);
  }
  return scanned;
}

/** Whether a long option as given names one of `names`, in full or as git's abbreviation. */
function longOption(options: readonly string[], names: readonly string[]): boolean {
  return options.some((given) =>
    names.some((name) => name === given || (given.length >= 3 && name.startsWith(given)))
  );
}

/**
 * `git branch` options that rewrite `branch.<name>` sections of the repository's config and
 * fail, or miss their point, without it. Deleting (`-d`) tries too, but the branch is deleted
 * either way (git warns that a stale section may stay): that is left to run.
 */
const BRANCH_CONFIG_SHORT = "mMcCut";
const BRANCH_CONFIG_LONG = [
  "move",
  "copy",
  "set-upstream-to",
  "set-upstream",
  "unset-upstream",
  "track",
  "edit-description",
];

/** `git submodule` subcommands that write the repository's config. */
const SUBMODULE_WRITES = ["add", "init", "deinit", "sync", "set-url", "set-branch"];

/**
 * Whether `git SUB REST` rewrites the repository's `.git/config` besides its other work (P-SBX-6
 * keeps that file read-only in the sandbox, so git would stop half way): renaming or copying a
 * branch, setting an upstream, a branch made from a remote-tracking one (git tracks
 * it then), `push -u`, registering submodules. `remotes` lists the repository's remotes, read
 * only when needed.
 */
function rewritesConfig(sub: string, rest: readonly ArgValue[], remotes: () => string[]): boolean {
  const remote = (ref: string | undefined) =>
    ref !== undefined &&
    (/^(refs\/)?remotes\//.test(ref) || remotes().some((name) => ref.startsWith(`${name}/`)));
  if (sub === "branch") {
    const { options, operands } = scan(rest, "u", [
      "sort",
      "format",
      "contains",
      "no-contains",
      "merged",
      "no-merged",
      "points-at",
    ]);
    return options.some((o) => o.length === 1 && BRANCH_CONFIG_SHORT.includes(o)) ||
      longOption(options, BRANCH_CONFIG_LONG) || remote(operands[1]);
  }
  if (sub === "checkout" || sub === "switch") {
    const create = sub === "checkout" ? "bB" : "cC";
    const { options, operands, values } = scan(rest, create, [
      "create",
      "force-create",
      "orphan",
      "conflict",
    ]);
    if (options.includes("t") || longOption(options, ["track"])) return true;
    const creating = values.size > 0 || longOption(options, ["create", "force-create"]);
    return creating && !options.includes("no-track") && remote(operands[0]);
  }
  if (sub === "submodule") {
    // each registers or drops the submodule's url in the config (`add` also writes .gitmodules)
    const { options, operands } = scan(rest, "b", ["branch", "name", "reference", "depth"]);
    return SUBMODULE_WRITES.includes(operands[0] ?? "") ||
      (operands[0] === "update" && options.includes("init"));
  }
  if (sub === "push") {
    const { options } = scan(rest, "o", ["push-option", "receive-pack", "repo", "exec"]);
    return options.includes("u") || longOption(options, ["set-upstream"]);
  }
  return false;
}

/**
 * The configuration files `git SUB REST` writes besides its other work, where git stops with an
 * error once one is read-only (P-SBX-6; an approval names them instead, M-ONB-3): turning sparse
 * checkout on or off sets `extensions.worktreeConfig` in the repository's config and
 * `core.sparseCheckout` in `config.worktree`; registering for background maintenance sets
 * `maintenance.*` in the repository's config and adds it to the user's `maintenance.repo`.
 */
function writesConfigFiles(sub: string, rest: readonly ArgValue[]): GitConfigScope[] {
  const first = scan(rest, "", []).operands[0] ?? "";
  if (sub === "sparse-checkout" && ["init", "set", "disable"].includes(first)) {
    return ["local", "worktree"];
  }
  if (sub === "maintenance" && ["register", "start"].includes(first)) return ["local", "global"];
  return sub === "maintenance" && first === "unregister" ? ["global"] : [];
}

/** Subcommands that write tracked files of the work tree from the repository's history. */
const TREE_WRITES = new Set(["merge", "rebase", "pull", "cherry-pick", "revert", "am"]);

/**
 * Whether `git SUB REST` may write tracked files from history (switching branches, a hard reset,
 * a merge…), so every tracked protected name (P-SBX-6) with them: a new branch from HEAD, a
 * mixed or soft reset, `restore --staged`, listing or pushing a stash leave the work tree as is.
 */
function rewritesTree(sub: string, rest: readonly ArgValue[]): boolean {
  if (TREE_WRITES.has(sub)) return true;
  if (sub === "checkout" || sub === "switch") {
    const create = sub === "checkout" ? "bB" : "cC";
    const { options, operands, values } = scan(rest, create, [
      "create",
      "force-create",
      "conflict",
    ]);
    const creating = values.size > 0 || longOption(options, ["create", "force-create"]);
    return !creating || operands.length > 0 || options.includes("orphan");
  }
  const { options, operands } = scan(rest, "", []);
  if (sub === "reset") return ["hard", "merge", "keep"].some((o) => options.includes(o));
  if (sub === "restore") {
    return !(options.includes("S") || options.includes("staged")) ||
      options.includes("W") || options.includes("worktree");
  }
  if (sub === "stash") return ["pop", "apply", "branch"].includes(operands[0] ?? "");
  return false;
}

/**
 * Per subcommand, the short options whose value is a file git reads: a message, a template, the
 * revisions `blame -S` takes, an order file (`-O`), an exclude file (`ls-files -X`).
 */
const FILE_SHORT: Record<string, string> = {
  commit: "Ft",
  tag: "F",
  merge: "F",
  blame: "S",
  diff: "O",
  log: "O",
  show: "O",
  "ls-files": "X",
};

/**
 * Options naming a file git reads: the message and template ones, `--pathspec-from-file`, and those
 * of the read subcommands (their files may be anywhere, and blame prints what it cannot parse).
 */
const FILE_LONG = [
  "file",
  "template",
  "pathspec-from-file",
  "ignore-revs-file",
  "orderfile",
  "exclude-from",
];

/**
 * The files `git SUB REST` reads besides the repository: messages, templates, pathspec lists…,
 * and the two paths of a `git diff A B` that compares files outside the work tree as
 * `--no-index` does (git decides by where they are; both are named). "" where a word is dynamic.
 */
function readFiles(sub: string, rest: readonly ArgValue[]): string[] {
  const short = FILE_SHORT[sub] ?? "";
  // other short options with a value, which may be clustered before these
  const { values } = scan(rest, `${short}mcCSuXs`, []);
  const files = [...short].flatMap((letter) => values.get(letter) ?? []);
  for (let i = 0; i < rest.length && rest[i].text !== "--"; i++) {
    const match = /^--([^=]+)(=(.*))?$/s.exec(rest[i].text ?? "");
    const name = match === null ? null : FILE_LONG.find((long) => long.startsWith(match[1]));
    if (match === null || name === undefined || name === null || match[1].length < 3) continue;
    if (name === "template" && sub !== "commit") continue;
    files.push(match[3] ?? (i + 1 < rest.length ? rest[++i].text ?? "" : "-"));
  }
  if (sub === "diff") {
    // git's own test: the words left after the leading options, when exactly two
    const first = rest.findIndex((arg) => arg.text === "--" || !(arg.text ?? "").startsWith("-"));
    if (first >= 0 && rest[first].text !== "--" && rest.length === first + 2) {
      files.push(...rest.slice(first).map((arg) => arg.text ?? ""));
    }
  }
  return files;
}

/** Long options by which git signs with the user's key or verifies signatures (running gpg). */
const SIGNING_LONG = ["show-signature", "verify-signatures", "gpg-sign"];

/** Subcommands whose `-S[KEYID]` signs what they make. */
const SIGNING_SHORT = new Set(["commit", "merge", "rebase", "cherry-pick", "revert", "am", "pull"]);

/**
 * Whether `git SUB REST` runs gpg (or what `gpg.format` names) on the user's key or on the
 * signatures of commits: signing (`commit -S`, `tag -s`/`-u`, `--gpg-sign`) uses the user's
 * secret key unasked, verifying (`--show-signature`, a `%G` placeholder, `--verify-signatures`)
 * runs gpg, which makes `~/.gnupg`.
 */
function usesGpg(sub: string, rest: readonly ArgValue[]): boolean {
  const tag = sub === "tag";
  const long = tag ? [...SIGNING_LONG, "sign", "local-user"] : SIGNING_LONG;
  const { options } = scan(rest, tag ? "mFe" : "mFcCtsXxpu", []);
  // `-S` signs in these (`git log -S` is the pickaxe)
  // (`git tag -v` verifies the tags it names)
  const signs = tag ? "suv" : SIGNING_SHORT.has(sub) ? "S" : "";
  if (options.some((o) => o.length === 1 && signs.includes(o))) return true;
  if (options.some((o) => o.length >= 3 && long.some((name) => name.startsWith(o)))) return true;
  return rest.some((arg) => /^--(format|pretty)=.*%G/s.test(arg.text ?? ""));
}

/** The merge strategies git has in itself; for any other it runs `git-merge-NAME` along PATH. */
const BUILTIN = ["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/**
 * The strategies `-s NAME`/`--strategy=NAME` (or an abbreviation) name in a merge or rebase;
 * "" for a dynamic one. Option values are not skipped: a word taken for a strategy that is not one
 * only makes the call opaque.
 */
function strategies(rest: readonly ArgValue[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < rest.length && rest[i].text !== "--"; i++) {
    const word = rest[i].text ?? "";
    const long = /^--([^=]+)(=(.*))?$/s.exec(word);
    if (long !== null) {
      if (long[1].length >= 2 && "strategy".startsWith(long[1])) {
        found.push(long[2] !== undefined ? long[3] : rest[++i]?.text ?? "");
      }
      continue;
    }
    if (!word.startsWith("-")) continue;
    for (let j = 1; j < word.length; j++) {
      // options whose value is the rest of the word
      if ("mFXxSC".includes(word[j])) break;
      if (word[j] !== "s") continue;
      found.push(j + 1 < word.length ? word.slice(j + 1) : rest[++i]?.text ?? "");
      break;
    }
  }
  return found;
}

/** `git init` long options that take a value. */
const INIT_VALUED = [
  "template",
  "separate-git-dir",
  "object-format",
  "ref-format",
  "initial-branch",
];

/** Whether `git init` puts the git directory elsewhere or copies hooks from a template. */
function initUnfollowed(rest: readonly ArgValue[]): boolean {
  return scan(rest, "b", INIT_VALUED).options.some((given) =>
    given.length > 1 && ["separate-git-dir", "template"].some((name) => name.startsWith(given))
  );
}

/** The directory `git init` makes or re-initializes its repository in (null: the cwd). */
function initTarget(rest: readonly ArgValue[], dir: ArgValue | null): ArgValue | null {
  const target = scan(rest, "b", INIT_VALUED).operands[0];
  if (target === undefined) return dir;
  return dir === null || target.startsWith("/") ? STATIC(target) : STATIC(`${dir.text}/${target}`);
}

/** git: known read subcommands read the work tree, known write subcommands write it. */
export function git(args: ArgValue[], io: CommandIO): void {
  let i = 0;
  let dir: ArgValue | null = null;
  for (; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      io.opaque("dynamic argument");
      return;
    }
    if (!text.startsWith("-")) break;
    if (text === "-C") {
      const next = args[++i];
      if (next === undefined || next.text === null) {
        io.opaque("dynamic path");
        return;
      }
      dir = dir === null || next.text.startsWith("/") ? next : STATIC(`${dir.text}/${next.text}`);
    } else if (!["--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"].includes(text)) {
      io.opaque(`git option ${text}`);
      return;
    }
  }
  const sub = args[i]?.text;
  if (sub === undefined || sub === null) {
    io.opaque("git without a known subcommand");
    return;
  }
  const rest = args.slice(i + 1);
  if (rest.some((arg) => arg.text === null && (arg.prefix === "" || arg.prefix.startsWith("-")))) {
    io.opaque("dynamic argument");
    return;
  }
  if (rest.some((arg) => arg.text !== null && gitUnfollowed(arg.text))) {
    io.opaque(`git ${sub} option not followed`);
    return;
  }
  if (usesGpg(sub, rest)) {
    io.opaque("git signs or verifies signatures with gpg");
    return;
  }
  if (sub === "config" || sub === "remote") {
    const scope = sub === "config" ? configWrite(rest) : remoteWrite(rest);
    if (scope === null || scope === "read") {
      io.opaque(`git ${sub}`);
      return;
    }
    io.repository(dir, false);
    io.gitConfig(dir, scope, sub === "config" ? configKeys(rest) : []);
    return;
  }
  if (sub === "init" && initUnfollowed(rest)) {
    io.opaque("git init option not followed");
    return;
  }
  // `git rebase -x CMD` runs CMD in the shell after each commit it replays
  if (
    sub === "rebase" &&
    scan(rest, "xsX", ["strategy", "strategy-option", "onto"]).options.includes("x")
  ) {
    io.opaque("git rebase -x");
    return;
  }
  if ((sub === "merge" || sub === "rebase") && strategies(rest).some((s) => !BUILTIN.includes(s))) {
    io.opaque(`git ${sub} runs git-merge-STRATEGY found along PATH`);
    return;
  }
  // reported besides the subcommand's own effects, which git would leave half done without it
  if (sub === "init") io.gitConfig(initTarget(rest, dir), "existing");
  else if (rewritesConfig(sub, rest, () => io.gitRemotes(dir))) io.gitConfig(dir, "local");
  for (const scope of writesConfigFiles(sub, rest)) io.gitConfig(dir, scope);
  if (rewritesTree(sub, rest)) io.gitWorkTree(dir);
  if (
    sub === "submodule" &&
    ["add", "set-url", "set-branch"].includes(scan(rest, "b", []).operands[0])
  ) {
    // run from the top of the work tree, as it is almost always
    io.path("fs_write", STATIC(dir === null ? ".gitmodules" : `${dir.text}/.gitmodules`));
  }
  const kind: FsKind | null = GIT_READ.has(sub)
    ? "fs_read"
    : GIT_WRITE.has(sub)
    ? "fs_write"
    : null;
  if (kind === null) {
    io.opaque(`git ${sub}`);
    return;
  }
  // git reads them after entering `-C DIR`
  for (const file of readFiles(sub, rest)) {
    if (file === "-") continue;
    if (file === "") {
      io.opaque("dynamic path");
      return;
    }
    io.path("fs_read", STATIC(dir === null || file.startsWith("/") ? file : `${dir.text}/${file}`));
  }
  // `git init DIR` makes (or re-initializes) the repository in DIR
  const target = sub === "init" ? initTarget(rest, dir) : null;
  if (sub !== "init") io.gitTree(kind, dir);
  else if (target === null) io.cwd(kind);
  else io.path(kind, target);
  io.repository(dir, kind === "fs_write");
}
