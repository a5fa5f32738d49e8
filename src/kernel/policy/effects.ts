/**
 * Effects of bash source (K-EFF-1..5): kinds, canonical lists, reversibility, and the derivation
 * entry point over the shoal AST.
 */
import { createHash } from "node:crypto";
import { invalidParams } from "../../protocol/errors.ts";
import { type File, parseBash } from "../bash/ast.ts";
import { Analyzer } from "./_analyzer.ts";
import { EffectSet } from "./_effect_set.ts";

/** Effect kinds in canonical order (the K-EFF-1 table). */
export const EFFECT_KINDS = [
  "fs_read",
  "fs_write",
  "fs_delete",
  "proc_spawn",
  "net_connect",
  "net_listen",
  "env_read",
  "env_write",
  "secret_use",
  "session_write",
  "journal_read",
  "time",
  "opaque",
] as const;

/** One effect kind name in snake form (K-EFF-1). */
export type EffectKind = typeof EFFECT_KINDS[number];

/** Kinds whose effects carry `paths`. */
export type FsKind = "fs_read" | "fs_write" | "fs_delete";
/** Kinds whose effects carry `names`. */
export type NamesKind = "env_read" | "env_write" | "secret_use";
/** Kinds whose effects carry no members. */
export type FlagKind = "session_write" | "journal_read" | "time";

/** An effect object (K-EFF-1). */
export type Effect =
  | { kind: FsKind; paths: string[] }
  | { kind: "proc_spawn"; argv0: string; bin_hash: string | null }
  | { kind: "net_connect"; host: string; port: number }
  | { kind: "net_listen"; port: number }
  | { kind: NamesKind; names: string[] }
  | { kind: FlagKind }
  | { kind: "opaque"; reason: string };

/** How undoable a plan is (K-EFF-5). */
export type Reversibility = "reversible" | "irreversible" | "unknown";

/** Session state effect derivation reads (K-EFF-3). */
export interface EffectState {
  /** Session working directory (absolute). */
  cwd: string;
  /** Session exported environment. */
  env: Readonly<Record<string, string>>;
  /** Session `HOME`, used for `~`; undefined makes `~` dynamic. */
  home: string | undefined;
  /** Names of functions and aliases persisted in the session by earlier execs. */
  sessionCommands: ReadonlySet<string>;
}

/** Result of effect derivation: canonical effects and their reversibility. */
export interface EffectAnalysis {
  effects: Effect[];
  reversibility: Reversibility;
}

const KIND_SET: ReadonlySet<string> = new Set(EFFECT_KINDS);

/** The snake form of a dotted or snake kind name (K-EFF-2), or null when it names no kind. */
export function effectKindOf(name: string): EffectKind | null {
  const kind = name.replaceAll(".", "_");
  return KIND_SET.has(kind) ? kind as EffectKind : null;
}

/** Normalizes a kind name (`fs.read` → `fs_read`, K-EFF-2); an unknown name throws `-32602`. */
export function normalizeEffectName(name: string): EffectKind {
  const kind = effectKindOf(name);
  if (kind === null) throw invalidParams(`unknown effect kind: ${name}`, { kind: name });
  return kind;
}

/** Derives the canonical effects of bash source or its AST from session state (K-EFF-3..5). */
export function deriveEffects(input: File | string, state: EffectState): EffectAnalysis {
  const file = typeof input === "string" ? parseBash(input) : input;
  const set = new EffectSet();
  new Analyzer(file, state, set).run();
  const effects = set.toList();
  return { effects, reversibility: reversibilityOf(effects) };
}

const REVERSIBLE_KINDS: ReadonlySet<EffectKind> = new Set([
  "fs_read",
  "proc_spawn",
  "env_read",
  "env_write",
  "session_write",
  "journal_read",
  "time",
]);

/** Reversibility of an effect list (K-EFF-5). */
export function reversibilityOf(effects: readonly Effect[]): Reversibility {
  if (effects.some((effect) => effect.kind === "opaque")) return "unknown";
  return effects.every((effect) => REVERSIBLE_KINDS.has(effect.kind))
    ? "reversible"
    : "irreversible";
}

/**
 * Copies `effects` with `bin_hash` of each `proc_spawn` set to the sha256 of the executable it
 * resolves to (`PATH` search for bare names, `cwd` for relative paths); unresolvable → null.
 * The caller decides when to ask (K-EFF-3, last bullet).
 */
export async function fillBinHashes(
  effects: readonly Effect[],
  path: string,
  cwd: string,
): Promise<Effect[]> {
  const out: Effect[] = [];
  for (const effect of effects) {
    if (effect.kind !== "proc_spawn") {
      out.push(effect);
      continue;
    }
    const file = await resolveExecutable(effect.argv0, path, cwd);
    out.push({ ...effect, bin_hash: file === null ? null : await sha256File(file) });
  }
  return out;
}

async function resolveExecutable(argv0: string, path: string, cwd: string): Promise<string | null> {
  const candidates = argv0.includes("/")
    ? [argv0.startsWith("/") ? argv0 : `${cwd}/${argv0}`]
    : path.split(":").map((dir) => `${dir === "" ? "." : dir}/${argv0}`)
      .map((file) => file.startsWith("/") ? file : `${cwd}/${file}`);
  for (const file of candidates) {
    try {
      const info = await Deno.stat(file);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return file;
    } catch {
      // not there: try the next PATH entry
    }
  }
  return null;
}

async function sha256File(file: string): Promise<string | null> {
  try {
    using handle = await Deno.open(file, { read: true });
    const hash = createHash("sha256");
    for await (const chunk of handle.readable) hash.update(chunk);
    return `sha256:${hash.digest("hex")}`;
  } catch {
    return null;
  }
}
