/** Completion candidates for bash source at a byte cursor (K-COMP-1). */
import { MAX_COMPLETIONS } from "../../protocol/limits.ts";

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

/** Bytes that end a word. */
const BREAKS = new Set([..." \t\n;&|()<>"].map((c) => c.charCodeAt(0)));
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Completes the word that ends at `cursor` (UTF-8 byte offset, default the end, clamped, moved
 * back to a scalar boundary). Command position offers reserved words, builtins and executables
 * on `path`; elsewhere entries of `cwd` (none when null), directories suffixed `/`, of a
 * directory whose real path `mayList` allows (none else: a listing is a read of it).
 */
export async function complete(
  src: string,
  cursor: number | undefined,
  cwd: string | null,
  path: string,
  mayList: (dir: string) => boolean,
): Promise<Completion> {
  const bytes = encoder.encode(src);
  let end = Math.min(Math.max(cursor ?? bytes.length, 0), bytes.length);
  while (end > 0 && end < bytes.length && (bytes[end] & 0xc0) === 0x80) end--;
  let start = end;
  while (start > 0 && !BREAKS.has(bytes[start - 1])) start--;
  const partial = decoder.decode(bytes.subarray(start, end));
  const before = decoder.decode(bytes.subarray(0, start));
  const candidates = inCommandPosition(before) && !partial.includes("/")
    ? await commandCandidates(partial, path)
    : cwd === null
    ? []
    : await pathCandidates(partial, cwd, mayList);
  const unique = [...new Set(candidates)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { candidates: unique.slice(0, MAX_COMPLETIONS), start };
}

/** Whether the word after `before` is a command name (assignments may precede it). */
function inCommandPosition(before: string): boolean {
  const tokens = before.match(/[;&|()\n]+|\$\(|`|[^\s;&|()`]+/g) ?? [];
  let i = tokens.length - 1;
  while (i >= 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[i])) i--;
  if (i < 0) return true;
  const last = tokens[i];
  return /^[;&|(\n]/.test(last) || last === "$(" || last === "`" || COMMAND_STARTERS.has(last);
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
  cwd: string,
  mayList: (dir: string) => boolean,
): Promise<string[]> {
  const slash = partial.lastIndexOf("/");
  const dirPart = partial.slice(0, slash + 1);
  const prefix = partial.slice(slash + 1);
  const dir = dirPart.startsWith("/") ? dirPart : `${cwd}/${dirPart}`;
  const out: string[] = [];
  try {
    if (!mayList(await Deno.realPath(dir))) return out;
  } catch {
    return out; // missing or unreadable directory
  }
  for (const name of await entries(dir)) {
    if (!name.startsWith(prefix) || (name.startsWith(".") && !prefix.startsWith("."))) continue;
    let isDir = false;
    try {
      isDir = (await Deno.stat(`${dir}/${name}`)).isDirectory;
    } catch {
      // dangling link: offered as a plain name
    }
    out.push(`${dirPart}${name}${isDir ? "/" : ""}`);
  }
  return out;
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
