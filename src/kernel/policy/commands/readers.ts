/** Commands that read their operands, and listers that read a directory by default. */
import {
  type ArgValue,
  type CommandHandler,
  type CommandIO,
  eachOutput,
  eachPath,
} from "./command_io.ts";
import { hasOption, type OptionSpec, optionValues, parse, type Parsed } from "./_getopt.ts";

/** Option tables of a reader: which option values and operands are files, and what runs. */
export interface ReaderSpec extends OptionSpec {
  /** Options whose value is a file that is read. */
  reads?: readonly string[];
  /** Options whose value is a file that is written. */
  writes?: readonly string[];
  /** Options whose value is a file the command writes data into (see `CommandIO.output`). */
  outputs?: readonly string[];
  /** Options that make the command run other programs. */
  runs?: readonly string[];
  /** Options that make the command write a file named after something else. */
  names?: readonly string[];
  /** Options naming a file that lists more files to read, which analysis cannot see. */
  lists?: readonly string[];
  /** Options that make it read its operands' trees through the links in them. */
  followsTrees?: readonly string[];
  /** Operand positions (0-based) that are written (outputs) instead of read. */
  writtenOperands?: readonly number[];
}

/** Reports `opaque` when `spec.runs` or `spec.lists` options are given; true when it did. */
export function unfollowed(spec: ReaderSpec, parsed: Parsed, io: CommandIO): boolean {
  if (spec.runs && hasOption(parsed, ...spec.runs)) {
    io.opaque("runs another program");
    return true;
  }
  if (spec.names && hasOption(parsed, ...spec.names)) {
    io.opaque("writes a file it names itself");
    return true;
  }
  if (spec.lists && hasOption(parsed, ...spec.lists)) {
    io.opaque("reads the files a file names");
    return true;
  }
  return false;
}

/** Parses ARGS and reports the files its options name; null when it cannot be followed. */
function optionFiles(args: readonly ArgValue[], spec: ReaderSpec, io: CommandIO): Parsed | null {
  const parsed = parse(args, spec, io);
  if (parsed === null || unfollowed(spec, parsed, io)) return null;
  eachPath(io, "fs_read", optionValues(parsed, ...(spec.reads ?? [])));
  eachPath(io, "fs_write", optionValues(parsed, ...(spec.writes ?? [])));
  eachOutput(io, optionValues(parsed, ...(spec.outputs ?? [])));
  return parsed;
}

/** A handler that reads its operands and the files its options name. */
export function reader(spec: ReaderSpec): CommandHandler {
  return (args, io) => {
    const parsed = optionFiles(args, spec, io);
    if (parsed === null) return;
    parsed.operands.forEach((operand, index) => {
      if (operand.text === "-") return;
      if (spec.writtenOperands?.includes(index)) io.output(operand);
      else io.path("fs_read", operand);
    });
    const follows = spec.followsTrees ?? [];
    if (hasOption(parsed, ...follows) && !hasOption(parsed, "--no-dereference")) {
      for (const operand of parsed.operands) io.followedTree(operand);
    }
  };
}

/** Readers whose macOS (BSD) options differ, by command name (issue 15). */
export const BSD_READERS: Record<string, ReaderSpec> = {
  // `-o FILE` writes FILE, `-i FILE` reads it.
  base64: {
    short: "bio",
    long: ["break", "input", "output"],
    reads: ["-i", "--input"],
    outputs: ["-o", "--output"],
  },
};

