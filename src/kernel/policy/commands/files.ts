/** Commands that copy, move, delete, create or change files (coreutils and dd). */
import type { FsKind } from "../effect_types.ts";
import {
  type ArgValue,
  type CommandHandler,
  type CommandIO,
  eachOutput,
  eachPath,
  STATIC,
} from "./command_io.ts";
import { hasOption, optionValues, parse, type Parsed } from "./_getopt.ts";
import type { ReaderSpec } from "./readers.ts";

/**
 * cp/mv/install: sources are `sourceKind`, the last operand or `-t` directory is written. Given
 * `reshapes` (cp), a destination is an output, data written into it, unless one of those options
 * also sets its mode or owner or replaces it. `replaces` (install always, cp with
 * `--remove-destination`): each destination file is removed and made anew, so a link there is
 * replaced, not written through.
 */
export function transfer(
  sourceKind: FsKind,
  spec: ReaderSpec,
  reshapes: readonly string[] | null = null,
  replaces: boolean | readonly string[] = false,
): CommandHandler {
  return (args, io) => {
    const parsed = parse(args, spec, io);
    if (parsed === null) return;
    if (spec.runs && hasOption(parsed, ...spec.runs)) {
      io.opaque("runs another program");
      return;
    }
    if (backs(parsed)) {
      io.opaque("backup files");
      return;
    }
    // mv moves links as they are; cp copies them as links when recursive or told to, and
    // writes its data through the links the destination already holds.
    const moves = sourceKind === "fs_delete";
    const links = moves || hasOption(parsed, ...COPIES_LINKS);
    const output = reshapes !== null && !hasOption(parsed, ...reshapes);
    const replace = replaces === true || (replaces !== false && hasOption(parsed, ...replaces));
    const use = replace ? "replace" : output ? "output" : "operand";
    const write = (dest: ArgValue, sources: readonly ArgValue[]) =>
      moves ? io.link(dest, sources) : io.link(dest, sources, { links, use });
    if (hasOption(parsed, "-d", "--directory")) {
      eachPath(io, "fs_write", parsed.operands);
      for (const operand of parsed.operands) io.parents(operand);
      return;
    }
    const targets = optionValues(parsed, "-t", "--target-directory");
    if (hasOption(parsed, "--parents")) {
      copyParents(io, targets, parsed.operands, sourceKind, write);
      return;
    }
    // install -D makes the destination's missing parents (with -t, the directory itself too)
    const makes = hasOption(parsed, "-D");
    for (const target of makes ? targets : []) {
      io.parents(target.text === null ? target : STATIC(`${target.text}/.`));
    }
    if (makes && targets.length === 0 && parsed.operands.length > 1) {
      io.parents(parsed.operands.at(-1)!);
    }
    if (targets.length > 0) {
      for (const target of targets) write(target, parsed.operands);
      eachPath(io, sourceKind, parsed.operands);
      return;
    }
    const operands = parsed.operands;
    if (operands.length === 0) return;
    // cp -rL copies what the links below its sources lead to
    const recursive = hasOption(parsed, "-r", "-R", "--recursive", "-a", "--archive");
    if (recursive && hasOption(parsed, "-L", "--dereference")) {
      for (const source of operands.slice(0, -1)) io.followedTree(source);
    }
    if (operands.length === 1) {
      io.path(sourceKind, operands[0]);
      return;
    }
    eachPath(io, sourceKind, operands.slice(0, -1));
    write(operands.at(-1)!, operands.slice(0, -1));
  };
}

/**
 * cp --parents: each source SRC/F goes to DST/SRC/F, the directories on the way made as needed,
 * written through the links the ones there already are.
 */
