/** Tables of bash builtins, trusted program directories and variables analysis treats specially. */
import type { Command } from "../bash/ast.ts";
import type { ArgValue } from "./commands/command_io.ts";

/** Builtins with no effect of their own (K-EFF-3a first row, plus harmless relatives). */
export const QUIET_BUILTINS = new Set([
  "echo",
  "printf",
  "true",
  "false",
  ":",
  "test",
  "[",
  "read",
  "local",
  "return",
  "exit",
  "shift",
  "type",
  "pwd",
  "let",
  "wait",
  "break",
  "continue",
  "umask",
  "getopts",
  "times",
  "caller",
  "dirs",
  "help",
]);

/** Builtins the table sends to `opaque`. */
export const OPAQUE_BUILTINS = new Set(["eval", "source", ".", "exec", "kill", "builtin"]);

/** Every bash builtin; one not handled above is `opaque` without `proc_spawn`. */
export const BASH_BUILTINS = new Set([
  ...QUIET_BUILTINS,
  ...OPAQUE_BUILTINS,
  "alias",
  "bg",
  "bind",
  "cd",
  "command",
  "compgen",
  "complete",
  "compopt",
  "declare",
  "disown",
  "enable",
  "export",
  "fc",
  "fg",
  "hash",
  "jobs",
  "history",
  "logout",
  "mapfile",
  "popd",
  "pushd",
  "readarray",
  "readonly",
  "set",
  "shopt",
  "suspend",
  "trap",
  "typeset",
  "ulimit",
  "unalias",
  "unset",
]);

/** Directories whose programs are trusted to be the commands the table describes. */
export const SYSTEM_DIRS = ["/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"];

/** Variables bash itself changes; never substituted statically. */
export const BASH_MANAGED =
  /^(PWD|OLDPWD|SHLVL|RANDOM|SRANDOM|SECONDS|LINENO|FUNCNAME|PIPESTATUS|OPTIND|OPTARG|_|HISTCMD|BASH.*|EPOCH.*)$/;

/**
 * Variables that change which program runs, what the loader or bash evaluates, or where a known
 * command takes its configuration from (issue 14): set per command or anywhere in the source,
 * the table no longer describes what runs.
 */
export const CONFIG_VARIABLE = new RegExp(
  "^(" + [
    "LD_.*",
    // glibc loads the iconv modules a charset needs from there
    "GCONV_PATH",
    "PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS[0-4]",
    "PROMPT_COMMAND",
    "BASH_ALIASES",
    "BASH_CMDS",
    "BASH_FUNC_.*",
    "BASH_LOADABLES_PATH",
    "BASH_XTRACEFD",
    "EXECIGNORE",
    "GLOBIGNORE",
    "CDPATH",
    "HISTFILE",
    "HOME",
    "XDG_.*",
    ".*RC",
    "GIT_.*",
    "CURL_.*",
    "SSL_CERT_.*",
    "[A-Za-z]+_(proxy|PROXY)",
    "LESS.*",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "RIPGREP_CONFIG_PATH",
    "GREP_OPTIONS",
    "TMPDIR",
    "POSIXLY_CORRECT",
    // curl and wget append the TLS session secrets to the file it names
    "SSLKEYLOGFILE",
    // the OpenSSL configuration loads the providers and engines (shared libraries) it names
    "OPENSSL_(CONF|MODULES|ENGINES)",
  ].join("|") + ")$",
);

/** Per-command assignments that change what a command does (`IFS` changes word splitting too). */
export const DANGEROUS_OVERRIDE = new RegExp(`${CONFIG_VARIABLE.source}|^IFS$`);

/**
 * Session environment that makes every program load or run code of its choosing, or write where
 * it says (`LD_DEBUG_OUTPUT`: the loader's debug log, one file per process).
 */
export const LOADER_VARIABLE = /^(LD_.*|GCONV_PATH|BASH_ENV|ENV|BASH_FUNC_.*)$/;

/** The keyword or declaration builtin a compound command starts with, which an alias may replace. */
export function leadingKeyword(cmd: Command): string | null {
  switch (cmd.type) {
    case "DeclClause":
      return (cmd as { variant: string }).variant;
    case "LetClause":
      return "let";
    case "TestClause":
      return "[[";
    case "TimeClause":
      return "time";
    case "CoprocClause":
      return "coproc";
    case "IfClause":
      return "if";
    case "WhileClause":
      return (cmd as { until: boolean }).until ? "until" : "while";
    case "ForClause":
      return "for";
    case "CaseClause":
      return "case";
    case "Block":
      return "{";
    default:
      return null;
  }
}

/** A bash variable name. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Redirection targets that touch no file of their own (K-EFF-3): a path below `/dev/fd/N` is an
 * entry of the directory that descriptor may hold, so it is a path like any other.
 */
export function isSpecialDevice(path: string): boolean {
  return path === "/dev/null" || path === "/dev/tty" || namedDescriptor(path) !== null;
}

/**
 * The descriptor `path` names (`/dev/stderr` → "2", `/dev/fd/3` → "3"), or null: opening such a
 * name opens the descriptor's file anew (Linux), in the mode asked.
 */
export function namedDescriptor(path: string): string | null {
  const std = ["/dev/stdin", "/dev/stdout", "/dev/stderr"].indexOf(path);
  if (std >= 0) return String(std);
  return /^\/dev\/fd\/(\d+)$/.exec(path)?.[1].replace(/^0+(?=\d)/, "") ?? null;
}

/**
 * Devices that give the same bytes to every reader and keep nothing: reading one, as an operand or
 * a redirection, reveals and changes nothing (`cat /dev/null > f`, `head -c 16 /dev/urandom`).
 */
export function isInertSource(path: string): boolean {
  return ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"].includes(path);
}

/** `trap` forms that install no command: listing, resetting, ignoring. */
export function harmlessTrap(args: ArgValue[]): boolean {
  const words = args.filter((arg) => arg.text !== "--");
  if (words.length === 0) return true;
  const first = words[0].text;
  if (first === "-l" || first === "-p" || first === "-" || first === "") return true;
  // `trap SIGNAL` alone resets it.
  return words.length === 1 && first !== null && /^(SIG)?[A-Z0-9+-]+$/.test(first);
}
