/** Accumulates effects and emits the canonical list (K-EFF-4). */
import type { Effect, FlagKind, FsKind, NamesKind } from "./effect_types.ts";
import { canonicalHost } from "../net/destinations.ts";

/** A growing set of effects; `toList` gives them in K-EFF-4 canonical form. */
export class EffectSet {
  readonly #paths: Record<FsKind, Set<string>> = {
    fs_read: new Set(),
    fs_write: new Set(),
    fs_delete: new Set(),
  };
  readonly #names: Record<NamesKind, Set<string>> = {
    env_read: new Set(),
    env_write: new Set(),
    secret_use: new Set(),
  };
  readonly #flags = new Set<FlagKind>();
  readonly #spawn = new Set<string>();
  readonly #connect = new Map<string, { host: string; port: number }>();
  readonly #listen = new Set<number>();
  #opaque: string | null = null;
  /** Paths resolved through a symlink, each with the form the source wrote (the first one). */
  readonly #written = new Map<string, string>();

  /** Adds absolute, normalized paths to a filesystem kind. */
  paths(kind: FsKind, paths: readonly string[]): void {
    for (const path of paths) this.#paths[kind].add(path);
  }

  /** Notes that the source wrote `physical` as `written` (they differ when a symlink led there). */
  wrote(physical: string, written: string): void {
    if (physical !== written && !this.#written.has(physical)) this.#written.set(physical, written);
  }

  /** Each path resolved through a symlink with the form the source wrote, `[physical, written]`. */
  get written(): [string, string][] {
    return [...this.#written];
  }

  /** Adds variable names to a names kind. */
  names(kind: NamesKind, names: readonly string[]): void {
    for (const name of names) this.#names[kind].add(name);
  }

  /** Records a member-less kind. */
  flag(kind: FlagKind): void {
    this.#flags.add(kind);
  }

  /** Records a spawned program by its argv0. */
  spawn(argv0: string): void {
    this.#spawn.add(argv0);
  }

  /**
   * Records an outgoing connection, its host in the one form every destination is named in
   * (the URL parser's: lower case, an IPv4 number dotted, an IPv6 literal bracketed), whether it
   * came from a URL or a `/dev/tcp/HOST/PORT` path; one that is no host, or past ASCII, as it was
   * written (bash's resolver maps no Unicode: `/dev/tcp/ｅｘａｍｐｌｅ.com/80` is not example.com,
   * which the URL parser would make of it; a URL's host comes mapped already).
   */
  connect(host: string, port: number): void {
    // deno-lint-ignore no-control-regex
    const named = /^[\x00-\x7f]*$/.test(host) ? canonicalHost(host) ?? host : host;
    this.#connect.set(`${named}\0${port}`, { host: named, port });
  }

  /** Records a listening port. */
  listen(port: number): void {
    this.#listen.add(port);
  }

  /** Records that analysis gave up; the first reason is kept. */
  opaque(reason: string): void {
    this.#opaque ??= reason;
  }

  /** Whether `opaque` was recorded. */
  get isOpaque(): boolean {
    return this.#opaque !== null;
  }

  /** The effects in canonical order, members sorted and unique (K-EFF-4). */
  toList(): Effect[] {
    const out: Effect[] = [];
    for (const kind of ["fs_read", "fs_write", "fs_delete"] as const) {
      if (this.#paths[kind].size > 0) out.push({ kind, paths: sorted(this.#paths[kind]) });
    }
    for (const argv0 of sorted(this.#spawn)) {
      out.push({ kind: "proc_spawn", argv0, bin_hash: null });
    }
    const connects = [...this.#connect.values()].sort((a, b) =>
      a.host < b.host ? -1 : a.host > b.host ? 1 : a.port - b.port
    );
    for (const { host, port } of connects) out.push({ kind: "net_connect", host, port });
    for (const port of [...this.#listen].sort((a, b) => a - b)) {
      out.push({ kind: "net_listen", port });
    }
    for (const kind of ["env_read", "env_write", "secret_use"] as const) {
      if (this.#names[kind].size > 0) out.push({ kind, names: sorted(this.#names[kind]) });
    }
    for (const kind of ["session_write", "journal_read", "time"] as const) {
      if (this.#flags.has(kind)) out.push({ kind });
    }
    if (this.#opaque !== null) out.push({ kind: "opaque", reason: this.#opaque });
    return out;
  }
}

/** Sorted by UTF-16 code unit. */
function sorted(values: Iterable<string>): string[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
