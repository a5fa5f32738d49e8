/** Effect kinds in canonical K-EFF-1 order. */
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

/** One effect kind in snake form (K-EFF-1). */
export type EffectKind = typeof EFFECT_KINDS[number];

/** The snake form of a dotted or snake kind name, or null when it names no kind (K-EFF-2). */
export function normalizeEffectKind(name: string): EffectKind | null {
  const snake = name.replaceAll(".", "_");
  return (EFFECT_KINDS as readonly string[]).includes(snake) ? snake as EffectKind : null;
}
