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

/** `git remote` subcommands that change the configuration and reach no other repository. */
const REMOTE_WRITES = new Set(["add", "rename", "remove", "rm", "set-url", "set-branches"]);

/** The configuration `git remote ARGS` writes ("local"), or null when it reads or fetches. */
function remoteWrite(rest: readonly ArgValue[]): "local" | null {
  const fetches = rest.some((arg) => /^(-f|--fetch|--mirror.*)$/.test(arg.text!));
  return REMOTE_WRITES.has(rest[0]?.text ?? "") && !fetches ? "local" : null;
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
  if (sub === "config" || sub === "remote") {
    const scope = sub === "config" ? configWrite(rest) : remoteWrite(rest);
    if (scope === null || scope === "read") {
      io.opaque(`git ${sub}`);
      return;
    }
    io.repository(dir, false);
    io.gitConfig(dir, scope);
    return;
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
  if (dir === null) io.cwd(kind);
  else io.path(kind, dir);
  io.repository(dir, kind === "fs_write");
}
