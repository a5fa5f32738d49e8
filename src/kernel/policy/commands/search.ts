/** grep and ripgrep: the files they search. */
import { type ArgValue, type CommandIO, eachPath } from "./command_io.ts";
import { hasOption, optionValues, parse } from "./_getopt.ts";

/** grep, egrep, fgrep: pattern files and searched files (the cwd when recursive without operands). */
export function grep(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
    short: "efmABCdD",
    long: [
      "regexp",
      "file",
      "max-count",
      "after-context",
      "before-context",
      "context",
      "directories",
      "devices",
      "include",
      "exclude",
      "exclude-dir",
      "exclude-from",
      "label",
      "binary-files",
      "group-separator",
    ],
    // `--binary` is an exact option, not `--binary-files` abbreviated.
    flags: ["recursive", "dereference-recursive", "binary"],
  }, io);
  if (parsed === null) return;
  eachPath(io, "fs_read", optionValues(parsed, "-f", "--file", "--exclude-from"));
  const patternGiven = hasOption(parsed, "-e", "-f", "--regexp", "--file");
  const files = patternGiven ? parsed.operands : parsed.operands.slice(1);
  const recursive = hasOption(parsed, "-r", "-R", "--recursive", "--dereference-recursive") ||
    optionValues(parsed, "-d", "--directories").some((v) => v.text === "recurse");
  if (files.length === 0 && recursive) io.cwd("fs_read");
  eachPath(io, "fs_read", files);
  // -R follows every link below the files it searches
  if (hasOption(parsed, "-R", "--dereference-recursive")) followedTrees(io, files);
}

/** Each of `roots` (or the cwd when none) is read through the links below it. */
function followedTrees(io: CommandIO, roots: readonly ArgValue[]): void {
  if (roots.length === 0) io.followedTree(null);
  for (const root of roots) io.followedTree(root);
}

/** rg: the files it searches (the cwd without operands); `--pre` runs programs. */
export function ripgrep(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
    short: "efgtTmABCMjErd",
    long: [
      "regexp",
      "file",
      "glob",
      "iglob",
      "type",
      "type-not",
      "max-count",
      "after-context",
      "before-context",
      "context",
      "max-columns",
      "threads",
      "encoding",
      "replace",
      "max-depth",
      "max-filesize",
      "sort",
      "sortr",
      "ignore-file",
      "pre",
      "pre-glob",
      "colors",
      "context-separator",
      "field-context-separator",
      "field-match-separator",
      "path-separator",
      "dfa-size-limit",
      "regex-size-limit",
      "type-add",
      "type-clear",
      "engine",
      "hostname-bin",
      "hyperlink-format",
    ],
    flags: ["follow", "search-zip"],
  }, io);
  if (parsed === null) return;
  // `-z` searches compressed files through gzip, xz, zstd… found along PATH
  if (hasOption(parsed, "--pre", "--hostname-bin", "-z", "--search-zip")) {
    io.opaque("runs another program");
    return;
  }
  eachPath(io, "fs_read", optionValues(parsed, "-f", "--file", "--ignore-file"));
  const patternGiven = hasOption(parsed, "-e", "-f", "--regexp", "--file");
  const files = patternGiven ? parsed.operands : parsed.operands.slice(1);
  if (files.length === 0) io.cwd("fs_read");
  eachPath(io, "fs_read", files);
  if (hasOption(parsed, "-L", "--follow")) followedTrees(io, files);
}
