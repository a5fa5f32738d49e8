import { Buffer } from "node:buffer";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { rmSync, statSync } from "node:fs";
import type {} from "../../protocol/raw_json.ts";
import { nowNs } from "../events/now_ns.ts";
import { checkName, checkTtl } from "./token_input.ts";

/** Who a valid bearer token acts as (G-TRUST-3); `profile` and `caps` are descriptive only. */
export interface TokenIdentity {
  id: string;
  principal: string;
  profile: string;
  caps: string[];
}

/** A token's lifecycle state as `token list` shows it (K-CLI-2). */
export type TokenState = "active" | "revoked" | "expired";

/** One row of {@link TokenStore.list}. */
export interface TokenListing extends TokenIdentity {
  created_ns: bigint;
  expires_ns: bigint | null;
  revoked_ns: bigint | null;
  state: TokenState;
}

/** A newly created token: its id and the bearer secret, which is never stored (T-TOK-2). */
export interface CreatedToken {
  id: string;
  secret: string;
}

interface TokenRecord {
  id: string;
  principal: string;
  profile: string;
  caps: string[];
  created_ns: bigint;
  expires_ns: bigint | null;
  revoked_ns: bigint | null;
  digest: string;
  /** The record's members this version does not know (a newer shoal's), written back as read. */
  unknown?: Record<string, unknown>;
}

interface StoreFile {
  version: 1;
  key: string;
  tokens: TokenRecord[];
  /** The store's members this version does not know, written back as read. */
  unknown?: Record<string, unknown>;
}

/** The members of the store (T-TOK-1) and of a token record this version reads. */
const STORE_MEMBERS = new Set(["version", "key", "tokens"]);
const TOKEN_MEMBERS = new Set([
  "id",
  "principal",
  "profile",
  "caps",
  "created_ns",
  "expires_ns",
  "revoked_ns",
  "digest",
]);

