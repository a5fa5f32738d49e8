/** git: the work tree its known subcommands read or write. */
import type { FsKind } from "../effect_types.ts";
import { type ArgValue, type CommandIO, STATIC } from "./command_io.ts";

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