/** Readers by command name. */
export const READERS: Record<string, ReaderSpec> = {
  cat: {},
  head: { short: "nc", long: ["lines", "bytes"] },
  tail: {
    short: "ncs",
    long: ["lines", "bytes", "sleep-interval", "pid", "max-unchanged-stats"],
  },
  wc: { long: ["files0-from"], lists: ["--files0-from"] },
  sort: {
    short: "ktoST",
    long: [
      "key",
      "field-separator",
      "output",
      "buffer-size",
      "temporary-directory",
      "parallel",
      "batch-size",
      "compress-program",
      "files0-from",
      "random-source",
      "sort",
    ],
    reads: ["--random-source"],
    lists: ["--files0-from"],
    outputs: ["-o", "--output"],
    writes: ["-T", "--temporary-directory"],
    runs: ["--compress-program"],
  },
  uniq: {
    short: "fsw",
    long: ["skip-fields", "skip-chars", "check-chars"],
    writtenOperands: [1],
  },
  cut: { short: "bcdf", long: ["bytes", "characters", "delimiter", "fields", "output-delimiter"] },
  nl: {
    short: "bdfhilnsvw",
    long: [
      "body-numbering",
      "section-delimiter",
      "footer-numbering",
      "header-numbering",
      "line-increment",
      "join-blank-lines",
      "number-format",
      "number-separator",
      "starting-line-number",
      "number-width",
    ],
  },
  diff: {
    short: "CUIFLDSXx",
    // `--context[=N]` and `--unified[=N]` take a value only after `=`.
    long: [
      "ignore-matching-lines",
      "show-function-line",
      "label",
      "ifdef",
      "starting-file",
      "exclude-from",
      "exclude",
      "from-file",
      "to-file",
      "horizon-lines",
      "tabsize",
      "width",
      "line-format",
      "old-line-format",
      "new-line-format",
      "unchanged-line-format",
      "old-group-format",
      "new-group-format",
      "changed-group-format",
      "unchanged-group-format",
      "palette",
    ],
    reads: ["-X", "--exclude-from", "--from-file", "--to-file"],
    // diff -r follows the links it meets unless --no-dereference
    flags: ["context", "unified", "recursive", "no-dereference"],
    followsTrees: ["-r", "--recursive"],
  },
  cmp: { short: "in", long: ["ignore-initial", "bytes"] },
  stat: { short: "c", long: ["format", "printf"] },
  file: {
    short: "mfFeP",
    // `-C` compiles the magic file into `NAME.mgc` in the cwd.
    names: ["-C", "--compile"],
    flags: ["compile", "uncompress", "uncompress-noreport"],
    long: ["magic-file", "files-from", "separator", "exclude", "parameter", "exclude-quiet"],
    // `-z` forks `zstd -cd`, `lzip -cdq`, … (along PATH) for the formats it does not decompress
    runs: ["-z", "-Z", "--uncompress", "--uncompress-noreport"],
    reads: ["-m", "--magic-file"],
    lists: ["-f", "--files-from"],
  },
  // `-c` reads the files a checksum list names.
  md5sum: { flags: ["check"], lists: ["-c", "--check"] },
  sha256sum: { flags: ["check"], lists: ["-c", "--check"] },
  base64: { short: "w", long: ["wrap"] },
  od: {
    short: "AjNStw",
    long: ["address-radix", "skip-bytes", "read-bytes", "format", "endian"],
    flags: ["strings", "width"],
  },
  realpath: { long: ["relative-to", "relative-base"] },
  readlink: {},
  less: {
    short: "bhjkoOpPtTxyz#",
    long: [
      "log-file",
      "LOG-FILE",
      "lesskey-file",
      "lesskey-src",
      "lesskey-content",
      "tag",
      "pattern",
      "prompt",
      "shift",
      "tabs",
    ],
    outputs: ["-o", "-O", "--log-file", "--LOG-FILE"],
    // a lesskey file or text may set LESSOPEN in its `#env` section: less runs it on each file
    runs: ["-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"],
  },
};

/** A less `+CMD` that only moves or searches at start: `+G`, `+F`, `+42`, `+/pattern`. */
const LESS_MOVES = /^\+\+?(\d+|\d*[gGFp%]|[/?][\x20-\x7e]*)$/;

/**
 * less: a reader whose `+CMD` words are keys it types on each file it opens: `+!cmd⏎` runs a
 * shell command, `+s FILE` saves, `+v` runs the editor. Only moves and searches stay exact.
 */
export function less(args: ArgValue[], io: CommandIO): void {
  if (args.some((arg) => arg.text?.startsWith("+") && !LESS_MOVES.test(arg.text))) {
    io.opaque("less runs the keys a +CMD word gives");
    return;
  }
  // after `--` a `+` word is a file
  const end = args.findIndex((arg) => arg.text === "--");
  const words = args.filter((arg, i) => (end >= 0 && i > end) || !arg.text?.startsWith("+"));
  reader(READERS.less)(words, io);
}

// ---- search tools -------------------------------------------------------------------------

/**
 * A handler like `reader` that reads the working directory when given no operand, and with a
 * `followsTrees` option (`ls -L`, `du -L`, `tree -l`) the trees the links below lead to.
 */
export function lister(spec: ReaderSpec): CommandHandler {
  return (args, io) => {
    const parsed = optionFiles(args, spec, io);
    if (parsed === null) return;
    if (parsed.operands.length === 0) io.cwd("fs_read");
    eachPath(io, "fs_read", parsed.operands);
    if (!hasOption(parsed, ...spec.followsTrees ?? [])) return;
    if (parsed.operands.length === 0) io.followedTree(null);
    for (const operand of parsed.operands) io.followedTree(operand);
  };
}
