/**
 * Builtin arguments that make bash evaluate code or change how later words and commands are read
 * (issue 14): `set -x` evaluates `PS4`, `set -a` exports every assignment, `shopt -s
 * expand_aliases`-like options change expansion, `jobs -x` runs a command, and a variable name
 * with a subscript (`read 'a[$(cmd)]'`) evaluates the subscript. Each returns the reason the
 * call is opaque, or null when it is followed exactly.
 */
import type { ArgValue } from "./commands/command_io.ts";

/** `set` option letters that change nothing the analysis models. */
const SAFE_SET_LETTERS = /^[eufCnhbmBtHTEv]+$/;

/** `set -o` names that change nothing the analysis models. */
const SAFE_SET_NAMES = new Set([
  "errexit",
  "nounset",
  "noglob",
  "noclobber",
  "noexec",
  "hashall",
  "notify",
  "monitor",
  "braceexpand",
  "onecmd",
  "histexpand",
  "history",
  "ignoreeof",
  "interactive-comments",
  "emacs",
  "vi",
  "errtrace",
  "functrace",
  "pipefail",
  "verbose",
  "nolog",
]);

/** `shopt` options that change nothing the analysis models (glob matching stays literal). */
const SAFE_SHOPT = new Set([
  "checkwinsize",
  "cmdhist",
  "histappend",
  "histreedit",
  "histverify",
  "lithist",
  "xpg_echo",
  "nocasematch",
  "nullglob",
  "failglob",
  "dotglob",
  "globstar",
  "nocaseglob",
  "extglob",
  "globasciiranges",
  "checkhash",
  "checkjobs",
  "huponexit",
  "inherit_errexit",
  "interactive_comments",
  "progcomp",
  "progcomp_alias",
  "hostcomplete",
  "force_fignore",
  "complete_fullquote",
  "direxpand",
  "gnu_errfmt",
  "localvar_unset",
  "mailwarn",
  "no_empty_cmd_completion",
  "shift_verbose",
  "noexpand_translation",
  "varredir_close",
]);

/** `set` arguments: only options in {@link SAFE_SET_LETTERS} / {@link SAFE_SET_NAMES} are turned on. */
export function setReason(args: readonly ArgValue[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) return "dynamic set option";
    if (text === "--" || text === "-" || !/^[-+]/.test(text)) return null;
    const letters = text.slice(1).replace("o", "");
    if (text.startsWith("-") && letters !== "" && !SAFE_SET_LETTERS.test(letters)) {
      return `set ${text}`;
    }
    if (text.includes("o")) {
      const name = args[++i]?.text;
      if (name === undefined) return null;
      if (name === null) return "dynamic set option";
      if (text.startsWith("-") && !SAFE_SET_NAMES.has(name)) return `set -o ${name}`;
    }
  }
  return null;
}

/** `shopt` arguments: setting or unsetting an option outside {@link SAFE_SHOPT} is opaque. */
export function shoptReason(args: readonly ArgValue[]): string | null {
  const texts = args.map((arg) => arg.text);
  if (texts.some((text) => text === null)) return "dynamic shopt option";
  const flags = texts.filter((text) => text!.startsWith("-")).join("");
  const names = texts.filter((text) => !text!.startsWith("-")) as string[];
  if (!/[su]/.test(flags)) return null;
  if (flags.includes("o")) {
    return names.length === 0 || names.some((name) => !SAFE_SET_NAMES.has(name))
      ? "shopt -o option"
      : null;
  }
  if (names.length === 0) return flags.includes("s") ? "shopt -s of every option" : null;
  const unsafe = names.find((name) => !SAFE_SHOPT.has(name));
  return unsafe === undefined ? null : `shopt ${unsafe}`;
}

/** `jobs -x COMMAND` runs COMMAND. */
export function jobsReason(args: readonly ArgValue[]): string | null {
  return args.some((arg) => arg.text === null || /^-[^-]*x/.test(arg.text)) ? "jobs -x" : null;
}

/** A variable name with at most a literal index. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\[([0-9]+|@|\*)\])?$/;

/** Builtins that take variable names as words (their subscripts are evaluated). */
const NAMING_BUILTINS = new Set([
  "read",
  "printf",
  "mapfile",
  "readarray",
  "getopts",
  "wait",
  "unset",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "test",
  "[",
]);

/**
 * Whether a builtin that names variables gets a name with a subscript that is not a literal
 * index: bash evaluates it (`read 'a[$(cmd)]'`, `test -v 'a[$(cmd)]'`).
 */
export function subscriptReason(name: string, args: readonly ArgValue[]): string | null {
  if (!NAMING_BUILTINS.has(name)) return null;
  if ((name === "test" || name === "[") && testNamesByData(args)) {
    return "subscript evaluated from data";
  }
  for (const arg of args) {
    const text = arg.text ?? arg.prefix;
    const subscripted = /^[A-Za-z_][A-Za-z0-9_]*\[/.exec(text);
    if (subscripted === null) continue;
    const nameOnly = text.replace(/=.*$/s, "").replace(/\+$/, "");
    if (arg.text === null || !PLAIN_NAME.test(nameOnly)) return "subscript evaluated from data";
  }
  return null;
}

/**
 * Whether `test`'s `-v` may get a variable name from data: `-v` before a dynamic word, or a
 * dynamic word that may be `-v` (or split into it and a name) before another dynamic word.
 */
function testNamesByData(args: readonly ArgValue[]): boolean {
  return args.some((arg, i) => {
    const next = args[i + 1];
    if (arg.text !== null) return arg.text === "-v" && next !== undefined && next.text === null;
    if (!"-v".startsWith(arg.prefix.slice(0, 2))) return false;
    return !arg.single || (next !== undefined && next.text === null);
  });
}
