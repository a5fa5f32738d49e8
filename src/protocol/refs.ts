/** The URI of transcript value N, `shoal://out/N` (V-REF-3). */
export function outUri(n: number | string): string {
  return `shoal://out/${n}`;
}

/** Converts a short ref `kind:rest` (`out:12`, `task:7`, `plan:…`, `pty:3`) to `shoal://kind/rest` (V-REF-3). */
export function refToUri(ref: string): string | null {
  const m = /^(out|task|plan|pty|val):(.+)$/.exec(ref);
  return m ? `shoal://${m[1]}/${m[2]}` : null;
}

/**
 * The number N of a numbered short ref `kind:N` (`out:12`, `task:7`, `pty:3`) in canonical form
 * only: decimal from 1 without leading zeros, so `out:01` names nothing (V-REF-1, V-REF-3).
 */
export function refNumber(kind: "out" | "task" | "pty", ref: string): number | null {
  return ref.startsWith(`${kind}:`) ? canonicalNumber(ref.slice(kind.length + 1)) : null;
}

/** A canonical ref number (`12`; not `012`, `0`, `+1` or beyond 2^53), else null. */
export function canonicalNumber(text: string): number | null {
  if (!/^[1-9][0-9]*$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