/** The members of `object` not in `known`, or undefined when there are none. */
function unknownMembers(
  object: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  const entries = Object.entries(object).filter(([name]) => !known.has(name));
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/**
 * The store as written: its members and each record's, then the members a newer shoal added,
 * so a `token create` or `revoke` of this version keeps them.
 */
function storeText(store: StoreFile): string {
  const tokens = store.tokens.map(({ unknown, ...token }) => ({ ...token, ...unknown }));
  const written = { version: store.version, key: store.key, tokens, ...store.unknown };
  return JSON.stringify(written, exactIntegers, 2) + "\n";
}

const encoder = new TextEncoder();
/** How many validated secrets keep their digest ({@link TokenStore.validate}). */
const KEPT_DIGESTS = 16;
/** The longest string {@link TokenStore.validate} looks up: secrets are 43 characters (T-TOK-2). */
const MAX_SECRET_CHARS = 256;

/**
 * The bearer-token store `<state>/tokens.json` (T-TOK-1..4). Reads are cached and refreshed
 * whenever the file's (inode, size, mtime) changes, so tokens created or revoked by another
 * process take effect on the next validation. Writes replace the file atomically.
 */
export class TokenStore {
  /** Path of `tokens.json`. */
  readonly path: string;
  #dir: string;
  #cached: StoreFile | null = null;
  /** (inode, size, mtime) of the file last read; null when it was missing, undefined before. */
  #signature: string | null | undefined = undefined;
  /**
   * Digests of the last few secrets validated, under the store key they were computed with: a
   * token-attached connection is re-checked before each request (T-TOK-4), and its HMAC cost more
   * than the rest of the check.
   */
  #digests = new Map<string, Uint8Array>();
  #digestsKey = "";

  constructor(stateDir: string) {
    this.#dir = stateDir;
    this.path = `${stateDir}/tokens.json`;
    this.#current();
  }

  /**
   * Creates a token for `principal` and returns its id and bearer secret (32 random bytes,
   * unpadded base64url). `ttlSeconds` (at least 1) sets `expires_ns = created_ns + ttl·10^9`.
   * A bad principal or profile name or ttl throws {@link TokenInputError}.
   */
  create(
    principal: string,
    profile: string,
    caps: readonly string[],
    ttlSeconds?: number,
  ): CreatedToken {
    checkName("principal", principal);
    checkName("profile", profile);
    if (ttlSeconds !== undefined) checkTtl(ttlSeconds);
    return this.#modify((store) => {
      const key = Buffer.from(store.key, "base64");
      let secret: string;
      let digest: string;
      do {
        secret = randomBytes(32).toString("base64url");
        digest = hmacHex(key, secret);
      } while (store.tokens.some((t) => t.id === digest.slice(0, 16)));
      const created = nowNs();
      const id = digest.slice(0, 16);
      store.tokens.push({
        id,
        principal,
        profile,
        caps: [...caps],
        created_ns: created,
        expires_ns: ttlSeconds === undefined ? null : created + BigInt(ttlSeconds) * 1_000_000_000n,
        revoked_ns: null,
        digest,
      });
      return { id, secret };
    });
  }

  /** Every stored token with its current state. */
  list(): TokenListing[] {
    const now = nowNs();
    return (this.#current()?.tokens ?? []).map((t) => ({
      id: t.id,
      principal: t.principal,
      profile: t.profile,
      caps: t.caps,
      created_ns: t.created_ns,
      expires_ns: t.expires_ns,
      revoked_ns: t.revoked_ns,
      state: stateOf(t, now),
    }));
  }

  /** Marks token `id` revoked (idempotent); throws when no token has that id. */
  revoke(id: string): void {
    // Checked before locking too, so revoking in a missing store creates nothing.
    if (!this.#current()?.tokens.some((t) => t.id === id)) {
      throw new Error(`unknown token id: ${id}`);
    }
    try {
      this.#modify((store) => {
        const token = store.tokens.find((t) => t.id === id);
        if (!token) throw new Error(`unknown token id: ${id}`);
        token.revoked_ns ??= nowNs();
      });
    } catch (err) {
      if (!(err instanceof StoreWriteError)) throw err;
      throw new StoreWriteError(`${err.message}; token ${id} is still active`);
    }
  }

  /**
   * The identity of an active token whose secret this is, or null for an unknown, revoked or
   * expired one (T-TOK-4). Re-reads the store only when it changed; compares in constant time.
   */
  validate(secret: string): TokenIdentity | null {
    // No secret is longer (T-TOK-2 makes 43 characters): a longer string is no token, and kept
    // as a key of #digests it stayed in memory (16 attaches with 12 MB strings: +240 MiB RSS).
    if (secret.length > MAX_SECRET_CHARS) return null;
    const store = this.#current();
    if (!store) return null;
    const digest = this.#digestOf(store.key, secret);
    let match: TokenRecord | null = null;
    for (const token of store.tokens) {
      const stored = encoder.encode(token.digest);
      if (stored.length === digest.length && timingSafeEqual(stored, digest)) {
        match = token;
      }
    }
    if (!match || stateOf(match, nowNs()) !== "active") return null;
    return {
      id: match.id,
      principal: match.principal,
      profile: match.profile,
      caps: [...match.caps],
    };
  }

  /** The HMAC of `secret` under `key` as hex bytes, from {@link #digests} when it is there. */
  #digestOf(key: string, secret: string): Uint8Array {
    if (key !== this.#digestsKey) {
      this.#digests.clear();
      this.#digestsKey = key;
    }
    let digest = this.#digests.get(secret);
    if (digest === undefined) {
      digest = encoder.encode(hmacHex(Buffer.from(key, "base64"), secret));
      if (this.#digests.size >= KEPT_DIGESTS) {
        this.#digests.delete(this.#digests.keys().next().value!);
      }
      this.#digests.set(secret, digest);
    }
    return digest;
  }

  /** The store as on disk now, re-read only when (inode, size, mtime) changed. */
  #current(): StoreFile | null {
    const stat = statSync(this.path, { bigint: true, throwIfNoEntry: false });
    const signature = stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}` : null;
    if (signature !== this.#signature) {
      // Anything but a regular file (a FIFO, a link to /dev/null or to a directory) is no store:
      // its read blocked the whole kernel (a FIFO) and the chmod below tightened what it names.
      if (stat && !stat.isFile()) throw malformedStore(this.path, "not a regular file");
      if (stat && (stat.mode & 0o077n) !== 0n) Deno.chmodSync(this.path, 0o600);
      this.#cached = stat ? parseStore(Deno.readTextFileSync(this.path), this.path) : null;
      this.#signature = signature;
    }
    return this.#cached;
  }

  /** Applies `change` to the freshly read store under an exclusive lock and writes it back. */
  #modify<T>(change: (store: StoreFile) => T): T {
    const lock = Deno.openSync(`${this.path}.lock`, {
      create: true,
      write: true,
      mode: 0o600,
    });
    try {
      lock.lockSync(true);
      this.#signature = undefined;
      const store = this.#current() ??
        { version: 1, key: randomBytes(32).toString("base64"), tokens: [] };
      const result = change(store);
      this.#write(store);
      return result;
    } finally {
      lock.close();
    }
  }

  /**
   * Writes `store` to a temporary file and renames it over tokens.json (T-TOK-3); a failure (a
   * full disk) leaves the store as it was, no temporary file, and names the store.
   */
  #write(store: StoreFile): void {
    const temp = `${this.#dir}/.tokens.json.${randomBytes(8).toString("hex")}.tmp`;
    try {
      const file = Deno.openSync(temp, { createNew: true, write: true, mode: 0o600 });
      try {
        const bytes = encoder.encode(storeText(store));
        for (let done = 0; done < bytes.length;) {
          done += file.writeSync(bytes.subarray(done));
        }
        file.syncSync();
      } finally {
        file.close();
      }
      Deno.renameSync(temp, this.path);
    } catch (err) {
      rmSync(temp, { force: true });
      throw new StoreWriteError(
        `cannot write the token store ${this.path}: ${err instanceof Error ? err.message : err}`,
      );
    }
    const dir = Deno.openSync(this.#dir);
    try {
      dir.syncSync();
    } finally {
      dir.close();
    }
    this.#signature = undefined;
  }
}

