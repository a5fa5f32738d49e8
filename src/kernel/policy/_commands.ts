/**
 * The known-command table (K-EFF-3a): what each external command does to files, network and
 * environment given its arguments. Reads may be over-approximated; writes, deletes and
 * connections never under-approximated: whatever a handler cannot follow is `opaque`.
 */
import type { FlagKind, FsKind, NamesKind } from "./effects.ts";
import { scanSedScript } from "./_sed_script.ts";

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
  cwd(kind: FsKind): void;
  names(kind: NamesKind, names: string[]): void;
  flag(kind: FlagKind): void;
  connect(host: string, port: number): void;
  opaque(reason: string): void;
}

/** Effects of one known command, given its arguments after argv0. */
export type CommandHandler = (args: ArgValue[], io: CommandIO) => void;

/** Handler for a command name (basename), or undefined when the command is not in the table. */
export function knownCommand(name: string): CommandHandler | undefined {
  return Object.hasOwn(TABLE, name) ? TABLE[name] : undefined;
}

// ---- option parsing ---------------------------------------------------------------------------

/** Which options take a value. */
interface OptionSpec {
  /** Short option letters followed by a value (attached or the next word). */
  short?: string;
  /** Short option letters whose value may only be attached (`-i.bak`). */
  attached?: string;
  /** Long option names (without `--`) followed by a value. */
  long?: readonly string[];
  /** Long options without a value that a handler looks at, so their abbreviations resolve. */
  flags?: readonly string[];
}

interface Parsed {
  operands: ArgValue[];
  /** Options in order; `name` is `-x` or `--name`. */
  options: { name: string; value: ArgValue | null }[];
  /** Why the words cannot be followed: a dynamic word where an option could be, or an ambiguous abbreviation. */
  ambiguous: string | null;
}

const STATIC = (text: string): ArgValue => ({ text, single: true, prefix: text });

/** A long option name as given, resolved like getopt_long: exact, else a unique prefix. */
function resolveLong(given: string, spec: OptionSpec): string | null | typeof AMBIGUOUS {
  const known = [...spec.long ?? [], ...spec.flags ?? []];
  if (known.includes(given)) return given;
  const matches = known.filter((name) => name.startsWith(given));
  if (matches.length > 1) return AMBIGUOUS;
  return matches[0] ?? null;
}

const AMBIGUOUS = Symbol("ambiguous");

/**
 * GNU-style option parsing; after `--` every word is an operand. Long options may be
 * abbreviated (`--targ=D` is `--target-directory=D`), so names resolve against the spec.
 */
function parseOptions(args: readonly ArgValue[], spec: OptionSpec): Parsed {
  const parsed: Parsed = { operands: [], options: [], ambiguous: null };
  const long = new Set(spec.long ?? []);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.text === null) {
      if (!arg.single || arg.prefix === "" || arg.prefix.startsWith("-")) {
        parsed.ambiguous = "dynamic argument";
      }
      parsed.operands.push(arg);
      continue;
    }
    const text = arg.text;
    if (text === "--") {
      parsed.operands.push(...args.slice(i + 1));
      break;
    }
    if (text.startsWith("--")) {
      const eq = text.indexOf("=");
      const given = text.slice(2, eq < 0 ? undefined : eq);
      const resolved = resolveLong(given, spec);
      if (resolved === AMBIGUOUS) {
        parsed.ambiguous = `ambiguous option --${given}`;
        continue;
      }
      const name = `--${resolved ?? given}`;
      if (eq >= 0) {
        parsed.options.push({ name, value: STATIC(text.slice(eq + 1)) });
      } else if (resolved !== null && long.has(resolved)) {
        parsed.options.push({ name, value: args[i + 1] ?? null });
        i++;
      } else {
        parsed.options.push({ name, value: null });
      }
      continue;
    }
    if (text.startsWith("-") && text.length > 1) {
      for (let j = 1; j < text.length; j++) {
        const letter = text[j];
        const rest = text.slice(j + 1);
        if (spec.attached?.includes(letter)) {
          parsed.options.push({ name: `-${letter}`, value: rest === "" ? null : STATIC(rest) });
          break;
        }
        if (spec.short?.includes(letter)) {
          if (rest !== "") {
            parsed.options.push({ name: `-${letter}`, value: STATIC(rest) });
          } else {
            parsed.options.push({ name: `-${letter}`, value: args[i + 1] ?? null });
            i++;
          }
          break;
        }
        parsed.options.push({ name: `-${letter}`, value: null });
      }
      continue;
    }
    parsed.operands.push(arg);
  }
  return parsed;
}

