/**
 * The known-command table (K-EFF-3a): what each external command does to files, network and
 * environment given its arguments. Reads may be over-approximated; writes, deletes and
 * connections never under-approximated: whatever a handler cannot follow is `opaque`.
 */
import type { CommandHandler } from "./command_io.ts";
import { BSD_READERS, less, lister, reader, READERS } from "./readers.ts";
import { grep, ripgrep } from "./search.ts";
import { jq } from "./jq.ts";
import { bsdSed, sed } from "./sed.ts";
import { find } from "./find.ts";
import { BACKS, changeAttributes, dd, link, mkdir, rmdir, simple, tee, transfer } from "./files.ts";
import { curl } from "./curl.ts";
import { wget } from "./wget.ts";
import { git } from "./git.ts";
import { xxd } from "./xxd.ts";
import { date, env, hostname, NOTHING, printenv } from "./system.ts";

/**
 * Handler for a command name (basename) on `platform` (`Deno.build.os` values), or undefined when
 * the command is not in the table.
 */
export function knownCommand(name: string, platform: string): CommandHandler | undefined {
  if (platform === "darwin" && Object.hasOwn(DARWIN, name)) return DARWIN[name];
  return Object.hasOwn(TABLE, name) ? TABLE[name] : undefined;
}

/** Where macOS tools take other options than GNU ones (issue 15). */
const DARWIN: Record<string, CommandHandler> = {
  ...Object.fromEntries(Object.entries(BSD_READERS).map(([name, spec]) => [name, reader(spec)])),
  sed: bsdSed,
};

/** The table, keyed by command basename. */
const TABLE: Record<string, CommandHandler> = {
  ...Object.fromEntries(Object.entries(READERS).map(([name, spec]) => [name, reader(spec)])),
  less,
  grep,
  egrep: grep,
  fgrep: grep,
  rg: ripgrep,
  jq,
  sed,
  ls: lister({
    short: "ITw",
    followsTrees: ["-L", "--dereference"],
    long: [
      "ignore",
      "hide",
      "width",
      "tabsize",
      "format",
      "sort",
      "time",
      "time-style",
      "block-size",
      "quoting-style",
      "indicator-style",
    ],
  }),
  du: lister({
    short: "BdtX",
    followsTrees: ["-L", "--dereference"],
    // `--time[=WORD]` is not `--time-style` abbreviated.
    flags: ["time"],
    long: [
      "block-size",
      "max-depth",
      "threshold",
      "exclude",
      "exclude-from",
      "files0-from",
      "time-style",
    ],
    reads: ["-X", "--exclude-from"],
    lists: ["--files0-from"],
  }),
  tree: lister({
    short: "LPIoHT",
    followsTrees: ["-l"],
    long: ["charset", "filelimit", "timefmt", "sort", "hintro", "houtro", "infofile"],
    outputs: ["-o"],
    // `-R` (with `-L`) writes a 00Tree.html into each directory at the depth limit and below
    names: ["-R"],
  }),
  find,
  cp: transfer(
    "fs_read",
    {
      short: "St",
      long: ["suffix", "target-directory", "sparse", "no-preserve"],
      flags: ["preserve", "attributes-only", "remove-destination", "context", "backup", "parents"],
    },
    ["-p", "--preserve", "--attributes-only", "--remove-destination", "-Z", "--context"],
    [
      "--remove-destination",
    ],
  ),
  install: transfer(
    "fs_read",
    {
      short: "mogSt",
      long: ["mode", "owner", "group", "suffix", "target-directory", "strip-program"],
      flags: ["directory", "strip", "backup"],
      // `-s` runs `strip` (found along PATH) on each file installed
      runs: ["--strip-program", "-s", "--strip"],
    },
    null,
    true,
  ),
  mv: transfer("fs_delete", BACKS),
  rm: simple("fs_delete"),
  rmdir,
  unlink: simple("fs_delete"),
  mkdir,
  touch: simple("fs_write", {
    short: "drt",
    long: ["date", "reference"],
    reads: ["-r", "--reference"],
  }),
  truncate: simple("fs_write", {
    short: "sr",
    long: ["size", "reference"],
    reads: ["-r", "--reference"],
  }),
  tee,
  ln: link,
  chmod: changeAttributes(true),
  chown: changeAttributes(false),
  chgrp: changeAttributes(false),
  dd,
  curl,
  wget,
  git,
  xxd,
  date,
  env,
  printenv,
  sleep: NOTHING,
  basename: NOTHING,
  dirname: NOTHING,
  seq: NOTHING,
  tr: NOTHING,
  yes: NOTHING,
  whoami: NOTHING,
  id: NOTHING,
  uname: NOTHING,
  hostname,
  echo: NOTHING,
  printf: NOTHING,
  true: NOTHING,
  false: NOTHING,
  test: NOTHING,
  "[": NOTHING,
  pwd: NOTHING,
};