function copyParents(
  io: CommandIO,
  targets: readonly ArgValue[],
  operands: readonly ArgValue[],
  sourceKind: FsKind,
  write: (dest: ArgValue, sources: readonly ArgValue[]) => void,
): void {
  const dest = targets.length > 0 ? targets.at(-1) : operands.at(-1);
  const sources = targets.length > 0 ? operands : operands.slice(0, -1);
  if (dest?.text == null || targets.length > 1 || sources.some((s) => s.text === null)) {
    io.opaque("cp --parents with a dynamic or second destination");
    return;
  }
  eachPath(io, sourceKind, sources);
  for (const source of sources) {
    const dir = source.text!.replace(/\/*[^/]*\/*$/, "");
    const into = dir === "" ? dest : STATIC(`${dest.text}/${dir}`);
    if (dir !== "") io.parents(STATIC(`${into.text}/.`));
    write(into, [source]);
  }
}

/**
 * Options of cp, mv, ln and install with a value, beside theirs: `--backup[=CONTROL]` is a flag
 * here so that its abbreviations (`--back`) resolve.
 */
export const BACKS = { short: "St", long: ["suffix", "target-directory"], flags: ["backup"] };

/**
 * Whether GNU cp, mv, ln or install keeps a backup of each file it replaces (a file no operand
 * names): `-b`, `--backup[=CONTROL]`, or a suffix, which implies `--backup`.
 */
function backs(parsed: Parsed): boolean {
  return hasOption(parsed, "-b", "--backup", "-S", "--suffix");
}

/** cp options under which a source link is copied as a link. */
const COPIES_LINKS = [
  "-a",
  "-d",
  "-P",
  "-R",
  "-r",
  "-s",
  "-l",
  "--archive",
  "--no-dereference",
  "--recursive",
  "--symbolic-link",
  "--link",
];

/** ln: writes the link it creates. */
export function link(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, BACKS, io);
  if (parsed === null) return;
  if (backs(parsed)) {
    io.opaque("backup files");
    return;
  }
  const targets = optionValues(parsed, "-t", "--target-directory");
  if (targets.length > 0) {
    for (const target of targets) io.link(target, parsed.operands);
    return;
  }
  const operands = parsed.operands;
  if (operands.length === 1) {
    const target = operands[0].text!;
    io.link(STATIC(target.replace(/\/+$/, "").replace(/^.*\//, "")), []);
  } else if (operands.length > 1) {
    io.link(operands.at(-1)!, operands.slice(0, -1));
  }
}

/** tee: writes what it reads into each operand. */
export function tee(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {}, io);
  if (parsed !== null) eachOutput(io, parsed.operands);
}

/** A handler that reports `kind` for every operand. */
export function simple(kind: FsKind, spec: ReaderSpec = {}): CommandHandler {
  return (args, io) => {
    const parsed = parse(args, spec, io);
    if (parsed === null) return;
    eachPath(io, "fs_read", optionValues(parsed, ...(spec.reads ?? [])));
    eachPath(io, kind, parsed.operands);
  };
}

/** mkdir: makes its operands (and their missing parents with `-p`). */
export function mkdir(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, { short: "m", long: ["mode"], flags: ["parents"] }, io);
  if (parsed === null) return;
  eachPath(io, "fs_write", parsed.operands);
  if (!hasOption(parsed, "-p", "--parents")) return;
  for (const operand of parsed.operands) io.parents(operand);
}

/** rmdir: deletes its operands (and their parents with `-p`). */
export function rmdir(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, { flags: ["parents"] }, io);
  if (parsed === null) return;
  const parents = hasOption(parsed, "-p", "--parents");
  for (const operand of parsed.operands) {
    io.path("fs_delete", operand);
    if (!parents || operand.text === null) continue;
    const segments = operand.text.split("/").filter((s) => s !== "");
    for (let n = segments.length - 1; n > 0; n--) {
      const prefix = (operand.text.startsWith("/") ? "/" : "") + segments.slice(0, n).join("/");
      io.path("fs_delete", STATIC(prefix));
    }
  }
}

/** chmod/chown/chgrp: the first operand is the mode or owner unless `--reference` is given. */
export function changeAttributes(isChmod: boolean): CommandHandler {
  return (args, io) => {
    let words = args;
    let modeGiven = false;
    if (isChmod) {
      // GNU chmod takes a word before `--` holding a mode letter after its dash (`-w`,
      // `-w,u+s`, `-g+w`, `-0`) as a mode, each such word joined to the mode: every operand is
      // then a file.
      const end = args.findIndex((a) => a.text === "--");
      const isMode = (a: ArgValue, i: number) =>
        (end < 0 || i < end) && a.text !== null && /^-[^-]*[rwxXstugoa,+=0-7]/.test(a.text);
      if (args.some(isMode)) {
        words = args.filter((a, i) => !isMode(a, i));
        modeGiven = true;
      }
    }
    const parsed = parse(words, { long: ["reference", "from"] }, io);
    if (parsed === null) return;
    const reference = optionValues(parsed, "--reference");
    eachPath(io, "fs_read", reference);
    const targets = parsed.operands.slice(reference.length > 0 || modeGiven ? 0 : 1);
    eachPath(io, "fs_write", targets);
    // chown/chgrp -R -L change what every link below leads to
    if (hasOption(parsed, "-R", "--recursive") && hasOption(parsed, "-L")) {
      for (const target of targets) io.followedTree(target);
    }
  };
}

/** dd: reads `if=`, writes `of=`. */
export function dd(args: ArgValue[], io: CommandIO): void {
  for (const arg of args) {
    const known = arg.text ?? arg.prefix;
    const match = /^(if|of)=(.*)$/s.exec(known);
    if (match === null) {
      if (arg.text === null && !arg.prefix.includes("=")) io.opaque("dynamic argument");
      continue;
    }
    // bash expands `~` after `=` here; resolving it is left to the opaque path.
    const value = arg.text === null || match[2].startsWith("~")
      ? { text: null, single: true, prefix: "" }
      : STATIC(match[2]);
    if (match[1] === "if") io.path("fs_read", value);
    else io.output(value);
  }
}
