/** Completion candidates for bash source at a byte cursor (K-COMP-1). */
import { MAX_COMPLETIONS } from "../../protocol/limits.ts";
import { closeFd, openReadNonBlocking, readLinkBytes } from "./fd_calls.ts";
import type { ShellCwd } from "./shell_state.ts";

/** Result of `complete`: candidates replace the bytes from `start` to the cursor. */
export interface Completion {
  candidates: string[];
  start: number;
}

/** bash reserved words. */
const RESERVED_WORDS = [
  "!",
  "[[",
  "]]",
  "case",
  "coproc",
  "do",
  "done",
  "elif",
  "else",
  "esac",
  "fi",
  "for",
  "function",
  "if",
  "in",
  "select",
  "then",
  "time",
  "until",
  "while",
  "{",
  "}",
];

/** bash builtins. */
const BUILTINS = [
  ".",
  ":",
  "[",
  "alias",
  "bg",
  "bind",
  "break",
  "builtin",
  "caller",
  "cd",
  "command",
  "compgen",
  "complete",
  "compopt",
  "continue",
  "declare",
  "dirs",
  "disown",
  "echo",
  "enable",
  "eval",
  "exec",
  "exit",
  "export",
  "false",
  "fc",
  "fg",
  "getopts",
  "hash",
  "help",
  "history",
  "jobs",
  "kill",
  "let",
  "local",
  "logout",
  "mapfile",
  "popd",
  "printf",
  "pushd",
  "pwd",
  "read",
  "readarray",
  "readonly",
  "return",
  "set",
  "shift",
  "shopt",
  "source",
  "suspend",
  "test",
  "times",
  "trap",
  "true",
  "type",
  "typeset",
  "ulimit",
  "umask",
  "unalias",
  "unset",
  "wait",
]; // deno-fmt-ignore

/** Words after which the next word is a command name. */
const COMMAND_STARTERS = new Set([
  "!",
  "if",
  "then",
  "else",
  "elif",
  "while",
  "until",
  "do",
  "time",
  "{",
  "exec",
  "command",
  "builtin",
  "sudo",
  "xargs",
  "nohup",
  "env",
]);

/** Bytes that end a word: 1 at their index. */
const BREAKS = new Uint8Array(256);
for (const c of " \t\n;&|()<>") BREAKS[c.charCodeAt(0)] = 1;

/** Classes of the tokens before a word: a word's character, a blank, an operator, a backquote. */
const enum Cls {
  Word,
  Blank,
  Operator,
  Backquote,
}
/** The class of each ASCII character: blanks are `\s` but newline, which is an operator. */
const ASCII_CLASS = new Uint8Array(128);
for (const c of "\t\v\f\r ") ASCII_CLASS[c.charCodeAt(0)] = Cls.Blank;
for (const c of ";&|()\n") ASCII_CLASS[c.charCodeAt(0)] = Cls.Operator;
ASCII_CLASS["`".charCodeAt(0)] = Cls.Backquote;
const SPACE = /\s/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Completes the word that ends at `cursor` (UTF-8 byte offset, default the end, clamped, moved
 * back to a scalar boundary). Command position offers reserved words, builtins and executables
 * on `path`; elsewhere entries of `cwd` (none when null; by its exact bytes when they are not
 * UTF-8), directories suffixed `/`, of a directory whose real path `mayList` allows (none else: a
 * listing is a read of it).
 */
export async function complete(
  src: string,
  cursor: number | undefined,
  cwd: ShellCwd | string | null,
  path: string,
  mayList: (dir: string) => boolean,
): Promise<Completion> {
  const bytes = encoder.encode(src);
  let end = Math.min(Math.max(cursor ?? bytes.length, 0), bytes.length);
  while (end > 0 && end < bytes.length && (bytes[end] & 0xc0) === 0x80) end--;
  let start = end;
  while (start > 0 && BREAKS[bytes[start - 1]] === 0) start--;
  const partial = decoder.decode(bytes.subarray(start, end));
  const before = decoder.decode(bytes.subarray(0, start));
  const candidates = inCommandPosition(before) && !partial.includes("/")
    ? await commandCandidates(partial, path)
    : cwd === null
    ? []
    : await pathCandidates(partial, typeof cwd === "string" ? { cwd } : cwd, mayList);
  const unique = [...new Set(candidates)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { candidates: unique.slice(0, MAX_COMPLETIONS), start };
}

/** The class of the UTF-16 code unit of `text` at `i`. */
function classAt(text: string, i: number): Cls {
  const c = text.charCodeAt(i);
  if (c < 128) return ASCII_CLASS[c];
  return SPACE.test(text[i]) ? Cls.Blank : Cls.Word;
}

/** Whether the word of `text` from `start` to `end` is an assignment, `NAME=…`. */
function isAssignment(text: string, start: number, end: number): boolean {
  let i = start;
  const c = text.charCodeAt(i);
  if (!(c === 95 || (c | 32) >= 97 && (c | 32) <= 122)) return false;
  for (i++; i < end; i++) {
    const d = text.charCodeAt(i);
    if (d === 61) return true;
    if (!(d === 95 || (d | 32) >= 97 && (d | 32) <= 122 || d >= 48 && d <= 57)) return false;
  }
  return false;
}

/**
 * Whether the operator run that ends `before` at `end` puts a command next: any but one starting
 * with `)`. A `$` that starts a token makes `$(` a token of its own, and the run then starts after it.
 */
function operatorStartsCommand(before: string, end: number): boolean {
  let start = end - 1;
  while (start > 0 && classAt(before, start - 1) === Cls.Operator) start--;
  const dollarOpen = before[start] === "(" && start > 0 && before[start - 1] === "$" &&
    (start === 1 || classAt(before, start - 2) !== Cls.Word);
  if (dollarOpen && ++start === end) return true;
  return before[start] !== ")";
}

/**
 * Whether the word after `before` is a command name (assignments may precede it): after an
 * operator but `)`, `$(`, a backquote or a command-starting word. Reads `before` backwards only as
 * far as that token, so a long source is not split into tokens (E-4).
 */
function inCommandPosition(before: string): boolean {
  let end = before.length;
  while (true) {
    while (end > 0 && classAt(before, end - 1) === Cls.Blank) end--;
    if (end === 0) return true;
    const last = classAt(before, end - 1);
    if (last === Cls.Backquote) return true;
    if (last === Cls.Operator) return operatorStartsCommand(before, end);
    let start = end - 1;
    while (start > 0 && classAt(before, start - 1) === Cls.Word) start--;
    if (!isAssignment(before, start, end)) return COMMAND_STARTERS.has(before.slice(start, end));
    end = start;
  }
}

async function commandCandidates(partial: string, path: string): Promise<string[]> {
  const out = [...RESERVED_WORDS, ...BUILTINS].filter((word) => word.startsWith(partial));
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    for (const name of await entries(dir)) {
      if (!name.startsWith(partial)) continue;
      try {
        const info = await Deno.stat(`${dir}/${name}`);
        if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) out.push(name);
      } catch {
        // dangling link or vanished entry
      }
    }
  }
  return out;
}

