const encoder = new TextEncoder();

/** Percent-encodes a path for a `?path=` query (everything but `A–Z a–z 0–9 - . _ ~ [ ]`, K-VAL-2). */
export function encodePathQuery(path: string): string {
  let out = "";
  for (const b of encoder.encode(path)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~[\]]/.test(c) ? c : "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/**
 * The URI of a selected value: a base (`shoal://out/12`) plus the path and slice that selected it
 * (K-VAL-2). Suffixes for parts of the value follow V-ELIDE-3: a name segment is appended with
 * `.`, a bracket segment directly; below a slice, item `i` becomes `[a+i]` of the unsliced value.
 */
export class ValueUri {
  constructor(
    readonly base: string,
    readonly path = "",
    readonly slice: readonly [number, number] | null = null,
  ) {}

  /** A named field (`out`, `err` of an outcome): `.name`. */
  field(name: string): ValueUri {
    const path = this.#folded();
    return new ValueUri(this.base, path === "" ? name : `${path}.${name}`);
  }

  /** A record member by quoted name: `["name"]`. */
  member(name: string): ValueUri {
    return new ValueUri(this.base, `${this.#folded()}[${JSON.stringify(name)}]`);
  }

  /** Item `i` of a list, or row `i` of a table: `[i]`. */
  index(i: number): ValueUri {
    const at = this.slice ? this.slice[0] + i : i;
    return new ValueUri(this.base, `${this.path}[${at}]`);
  }

  /** The URI text. */
  toString(): string {
    const query: string[] = [];
    if (this.path !== "") query.push("path=" + encodePathQuery(this.path));
    if (this.slice) query.push(`slice=${this.slice[0]}..${this.slice[1]}`);
    return query.length ? `${this.base}?${query.join("&")}` : this.base;
  }

  /** The path with any slice folded in as a range segment. */
  #folded(): string {
    return this.slice ? `${this.path}[${this.slice[0]}..${this.slice[1]}]` : this.path;
  }
}
