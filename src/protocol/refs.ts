/** The URI of transcript value N, `shoal://out/N` (V-REF-3). */
export function outUri(n: number | string): string {
  return `shoal://out/${n}`;
}

/** Converts a short ref `kind:rest` (`out:12`, `task:7`, `plan:…`, `pty:3`) to `shoal://kind/rest` (V-REF-3). */
export function refToUri(ref: string): string | null {
  const m = /^(out|task|plan|pty|val):(.+)$/.exec(ref);
  return m ? `shoal://${m[1]}/${m[2]}` : null;
}
