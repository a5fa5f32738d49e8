/**
 * xxd: reads its first operand, writes its second. Its options are single-dash words that xxd
 * matches by prefix (`-c8`, `-cols 8`, `-capitalize` all start with `-c`), so it has its own
 * table: an option word it does not know makes the call opaque rather than shift the operands.
 */
import { type ArgValue, type CommandIO, eachOutput, eachPath } from "./command_io.ts";

/** Options taking a value, by letter, with the long spelling that also takes the next word. */
const VALUED: Record<string, string> = {
  c: "-cols",
  g: "-groupsize",
  l: "-len",
  o: "-offset",
  s: "-seek",
  n: "-name",
  R: "",
};

/** Flags, as xxd spells them (a prefix of the long form is the same flag). */
const FLAGS = [
  "-a",
  "-autoskip",
  "-b",
  "-bits",
  "-C",
  "-capitalize",
  "-E",
  "-EBCDIC",
  "-e",
  "-i",
  "-include",
  "-p",
  "-ps",
  "-postscript",
  "-plain",
  "-r",
  "-revert",
  "-u",
  "-uppercase",
  "-d",
  "-h",
  "-help",
  "-v",
  "-version",
];

/** xxd [options] [infile [outfile]]. */
export function xxd(args: ArgValue[], io: CommandIO): void {
  const operands: ArgValue[] = [];
  for (let i = 0; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      io.opaque("dynamic argument");
      return;
    }
    if (operands.length > 0 || text === "-" || !text.startsWith("-")) {
      operands.push(args[i]);
      continue;
    }
    if (text === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (FLAGS.includes(text)) continue;
    const long = VALUED[text[1]];
    if (long === undefined) {
      io.opaque(`xxd option ${text}`);
      return;
    }
    // `-c` or `-cols` take the next word; `-c16` carries its value.
    if (text.length === 2 || text === long) i++;
    else if (
      !/^-.[-+]?(0[xX][0-9a-fA-F]+|[0-9]+|always|auto|never|[A-Za-z_][A-Za-z0-9_]*)$/.test(text)
    ) {
      io.opaque(`xxd option ${text}`);
      return;
    }
  }
  if (operands.length > 2) {
    io.opaque("xxd with more than two files");
    return;
  }
  eachPath(io, "fs_read", operands.slice(0, 1));
  eachOutput(io, operands.slice(1));
}
