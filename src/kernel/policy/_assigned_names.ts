/**
 * Which shell variables a simple command assigns in the current shell, for the K-EFF-3 rule that
 * only variables "not assigned earlier in the same source" are substituted statically. Builtins
 * reached through quoting (`\read`) or `command` assign just like plain ones.
 */
import type { Word, WordPart } from "../bash/ast.ts";
import { decodeAnsiC } from "../bash/quote.ts";

/** A variable a command assigns, where its name is written, and whether the value outlives it. */
export interface AssignedName {
  name: string;
  offset: number;
  /** False for `local` and for naked declarations, which leave the value as it was. */
  persistent: boolean;
}

/** What a simple command assigns. */
export interface CommandAssignments {
  /** The builtin that assigns, after quote removal and `command`; null when none does. */
  builtin: string | null;
  names: AssignedName[];
  /** Set when a dynamic word may name an assigned variable, so any variable may change. */
  unknown: boolean;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Builtins that declare variables when reached as plain words (quoted, or after `command`). */
const DECLARATIONS = new Set(["declare", "typeset", "local", "export", "readonly"]);

/** An assigning builtin: option letters taking a value, those naming a variable, and which operands do. */
interface AssigningBuiltin {
  values: string;
  naming: string;
  operands: (operands: readonly Word[]) => readonly Word[];
  /** The variable assigned when the command names none. */
  fallback?: string;
}

const ALL = (operands: readonly Word[]) => operands;
const NONE = () => [];

/** Option letters per bash's `help` text. */
const ASSIGNING: Record<string, AssigningBuiltin> = {
  read: { values: "adinNptu", naming: "a", operands: ALL, fallback: "REPLY" },
  mapfile: { values: "dnOsuCc", naming: "", operands: ALL, fallback: "MAPFILE" },
  readarray: { values: "dnOsuCc", naming: "", operands: ALL, fallback: "MAPFILE" },
  printf: { values: "v", naming: "v", operands: NONE },
  getopts: { values: "", naming: "", operands: (operands) => operands.slice(1, 2) },
  unset: { values: "", naming: "", operands: ALL },
  wait: { values: "p", naming: "p", operands: NONE },
};

const NOTHING: CommandAssignments = { builtin: null, names: [], unknown: false };

/** The variables the simple command `args` (argv words, command name first) assigns. */
export function commandAssignments(args: readonly Word[]): CommandAssignments {
  let i = 0;
  // `command [-p] NAME …` runs builtin NAME in this shell; `-v`/`-V` only describe it.
  while (staticWord(args[i]) === "command") {
    i++;
    while (/^-p+$/.test(staticWord(args[i]) ?? "")) i++;
    if (staticWord(args[i]) === "--") i++;
  }
  const name = staticWord(args[i]);
  if (name === null) return NOTHING;
  const rest = args.slice(i + 1);
  if (DECLARATIONS.has(name)) return { builtin: name, names: declared(name, rest), unknown: false };
  const builtin = ASSIGNING[name];
  if (builtin === undefined) return NOTHING;
  const { names, unknown } = assignedBy(builtin, rest);
  if (builtin.fallback !== undefined) {
    names.push({ name: builtin.fallback, offset: args[i].span.start, persistent: true });
  }
  return { builtin: name, names, unknown };
}

/** Names given to `declare`-like builtins as plain words: `NAME=value` sets, `NAME` alone does not. */
function declared(variant: string, words: readonly Word[]): AssignedName[] {
  const names: AssignedName[] = [];
  for (const word of words) {
    const text = staticWord(word);
    if (text === null || /^[-+]/.test(text)) continue;
    const eq = text.indexOf("=");
    const name = variableName(eq < 0 ? text : text.slice(0, eq).replace(/\+$/, ""));
    if (name !== null) {
      names.push({ name, offset: word.span.start, persistent: variant !== "local" && eq >= 0 });
    }
  }
  return names;
}

/** Names an assigning builtin sets through its naming options and operands. */
function assignedBy(
  builtin: AssigningBuiltin,
  words: readonly Word[],
): { names: AssignedName[]; unknown: boolean } {
  const named: Word[] = [];
  const attached: AssignedName[] = [];
  let unknown = false;
  let i = 0;
  // Options come first (getopt style): `--` or the first non-option word ends them.
  for (; i < words.length; i++) {
    const text = staticWord(words[i]);
    if (text === null) {
      // It may be `-v` (one word of its own, or split from several) naming the next word.
      const alone = i === words.length - 1 && isDoubleQuoted(words[i]);
      if (mayBeOption(words[i]) && !alone) unknown = true;
      break;
    }
    if (text === "--") {
      i++;
      break;
    }
    if (!/^-./.test(text)) break;
    for (let c = 1; c < text.length; c++) {
      const letter = text[c];
      if (!builtin.values.includes(letter)) continue;
      const inline = text.slice(c + 1);
      if (inline !== "") {
        if (builtin.naming.includes(letter)) {
          const name = variableName(inline);
          if (name === null) unknown = true;
          else attached.push({ name, offset: words[i].span.start, persistent: true });
        }
      } else {
        i++;
        if (builtin.naming.includes(letter) && words[i] !== undefined) named.push(words[i]);
      }
      break;
    }
  }
  named.push(...builtin.operands(words.slice(i)));
  const names = [...attached];
  for (const word of named) {
    const text = staticWord(word);
    const name = text === null ? null : variableName(text);
    if (name === null) {
      // A dynamic or odd word in a naming position may still name any variable.
      if (text === null) unknown = true;
      continue;
    }
    names.push({ name, offset: word.span.start, persistent: true });
  }
  return { names, unknown };
}

/** `NAME` or `NAME[index]` → NAME; anything else → null. */
function variableName(text: string): string | null {
  const name = text.replace(/\[.*$/s, "");
  return IDENTIFIER.test(name) ? name : null;
}

/** Whether the word is one double-quoted string, which expands to exactly one word. */
function isDoubleQuoted(word: Word): boolean {
  return word.parts.length === 1 && word.parts[0].type === "DblQuoted";
}

/** Whether a dynamic word could expand to something starting with `-`. */
function mayBeOption(word: Word): boolean {
  let prefix = "";
  for (const part of word.parts) {
    const text = staticPart(part, false);
    if (text === null) break;
    prefix += text;
  }
  return prefix === "" || prefix.startsWith("-");
}

/**
 * Whether bash brace-expands the word (`{a,b}`, `{1..3}`) into several words before any other
 * expansion: only unquoted, unescaped braces, commas and `..` count.
 */
export function hasBraceExpansion(word: Word): boolean {
  const skeleton = word.parts.map((part) =>
    part.type === "Lit"
      ? (part as Extract<WordPart, { type: "Lit" }>).value.replace(/\\./gs, "x")
      : "x"
  ).join("");
  return /\{[^{}]*(,|\.\.)[^{}]*\}/.test(skeleton);
}

/** The value of a word after quote removal, or null when it expands (or is absent). */
export function staticWord(word: Word | undefined): string | null {
  if (word === undefined || hasBraceExpansion(word)) return null;
  let out = "";
  for (const part of word.parts) {
    const text = staticPart(part, false);
    if (text === null) return null;
    out += text;
  }
  return out;
}

function staticPart(part: WordPart, quoted: boolean): string | null {
  switch (part.type) {
    case "Lit": {
      const value = (part as Extract<WordPart, { type: "Lit" }>).value;
      if (quoted) return value.replace(/\\([$`"\\\n])/g, "$1");
      // A leading `~` is a tilde expansion.
      return value.startsWith("~") ? null : value.replace(/\\(.)/gs, "$1");
    }
    case "SglQuoted": {
      const sgl = part as Extract<WordPart, { type: "SglQuoted" }>;
      return sgl.dollar ? decodeAnsiC(sgl.value) : sgl.value;
    }
    case "DblQuoted": {
      let out = "";
      for (const inner of (part as Extract<WordPart, { type: "DblQuoted" }>).parts) {
        const text = staticPart(inner, true);
        if (text === null) return null;
        out += text;
      }
      return out;
    }
    default:
      return null;
  }
}