async function pathCandidates(
  partial: string,
  cwd: ShellCwd,
  mayList: (dir: string) => boolean,
): Promise<string[]> {
  const slash = partial.lastIndexOf("/");
  const dirPart = partial.slice(0, slash + 1);
  const prefix = partial.slice(slash + 1);
  const held = await holdDir(
    dirPart.startsWith("/")
      ? dirPart
      : cwd.cwdBytes === undefined
      ? `${cwd.cwd}/${dirPart}`
      : new Uint8Array([...cwd.cwdBytes, ...encoder.encode(`/${dirPart}`)]),
  );
  const out: string[] = [];
  if (held === null) return out; // missing or unreadable directory
  try {
    if (!mayList(held.real)) return out;
    for (const name of await entries(held.path)) {
      if (!name.startsWith(prefix) || (name.startsWith(".") && !prefix.startsWith("."))) continue;
      // Deno gives a name that is not UTF-8 with U+FFFD, naming another entry or none: never offered
      if (/[^ -~]/.test(name) && !exists(`${held.path}/${name}`)) continue;
      let isDir = false;
      try {
        isDir = (await Deno.stat(`${held.path}/${name}`)).isDirectory;
      } catch {
        // dangling link: offered as a plain name
      }
      out.push(`${dirPart}${name}${isDir ? "/" : ""}`);
    }
    return out;
  } finally {
    held.close();
  }
}

/** What a sequence that is not UTF-8 reads as in a name the OS gave as text. */
const LOSSY = "\ufffd";
/**
 * What stands for {@link LOSSY} in a real path judged by the grants: a lone surrogate, which no
 * grant's literal text matches, only its wildcards. A directory whose name is not UTF-8 reads as
 * one really named U+FFFD; judged as written, a grant of the latter would let it be listed.
 */
const UNMATCHABLE = "\udcff";

/**
 * The text of a real path as the grants judge it: a path that is not UTF-8 has each
 * {@link LOSSY} replaced by {@link UNMATCHABLE} (any of them may stand for bytes no grant names).
 */
function judgedText(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return decoder.decode(bytes).replaceAll(LOSSY, UNMATCHABLE);
  }
}

/** Whether `path` names an entry (a dangling link too). */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A directory held for listing: its real path, and a path that reaches exactly it. */
interface HeldDir {
  real: string;
  path: string;
  close(): void;
}

/**
 * The directory `dir` (a path ending in `/`) held open (Linux): its real path as the OS resolved it
 * in the open, and `/proc/self/fd/N`, which reaches that very directory however the names on its
 * way change after the check: an agent swapping a symlink in its project between a directory it
 * may list and the kernel's state gets the listing of what was checked. Elsewhere both are the
 * real path. Null when it is missing or not a directory. Given as bytes (a name that is not UTF-8),
 * it is held on Linux only.
 */
async function holdDir(dir: string | Uint8Array): Promise<HeldDir | null> {
  if (Deno.build.os !== "linux") {
    if (typeof dir !== "string") return null; // a Deno path cannot name it
    try {
      const real = await Deno.realPath(dir);
      return { real, path: real, close() {} };
    } catch {
      return null;
    }
  }
  const fd = openReadNonBlocking(dir);
  if (fd < 0) return null;
  const path = `/proc/self/fd/${fd}`;
  try {
    const real = readLinkBytes(path);
    if (real === null) throw new Error("no target");
    return { real: judgedText(real), path, close: () => closeFd(fd) };
  } catch {
    closeFd(fd);
    return null;
  }
}

/** Names in a directory; none when it cannot be read. */
async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch {
    // unreadable or missing directory
  }
  return names;
}
