/** The effect vocabulary (K-EFF-1, 2, 5): kinds, effect objects, session state read, reversibility. */
import { invalidParams } from "../../protocol/errors.ts";

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
  /**
   * Whether `cwd` is only the lossy text of a name that is not UTF-8: a path resolved against it
   * would be another directory's (one really named U+FFFD), so relative paths are opaque.
   */
  cwdLossy?: boolean;
  /** Session exported environment. */
  env: Readonly<Record<string, string>>;
  /**
   * Exported names whose value differs from the session's start (K-EFF-6): only these configure a
   * command; the rest are the local human's inherited values, trusted.
   */
  changedEnv: ReadonlySet<string>;
  /** Session `HOME`, used for `~`; undefined makes `~` dynamic. */
  home: string | undefined;
  /** Non-exported session variables by name, as `declare -p` text; absent means none. */
  vars?: Readonly<Record<string, string>>;
  /** The OS whose tools and directories apply (`Deno.build.os` values); default this one. */
  platform?: string;
  /** Names of functions and aliases persisted in the session by earlier execs. */
  sessionCommands: ReadonlySet<string>;
}

/** Result of effect derivation: canonical effects and their reversibility. */
export interface EffectAnalysis {
  effects: Effect[];
  reversibility: Reversibility;
  /**
   * Each path of `effects` that a symlink led to, with the form the source wrote, `[physical,
   * written]`: what a refusal shows a caller who may not read where the link leads.
   */
  written: [string, string][];
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