/** Values of the options named in `names`. */
function optionValues(parsed: Parsed, ...names: string[]): ArgValue[] {
  return parsed.options.filter((o) => names.includes(o.name) && o.value !== null)
    .map((o) => o.value!);
}

function hasOption(parsed: Parsed, ...names: string[]): boolean {
  return parsed.options.some((o) => names.includes(o.name));
}

/** Parses and reports `opaque` for words it cannot follow; null when it did. */
function parse(args: readonly ArgValue[], spec: OptionSpec, io: CommandIO): Parsed | null {
  const parsed = parseOptions(args, spec);
  if (parsed.ambiguous !== null) {
    io.opaque(parsed.ambiguous);
    return null;
  }
  return parsed;
}

/** Reports `kind` for each operand, skipping `-` (standard input/output). */
function eachPath(io: CommandIO, kind: FsKind, operands: readonly ArgValue[]): void {
  for (const operand of operands) if (operand.text !== "-") io.path(kind, operand);
}

// ---- readers ----------------------------------------------------------------------------------

interface ReaderSpec extends OptionSpec {
  /** Options whose value is a file that is read. */
  reads?: readonly string[];
  /** Options whose value is a file that is written. */
  writes?: readonly string[];
  /** Options that make the command run other programs. */
  runs?: readonly string[];
  /** Options naming a file that lists more files to read, which analysis cannot see. */
  lists?: readonly string[];
  /** Operand positions (0-based) that are written instead of read. */
  writtenOperands?: readonly number[];
}

/** Reports `opaque` when `spec.runs` or `spec.lists` options are given; true when it did. */
function unfollowed(spec: ReaderSpec, parsed: Parsed, io: CommandIO): boolean {
  if (spec.runs && hasOption(parsed, ...spec.runs)) {
    io.opaque("runs another program");
    return true;
  }
  if (spec.lists && hasOption(parsed, ...spec.lists)) {
    io.opaque("reads the files a file names");
    return true;
  }
  return false;
}

function reader(spec: ReaderSpec): CommandHandler {
  return (args, io) => {
    const parsed = parse(args, spec, io);
    if (parsed === null || unfollowed(spec, parsed, io)) return;
    eachPath(io, "fs_read", optionValues(parsed, ...(spec.reads ?? [])));
    eachPath(io, "fs_write", optionValues(parsed, ...(spec.writes ?? [])));
    parsed.operands.forEach((operand, index) => {
      if (operand.text === "-") return;
      io.path(spec.writtenOperands?.includes(index) ? "fs_write" : "fs_read", operand);
    });
  };
}

const READERS: Record<string, ReaderSpec> = {
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
    writes: ["-o", "--output", "-T", "--temporary-directory"],
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
    flags: ["context", "unified"],
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
  },
  cmp: { short: "in", long: ["ignore-initial", "bytes"] },
  stat: { short: "c", long: ["format", "printf"] },
  file: {
    short: "mfFeP",
    long: ["magic-file", "files-from", "separator", "exclude", "parameter", "exclude-quiet"],
    reads: ["-m", "--magic-file"],
    lists: ["-f", "--files-from"],
  },
  // `-c` reads the files a checksum list names.
  md5sum: { flags: ["check"], lists: ["-c", "--check"] },
  sha256sum: { flags: ["check"], lists: ["-c", "--check"] },
  base64: { short: "w", long: ["wrap"] },
  xxd: { short: "cglsonCR", writtenOperands: [1] },
  od: {
    short: "AjNStw",
    long: ["address-radix", "skip-bytes", "read-bytes", "format", "endian"],
    flags: ["strings", "width"],
  },
  realpath: { long: ["relative-to", "relative-base"] },
  readlink: {},
  less: {
    short: "bhjkoOpPtTxyz#",
    long: ["log-file", "LOG-FILE", "lesskey-file", "tag", "pattern", "prompt", "shift", "tabs"],
    reads: ["-k", "--lesskey-file"],
    writes: ["-o", "-O", "--log-file", "--LOG-FILE"],
  },
};

