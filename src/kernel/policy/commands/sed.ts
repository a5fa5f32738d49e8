/** sed: the files its scripts read and write, and in-place edits. */
import { type ArgValue, type CommandIO, eachPath, STATIC } from "./command_io.ts";
import { hasOption, type OptionSpec, optionValues, parse } from "./_getopt.ts";
import { scanSedScript } from "./_sed_script.ts";

/** GNU sed: `-i[SUFFIX]` carries its suffix attached. */
const GNU: OptionSpec = {
  short: "efl",
  attached: "i",
  long: ["expression", "file", "line-length"],
  flags: ["in-place", "follow-symlinks"],
};

/** BSD (macOS) sed: `-i SUFFIX` and `-I SUFFIX` take the next word (`-i ''` for none). */
const BSD: OptionSpec = { short: "efiI" };

/** GNU sed: script reads/writes (`r`, `w`), in-place edits; scripts that run commands are opaque. */
export function sed(args: ArgValue[], io: CommandIO): void {
  sedWith(GNU, args, io);
}

/** BSD sed as macOS ships it (issue 15): the same, with its in-place options. */
export function bsdSed(args: ArgValue[], io: CommandIO): void {
  sedWith(BSD, args, io);
}

function sedWith(spec: OptionSpec, args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, spec, io);
  if (parsed === null) return;
  if (hasOption(parsed, "-f", "--file")) {
    io.opaque("sed script file");
    return;
  }
  const scripts = optionValues(parsed, "-e", "--expression");
  let operands = parsed.operands;
  if (scripts.length === 0) {
    if (operands.length === 0) return;
    scripts.push(operands[0]);
    operands = operands.slice(1);
  }
  // GNU sed joins its -e pieces with newlines (a piece may continue into the next) and parses
  // the whole. `--sandbox` changes nothing here: under POSIXLY_CORRECT a `--sandbox` after the
  // script is a file name, so the script is judged as if sed did not refuse it.
  if (scripts.some((script) => script.text === null)) {
    io.opaque("dynamic sed script");
    return;
  }
  const scan = scanSedScript(scripts.map((script) => script.text).join("\n"));
  if (scan === null) {
    io.opaque("sed script runs commands or is not understood");
    return;
  }
  for (const file of scan.reads) io.path("fs_read", STATIC(file));
  // sed itself writes `w /dev/stdout` and `w /dev/stderr` to its own output streams.
  for (const file of scan.writes) {
    if (file !== "/dev/stdout" && file !== "/dev/stderr") io.output(STATIC(file));
  }
  const inPlace = hasOption(parsed, "-i", "-I", "--in-place");
  if (!inPlace) eachPath(io, "fs_read", operands);
  else if (hasOption(parsed, "--follow-symlinks")) eachPath(io, "fs_write", operands);
  else {
    // sed -i renames its output over each file: a link there is replaced by a file holding
    // what it led to
    for (const operand of operands) if (operand.text !== "-") io.replaced(operand);
  }
  // `-i.bak` also writes each file's backup next to it.
  for (const suffix of optionValues(parsed, "-i", "-I", "--in-place")) {
    if (suffix.text === "") continue;
    if (suffix.text === null || /[*/]/.test(suffix.text)) {
      io.opaque("sed backup suffix");
      return;
    }
    for (const operand of operands) {
      if (operand.text === null) io.opaque("dynamic path");
      else if (operand.text !== "-") io.path("fs_write", STATIC(operand.text + suffix.text));
    }
  }
}
