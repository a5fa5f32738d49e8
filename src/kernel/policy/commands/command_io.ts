/** What a known-command handler sees (its words) and where it reports effects (K-EFF-3a). */
import type { FlagKind, FsKind, NamesKind } from "../effect_types.ts";

/** A word after static expansion (K-EFF-3). */
export interface ArgValue {
  /** The word's value, or null when it is dynamic. */
  text: string | null;
  /** Whether it expands to exactly one field. */
  single: boolean;
  /** Static text before the first dynamic part (the whole text when static). */
  prefix: string;
}

/** Where a handler reports effects; paths resolve against the analyzer's possible cwds. */
export interface CommandIO {
  path(kind: FsKind, arg: ArgValue): void;
  /** A file the command opens to write data into (`fs_write`; `/dev/null` is none). */
  output(arg: ArgValue): void;
  cwd(kind: FsKind): void;
  names(kind: NamesKind, names: string[]): void;
  flag(kind: FlagKind): void;
  connect(host: string, port: number): void;
  opaque(reason: string): void;
  /**
   * A destination the command writes that may become a link (`ln`, `mv`, `cp -r`); into an
   * existing directory, the entries named after `sources` are. `copy` (cp, install): data is
   * copied into those entries through the links they already are or hold (`links` false: none
   * is made), written as `copy.use` says (`replace`: each entry is replaced, see `replaced`).
   */
  link(
    dest: ArgValue,
    sources: readonly ArgValue[],
    copy?: { links: boolean; use: "operand" | "output" | "replace" },
  ): void;
  /**
   * A file the command replaces with a new one (renamed or created over it, `sed -i`): the name
   * itself is written, not what a link there leads to (which is read).
   */
  replaced(arg: ArgValue): void;
  /** A file `name` below the session's HOME the command reads or writes (`~/.netrc`). */
  homePath(kind: FsKind, name: string): void;
  /** `mkdir -p` on the way to `arg`: the directories it makes, those of its parents not there. */
  parents(arg: ArgValue): void;
  /**
   * The command reads or changes the whole tree below `root` (null: the cwd) following the
   * symbolic links in it, to targets the analysis does not see: opaque when it holds one.
   */
  followedTree(root: ArgValue | null): void;
  /**
   * git in `dir` (null: the cwd) reads or writes the repository it finds there: its whole work
   * tree and git directories, or the directory itself outside a repository.
   */
  gitTree(kind: FsKind, dir: ArgValue | null): void;
  /** git runs in `dir` (null: the cwd); `hooks` when the subcommand runs hooks. */
  repository(dir: ArgValue | null, hooks: boolean): void;
  /**
   * git run in `dir` (null: the cwd) writes the configuration file of `scope`, setting `keys`
   * (or sections) when known: one naming a program is opaque.
   */
  gitConfig(dir: ArgValue | null, scope: GitConfigScope, keys?: readonly string[]): void;
  /** The remotes the configuration of the repository git in `dir` (null: the cwd) uses names. */
  gitRemotes(dir: ArgValue | null): string[];
  /** git in `dir` (null: the cwd) rewrites the work tree: the protected paths it tracks. */
  gitWorkTree(dir: ArgValue | null): void;
}

/**
 * Which of git's configuration files a command writes (`git config --global`, …); "existing":
 * the one of a repository whose `.git` is right in the directory, if any (a second `git init`).
 */
export type GitConfigScope = "local" | "worktree" | "global" | "system" | "existing";

/** Effects of one known command, given its arguments after argv0. */
export type CommandHandler = (args: ArgValue[], io: CommandIO) => void;

/** A static single-field word. */
export const STATIC = (text: string): ArgValue => ({ text, single: true, prefix: text });

/** Reports each operand as an output, skipping `-` (standard output). */
export function eachOutput(io: CommandIO, operands: readonly ArgValue[]): void {
  for (const operand of operands) if (operand.text !== "-") io.output(operand);
}

/** Reports `kind` for each operand, skipping `-` (standard input/output). */
export function eachPath(io: CommandIO, kind: FsKind, operands: readonly ArgValue[]): void {
  for (const operand of operands) if (operand.text !== "-") io.path(kind, operand);
}
