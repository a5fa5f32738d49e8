/** Tables of bash builtins, trusted program directories and variables analysis treats specially. */
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
  "shopt",
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
  "jobs",
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
  "history",
  "logout",
  "mapfile",
  "popd",
  "pushd",
  "readarray",
  "readonly",
  "set",
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

/** Per-command assignments that change which program runs or what it executes. */
export const DANGEROUS_OVERRIDE =
  /^(LD_.*|PATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|GIT_.*|PAGER|LESSOPEN|LESSCLOSE|BASH_FUNC_.*)$/;

/** A bash variable name. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Redirection targets that touch no file (K-EFF-3). */
export function isSpecialDevice(path: string): boolean {
  return ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"].includes(path) ||
    path.startsWith("/dev/fd/");
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