// ---- search tools -------------------------------------------------------------------------

function grep(args: ArgValue[], io: CommandIO): void {
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
}

function ripgrep(args: ArgValue[], io: CommandIO): void {
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
  }, io);
  if (parsed === null) return;
  if (hasOption(parsed, "--pre", "--hostname-bin")) {
    io.opaque("runs another program");
    return;
  }
  eachPath(io, "fs_read", optionValues(parsed, "-f", "--file", "--ignore-file"));
  const patternGiven = hasOption(parsed, "-e", "-f", "--regexp", "--file");
  const files = patternGiven ? parsed.operands : parsed.operands.slice(1);
  if (files.length === 0) io.cwd("fs_read");
  eachPath(io, "fs_read", files);
}

function jq(args: ArgValue[], io: CommandIO): void {
  let filter: ArgValue | null = null;
  let positionalArgs = false;
  const files: ArgValue[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const text = arg.text;
    if (text === null) {
      if (!arg.single || arg.prefix === "" || arg.prefix.startsWith("-")) {
        io.opaque("dynamic argument");
        return;
      }
    } else if (text === "--args" || text === "--jsonargs") {
      positionalArgs = true;
      continue;
    } else if (["--arg", "--argjson"].includes(text)) {
      i += 2;
      continue;
    } else if (["--slurpfile", "--rawfile"].includes(text)) {
      if (args[i + 2]) io.path("fs_read", args[i + 2]);
      i += 2;
      continue;
    } else if (["-f", "--from-file", "-L", "--library-path"].includes(text)) {
      io.opaque("jq program from files");
      return;
    } else if (text === "--indent") {
      i++;
      continue;
    } else if (text.startsWith("-") && text !== "-") {
      continue;
    }
    if (filter === null) filter = arg;
    else if (!positionalArgs) files.push(arg);
  }
  if (filter !== null) {
    if (filter.text === null || /\benv\b|\$ENV\b/.test(filter.text)) {
      io.names("env_read", ["*"]);
    }
    if (filter.text === null || /\b(import|include)\b/.test(filter.text)) {
      io.opaque("jq modules");
    }
  }
  eachPath(io, "fs_read", files);
}

function sed(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
    short: "efl",
    attached: "i",
    long: ["expression", "file", "line-length"],
    flags: ["in-place", "sandbox"],
  }, io);
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
  if (!hasOption(parsed, "--sandbox")) {
    for (const script of scripts) {
      if (script.text === null) {
        io.opaque("dynamic sed script");
        return;
      }
      const scan = scanSedScript(script.text);
      if (scan === null) {
        io.opaque("sed script runs commands or is not understood");
        return;
      }
      for (const file of scan.reads) io.path("fs_read", STATIC(file));
      for (const file of scan.writes) {
        if (file !== "/dev/stdout" && file !== "/dev/stderr") io.path("fs_write", STATIC(file));
      }
    }
  }
  const inPlace = hasOption(parsed, "-i", "--in-place");
  eachPath(io, inPlace ? "fs_write" : "fs_read", operands);
}

// ---- listing ------------------------------------------------------------------------------

function lister(spec: ReaderSpec): CommandHandler {
  return (args, io) => {
    const parsed = parse(args, spec, io);
    if (parsed === null || unfollowed(spec, parsed, io)) return;
    eachPath(io, "fs_read", optionValues(parsed, ...(spec.reads ?? [])));
    eachPath(io, "fs_write", optionValues(parsed, ...(spec.writes ?? [])));
    if (parsed.operands.length === 0) io.cwd("fs_read");
    eachPath(io, "fs_read", parsed.operands);
  };
}