/** A change of the token store that could not be written (it is left as it was). */
class StoreWriteError extends Error {}

function hmacHex(key: Uint8Array, secret: string): string {
  return createHmac("sha256", key).update(secret).digest("hex");
}

function stateOf(token: TokenRecord, now: bigint): TokenState {
  if (token.revoked_ns !== null) return "revoked";
  if (token.expires_ns !== null && now >= token.expires_ns) return "expired";
  return "active";
}

function exactIntegers(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? JSON.rawJSON(value.toString()) : value;
}

/** The error for a token store at `path` this version cannot read (fail closed). */
function malformedStore(path: string, why: string): Error {
  return new Error(`malformed token store ${path}: ${why}`);
}

/** Parses tokens.json keeping ns integers exact; throws on anything that is not the T-TOK-1 shape. */
function parseStore(text: string, path: string): StoreFile {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && /^-?\d+$/.test(context?.source ?? "")
      ? BigInt(context!.source!)
      : value;
  const bad = (why: string) => malformedStore(path, why);
  let raw: unknown;
  try {
    raw = JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch (err) {
    throw bad((err as Error).message);
  }
  const store = raw as Record<string, unknown>;
  if (typeof store !== "object" || store === null) throw bad("not an object");
  if (typeof store.version === "bigint" && store.version > 1n) {
    throw bad(
      `version ${store.version}: written by a newer shoal (this kernel reads version 1); run ` +
        "that newer shoal-kernel, whose tokens this one cannot check",
    );
  }
  if (store.version !== 1n) throw bad("version must be 1");
  if (typeof store.key !== "string" || Buffer.from(store.key, "base64").length !== 32) {
    throw bad("key must be base64 of 32 bytes");
  }
  if (!Array.isArray(store.tokens)) throw bad("tokens must be an array");
  const tokens = store.tokens.map((entry: Record<string, unknown>, i: number): TokenRecord => {
    const text = (name: string) => {
      if (typeof entry?.[name] !== "string") throw bad(`tokens[${i}].${name} must be a string`);
      return entry[name] as string;
    };
    const ns = (name: string, nullable: boolean) => {
      const v = entry[name] ?? null;
      if (typeof v === "bigint" || (nullable && v === null)) return v as bigint;
      throw bad(`tokens[${i}].${name} must be an integer`);
    };
    const caps = entry.caps;
    if (!Array.isArray(caps) || !caps.every((c) => typeof c === "string")) {
      throw bad(`tokens[${i}].caps must be an array of strings`);
    }
    const name = (what: "principal" | "profile") => {
      try {
        checkName(what, text(what));
      } catch (err) {
        throw bad(`tokens[${i}].${what}: ${(err as Error).message}`);
      }
      return entry[what] as string;
    };
    return {
      id: text("id"),
      principal: name("principal"),
      profile: name("profile"),
      caps,
      created_ns: ns("created_ns", false),
      expires_ns: ns("expires_ns", true),
      revoked_ns: ns("revoked_ns", true),
      digest: text("digest"),
      unknown: unknownMembers(entry, TOKEN_MEMBERS),
    };
  });
  return { version: 1, key: store.key, tokens, unknown: unknownMembers(store, STORE_MEMBERS) };
}