const FIND_ACTIONS = new Set([
  // Reads the starting points from a file.
  "-files0-from",
  "-delete",
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
]);

/** find primaries taking one argument. */
const FIND_UNARY = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-lname",
  "-ilname",
  "-type",
  "-xtype",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-perm",
  "-size",
  "-mtime",
  "-atime",
  "-ctime",
  "-mmin",
  "-amin",
  "-cmin",
  "-used",
  "-newer",
  "-anewer",
  "-cnewer",
  "-samefile",
  "-maxdepth",
  "-mindepth",
  "-links",
  "-inum",
  "-fstype",
  "-printf",
  "-context",
  "-regextype",
]);

function find(args: ArgValue[], io: CommandIO): void {
  let i = 0;
  while (i < args.length && args[i].text !== null && /^-([HLP]|O\d*|D)$/.test(args[i].text!)) {
    i += args[i].text === "-D" ? 2 : 1;
  }
  const roots: ArgValue[] = [];
  for (; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      if (!args[i].single || args[i].prefix === "" || args[i].prefix.startsWith("-")) {
        io.opaque("dynamic argument");
        return;
      }
      roots.push(args[i]);
      continue;
    }
    if (/^[-(!),]/.test(text) && text !== "-") break;
    roots.push(args[i]);
  }
  for (; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      io.opaque("dynamic find expression");
      return;
    }
    if (FIND_ACTIONS.has(text)) {
      io.opaque(`find ${text}`);
      return;
    }
    if (FIND_UNARY.has(text) || /^-newer[amcBt]{2}$/.test(text)) {
      const value = args[i + 1];
      if (value !== undefined && value.text === null && !value.single) {
        io.opaque("dynamic find expression");
        return;
      }
      i++;
    }
  }
  if (roots.length === 0) io.cwd("fs_read");
  eachPath(io, "fs_read", roots);
}

// ---- copying, moving, deleting, creating ------------------------------------------------------

function transfer(sourceKind: FsKind, spec: ReaderSpec): CommandHandler {
  return (args, io) => {
    const parsed = parse(args, spec, io);
    if (parsed === null) return;
    if (spec.runs && hasOption(parsed, ...spec.runs)) {
      io.opaque("runs another program");
      return;
    }
    if (hasOption(parsed, "-d", "--directory")) {
      eachPath(io, "fs_write", parsed.operands);
      return;
    }
    const targets = optionValues(parsed, "-t", "--target-directory");
    if (targets.length > 0) {
      eachPath(io, "fs_write", targets);
      eachPath(io, sourceKind, parsed.operands);
      return;
    }
    const operands = parsed.operands;
    if (operands.length === 0) return;
    if (operands.length === 1) {
      io.path(sourceKind, operands[0]);
      return;
    }
    eachPath(io, sourceKind, operands.slice(0, -1));
    io.path("fs_write", operands.at(-1)!);
  };
}

function link(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, { short: "St", long: ["suffix", "target-directory"] }, io);
  if (parsed === null) return;
  const targets = optionValues(parsed, "-t", "--target-directory");
  if (targets.length > 0) {
    eachPath(io, "fs_write", targets);
    return;
  }
  const operands = parsed.operands;
  if (operands.length === 1) {
    const target = operands[0].text!;
    io.path("fs_write", STATIC(target.replace(/\/+$/, "").replace(/^.*\//, "")));
  } else if (operands.length > 1) {
    io.path("fs_write", operands.at(-1)!);
  }
}

function simple(kind: FsKind, spec: ReaderSpec = {}): CommandHandler {
  return (args, io) => {
    const parsed = parse(args, spec, io);
    if (parsed === null) return;
    eachPath(io, "fs_read", optionValues(parsed, ...(spec.reads ?? [])));
    eachPath(io, kind, parsed.operands);
  };
}

function rmdir(args: ArgValue[], io: CommandIO): void {
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
function changeAttributes(isChmod: boolean): CommandHandler {
  return (args, io) => {
    let words = args;
    let modeGiven = false;
    if (isChmod) {
      // chmod takes modes such as `-w` that look like options.
      const index = args.findIndex((a) => a.text !== null && /^-[rwxXst]+$/.test(a.text));
      if (index >= 0) {
        words = args.filter((_, i) => i !== index);
        modeGiven = true;
      }
    }
    const parsed = parse(words, { long: ["reference", "from"] }, io);
    if (parsed === null) return;
    const reference = optionValues(parsed, "--reference");
    eachPath(io, "fs_read", reference);
    eachPath(io, "fs_write", parsed.operands.slice(reference.length > 0 || modeGiven ? 0 : 1));
  };
}

function dd(args: ArgValue[], io: CommandIO): void {
  for (const arg of args) {
    const known = arg.text ?? arg.prefix;
    const match = /^(if|of)=(.*)$/s.exec(known);
    if (match === null) {
      if (arg.text === null && !arg.prefix.includes("=")) io.opaque("dynamic argument");
      continue;
    }
    const kind = match[1] === "if" ? "fs_read" : "fs_write";
    // bash expands `~` after `=` here; resolving it is left to the opaque path.
    const value = arg.text === null || match[2].startsWith("~")
      ? { text: null, single: true, prefix: "" }
      : STATIC(match[2]);
    io.path(kind, value);
  }
}

// ---- network ----------------------------------------------------------------------------------

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "ftp:": 21 };

/** Reports the connection a URL operand makes; `opaque` when it cannot be followed. */
function connectUrl(io: CommandIO, arg: ArgValue, defaultScheme = "http"): void {
  if (arg.text === null) {
    io.opaque("dynamic URL");
    return;
  }
  const text = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(arg.text)
    ? arg.text
    : `${defaultScheme}://${arg.text}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    io.opaque("unparsable URL");
    return;
  }
  const port = DEFAULT_PORTS[url.protocol];
  if (
    port === undefined || url.hostname === "" || /[[{]/.test(url.hostname.replace(/^\[.*\]$/, ""))
  ) {
    io.opaque(`unsupported URL: ${arg.text}`);
    return;
  }
  io.connect(url.hostname, url.port === "" ? port : Number(url.port));
}

const CURL_VALUE_LONG = [
  "data",
  "data-ascii",
  "data-binary",
  "data-raw",
  "data-urlencode",
  "json",
  "header",
  "proxy-header",
  "output",
  "output-dir",
  "user",
  "user-agent",
  "referer",
  "request",
  "form",
  "form-string",
  "upload-file",
  "write-out",
  "cookie",
  "cookie-jar",
  "config",
  "max-time",
  "connect-timeout",
  "retry",
  "retry-delay",
  "retry-max-time",
  "proxy",
  "preproxy",
  "socks4",
  "socks4a",
  "socks5",
  "socks5-hostname",
  "proxy-user",
  "noproxy",
  "range",
  "continue-at",
  "dump-header",
  "trace",
  "trace-ascii",
  "stderr",
  "unix-socket",
  "abstract-unix-socket",
  "cert",
  "key",
  "cacert",
  "capath",
  "cert-type",
  "key-type",
  "pass",
  "ciphers",
  "resolve",
  "connect-to",
  "interface",
  "limit-rate",
  "netrc-file",
  "url",
  "url-query",
  "max-filesize",
  "max-redirs",
  "speed-limit",
  "speed-time",
  "time-cond",
  "oauth2-bearer",
  "dns-servers",
  "local-port",
  "variable",
  "expect100-timeout",
  "keepalive-time",
  "aws-sigv4",
  "hsts",
  "alt-svc",
  "etag-save",
  "etag-compare",
  "proto",
  "proto-redir",
  "proto-default",
  "login-options",
  "mail-from",
  "mail-rcpt",
  "mail-auth",
  "request-target",
  "ftp-port",
  "quote",
  "telnet-option",
  "create-file-mode",
  "parallel-max",
  "rate",
];

function curl(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
    short: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
    long: CURL_VALUE_LONG,
    // `--parallel` is an exact option, not `--parallel-max` abbreviated.
    flags: ["remote-name", "remote-name-all", "remote-header-name", "parallel"],
  }, io);
  if (parsed === null) return;
  const opaqueOptions = [
    "-K",
    "--config",
    "--unix-socket",
    "--abstract-unix-socket",
    "--connect-to",
    "--resolve",
    "--variable",
  ];
  if (hasOption(parsed, ...opaqueOptions)) {
    io.opaque("curl option not followed");
    return;
  }
  for (const url of [...parsed.operands, ...optionValues(parsed, "--url")]) connectUrl(io, url);
  for (
    const proxy of optionValues(
      parsed,
      "-x",
      "--proxy",
      "--preproxy",
      "--socks4",
      "--socks4a",
      "--socks5",
      "--socks5-hostname",
    )
  ) {
    const text = proxy.text;
    if (text !== null && !text.includes("://") && !/:\d+$/.test(text)) {
      connectUrl(io, STATIC(`${text}:1080`));
    } else connectUrl(io, proxy);
  }
  const writes = optionValues(
    parsed,
    "-o",
    "--output",
    "-c",
    "--cookie-jar",
    "-D",
    "--dump-header",
    "--trace",
    "--trace-ascii",
    "--stderr",
    "--etag-save",
    "--hsts",
    "--alt-svc",
    "--output-dir",
  );
  eachPath(io, "fs_write", writes);
  if (hasOption(parsed, "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name")) {
    if (!hasOption(parsed, "--output-dir")) io.cwd("fs_write");
  }
  eachPath(
    io,
    "fs_read",
    optionValues(
      parsed,
      "-T",
      "--upload-file",
      "--cert",
      "--key",
      "--cacert",
      "--netrc-file",
      "--etag-compare",
    ),
  );
  const dataOptions = [
    "-d",
    "--data",
    "--data-binary",
    "--data-ascii",
    "--data-urlencode",
    "--json",
    "-F",
    "--form",
    "-b",
    "--cookie",
    "-H",
    "--header",
    "--proxy-header",
    "-w",
    "--write-out",
  ];
  for (const option of parsed.options) {
    if (!dataOptions.includes(option.name) || option.value === null) continue;
    const value = option.value;
    if (value.text === null) {
      if (value.prefix === "" || /[@<]/.test(value.prefix)) io.opaque("dynamic curl data");
      continue;
    }
    const file = curlDataFile(option.name, value.text);
    if (file !== null) io.path("fs_read", STATIC(file));
  }
}

/** The file a curl data/form/cookie value reads, if any. */
function curlDataFile(option: string, value: string): string | null {
  if (option === "-b" || option === "--cookie") return value.includes("=") ? null : value;
  if (option === "-F" || option === "--form") {
    const match = /^[^=]*=[@<]([^;]*)/.exec(value);
    return match ? match[1] : null;
  }
  if (option === "--data-urlencode") {
    const match = /^[^=@]*@(.*)$/s.exec(value);
    return match ? match[1] : null;
  }
  return value.startsWith("@") && value !== "@-" ? value.slice(1) : null;
}

function wget(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
    short: "oaeiBtOTwQPUlARDIX",
    long: [
      "output-file",
      "append-output",
      "execute",
      "input-file",
      "base",
      "tries",
      "output-document",
      "timeout",
      "wait",
      "quota",
      "directory-prefix",
      "user-agent",
      "level",
      "accept",
      "reject",
      "domains",
      "include-directories",
      "exclude-directories",
      "post-data",
      "post-file",
      "body-data",
      "body-file",
      "method",
      "header",
      "user",
      "password",
      "http-user",
      "http-password",
      "load-cookies",
      "save-cookies",
      "config",
      "certificate",
      "private-key",
      "ca-certificate",
      "ca-directory",
      "bind-address",
      "limit-rate",
      "referer",
    ],
    flags: ["span-hosts"],
  }, io);
  if (parsed === null) return;
  if (hasOption(parsed, "-e", "--execute", "-i", "--input-file", "--config")) {
    io.opaque("wget option not followed");
    return;
  }
  if (hasOption(parsed, "-H", "--span-hosts")) {
    io.opaque("wget spans hosts");
    return;
  }
  for (const url of parsed.operands) connectUrl(io, url);
  const document = optionValues(parsed, "-O", "--output-document");
  const prefix = optionValues(parsed, "-P", "--directory-prefix");
  if (document.length > 0) eachPath(io, "fs_write", document);
  else if (prefix.length > 0) eachPath(io, "fs_write", prefix);
  else io.cwd("fs_write");
  eachPath(
    io,
    "fs_write",
    optionValues(parsed, "-o", "--output-file", "-a", "--append-output", "--save-cookies"),
  );
  eachPath(
    io,
    "fs_read",
    optionValues(
      parsed,
      "--post-file",
      "--body-file",
      "--load-cookies",
      "--certificate",
      "--private-key",
      "--ca-certificate",
    ),
  );
}

// ---- git, date, env ---------------------------------------------------------------------------

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

function git(args: ArgValue[], io: CommandIO): void {
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
}

function date(args: ArgValue[], io: CommandIO): void {
  io.flag("time");
  const parsed = parse(args, {
    short: "dfrs",
    attached: "I",
    long: ["date", "file", "reference", "set"],
  }, io);
  if (parsed === null) return;
  eachPath(io, "fs_read", optionValues(parsed, "-f", "--file", "-r", "--reference"));
}

function env(args: ArgValue[], io: CommandIO): void {
  for (let i = 0; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      io.opaque("dynamic argument");
      return;
    }
    if (["-i", "--ignore-environment", "-0", "--null", "-"].includes(text)) continue;
    if (text === "-u" || text === "--unset") {
      i++;
      continue;
    }
    if (text.startsWith("--unset=") || /^-u./.test(text)) continue;
    if (!text.startsWith("-") && /^[^=]+=/.test(text)) continue;
    io.opaque(text.startsWith("-") ? `env option ${text}` : "env runs a command");
    return;
  }
  io.names("env_read", ["*"]);
}

function printenv(args: ArgValue[], io: CommandIO): void {
  const names = args.filter((arg) => arg.text === null || !arg.text.startsWith("-"));
  if (names.length === 0 || names.some((arg) => arg.text === null)) {
    io.names("env_read", ["*"]);
    return;
  }
  io.names("env_read", names.map((arg) => arg.text!));
}

const NOTHING: CommandHandler = () => {};

/** The table, keyed by command basename. */
const TABLE: Record<string, CommandHandler> = {
  ...Object.fromEntries(Object.entries(READERS).map(([name, spec]) => [name, reader(spec)])),
  grep,
  egrep: grep,
  fgrep: grep,
  rg: ripgrep,
  jq,
  sed,
  ls: lister({
    short: "ITw",
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
    long: ["charset", "filelimit", "timefmt", "sort", "hintro", "houtro", "infofile"],
    writes: ["-o"],
  }),
  find,
  cp: transfer("fs_read", {
    short: "St",
    long: ["suffix", "target-directory", "sparse", "no-preserve"],
  }),
  install: transfer("fs_read", {
    short: "mogSt",
    long: ["mode", "owner", "group", "suffix", "target-directory", "strip-program"],
    flags: ["directory", "strip"],
    runs: ["--strip-program"],
  }),
  mv: transfer("fs_delete", { short: "St", long: ["suffix", "target-directory"] }),
  rm: simple("fs_delete"),
  rmdir,
  unlink: simple("fs_delete"),
  mkdir: simple("fs_write", { short: "m", long: ["mode"] }),
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
  tee: simple("fs_write"),
  ln: link,
  chmod: changeAttributes(true),
  chown: changeAttributes(false),
  chgrp: changeAttributes(false),
  dd,
  curl,
  wget,
  git,
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
  hostname: NOTHING,
  echo: NOTHING,
  printf: NOTHING,
  true: NOTHING,
  false: NOTHING,
  test: NOTHING,
  "[": NOTHING,
  pwd: NOTHING,
};
