/**
 * The Leash policy (§7.3): the model, the JSONC loader with every accepted spelling (P-POL-2),
 * defaults (P-POL-3), the built-in local-human entry (P-EVAL-3) and file discovery (G-STATE-3).
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { JsoncError, type JsoncNode as Node, parseJsonc } from "./jsonc.ts";
import { type EffectKind, normalizeEffectName } from "./effect_types.ts";
import { isProtectedName } from "../sandbox/protected_names.ts";

/** When a plan inside the grants runs without approval (P-EVAL-2). */
export type AutoApply = "never" | "in-grant" | "reversible";
/** What an `opaque` effect gets (P-EVAL-1). */
export type OpaqueMode = "deny" | "ask" | "allow";

/** One principal's grants, fully resolved (defaults applied). */
export interface PrincipalPolicy {
  fs_read: readonly string[];
  fs_write: readonly string[];
  fs_delete: readonly string[];
  net_connect: readonly string[];
  net_listen: readonly string[];
  proc_spawn: readonly string[];
  env_read: readonly string[];
  env_write: readonly string[];
  secret_use: readonly string[];
  session_write: boolean;
  journal_read: boolean;
  time: boolean;
  auto_apply: AutoApply;
  opaque: OpaqueMode;
  hermetic: boolean;
  /** Whether this principal's runs go inside the sandbox when the host has one (P-SBX-2). */
  sandbox: boolean;
  /** Whether the agent's MCP client may approve its own pending plans for it (M-ELICIT-1). */
  approve_in_client: boolean;
  /** Protected names (P-SBX-6) this principal may nevertheless write, e.g. `.vscode`. */
  writable_protected: readonly string[];
  approver: boolean;
  /** Kinds the principal may approve for itself; `"*"` means all. */
  self_approve: readonly (EffectKind | "*")[];
}

/** A policy entry as written: `approver` is null when the file leaves it out (K-APPR-1). */
export type PolicyEntry = Omit<PrincipalPolicy, "approver"> & { approver: boolean | null };

/** A loaded policy: entries by principal name. */
export interface Policy {
  principals: ReadonlyMap<string, PolicyEntry>;
}

type ListField =
  | "fs_read"
  | "fs_write"
  | "fs_delete"
  | "net_connect"
  | "net_listen"
  | "proc_spawn"
  | "env_read"
  | "env_write"
  | "secret_use"
  | "writable_protected";
type BoolField =
  | "session_write"
  | "journal_read"
  | "time"
  | "hermetic"
  | "sandbox"
  | "approve_in_client"
  | "approver";

const LIST_FIELDS: readonly ListField[] = [
  "fs_read",
  "fs_write",
  "fs_delete",
  "net_connect",
  "net_listen",
  "proc_spawn",
  "env_read",
  "env_write",
  "secret_use",
  "writable_protected",
];
const BOOL_FIELDS: readonly BoolField[] = [
  "session_write",
  "journal_read",
  "time",
  "hermetic",
  "sandbox",
  "approve_in_client",
  "approver",
];

/** Flat spellings → canonical field (P-POL-2). */
const FLAT_SPELLINGS: Record<string, string> = {
  ...Object.fromEntries(
    [...LIST_FIELDS, ...BOOL_FIELDS, "auto_apply", "opaque", "self_approve"].map((f) => [f, f]),
  ),
  "fs.read": "fs_read",
  "fs.write": "fs_write",
  "fs.delete": "fs_delete",
  "env.read": "env_read",
  "env.write": "env_write",
  "secret.use": "secret_use",
  "proc.spawn": "proc_spawn",
  "net.connect": "net_connect",
  "net.listen": "net_listen",
  "session.write": "session_write",
  "journal.read": "journal_read",
  net: "net_connect",
  spawn: "proc_spawn",
  secrets: "secret_use",
};

/** Nested objects and their members (P-POL-2). */
const NESTED: Record<string, Record<string, string>> = {
  fs: { read: "fs_read", write: "fs_write", delete: "fs_delete" },
  env: { read: "env_read", write: "env_write" },
  secret: { use: "secret_use" },
  proc: { spawn: "proc_spawn" },
};

/**
 * The canonical fields (P-POL-2) that a principal's entry, as a parsed object node, sets in any of
 * their spellings (`"fs.read"`, `fs: {read}`, `spawn`, …): what the user wrote, told apart from
 * what the defaults fill in.
 */
export function givenFields(entry: Node): Set<string> {
  const given = new Set<string>();
  for (const property of entry.children ?? []) {
    const [keyNode, value] = property.children ?? [];
    const key = String(keyNode?.value);
    const nested = Object.hasOwn(NESTED, key) ? NESTED[key] : undefined;
    if (nested === undefined) {
      if (Object.hasOwn(FLAT_SPELLINGS, key)) given.add(FLAT_SPELLINGS[key]);
      continue;
    }
    for (const member of value?.children ?? []) {
      const inner = String(member.children?.[0]?.value);
      if (Object.hasOwn(nested, inner)) given.add(nested[inner]);
    }
  }
  return given;
}

const NET_GRANT = /^.+:(\d+|\*)$/;

/** Whether `text` is a port (0..65535, digits) or `"*"`, as net grants name them. */
function isPort(text: string): boolean {
  return text === "*" || (/^\d{1,5}$/.test(text) && Number(text) <= 65535);
}

/** An empty policy: only the built-in local-human entry applies (P-EVAL-3). */
export function defaultPolicy(): Policy {
  return { principals: new Map() };
}

/** The built-in local-human grants (P-EVAL-3). */
export function localHumanPolicy(): PrincipalPolicy {
  return {
    fs_read: ["/**"],
    fs_write: ["/**"],
    fs_delete: ["/**"],
    net_connect: ["*:*"],
    net_listen: ["*"],
    proc_spawn: ["*"],
    env_read: ["*"],
    env_write: ["*"],
    secret_use: ["*"],
    session_write: true,
    journal_read: true,
    time: true,
    auto_apply: "in-grant",
    opaque: "allow",
    hermetic: false,
    sandbox: false,
    approve_in_client: false,
    writable_protected: [],
    approver: true,
    self_approve: ["*"],
  };
}

/**
 * The resolved policy of `principal`, or null when it is unknown (P-PRIN-1). The local human
 * without its own entry gets the built-in grants (P-EVAL-3).
 */
export function policyFor(
  policy: Policy,
  principal: string,
  localHuman: string,
): PrincipalPolicy | null {
  const entry = policy.principals.get(principal);
  if (entry === undefined) return principal === localHuman ? localHumanPolicy() : null;
  return { ...entry, approver: entry.approver ?? principal === localHuman };
}

/** The user's policy file, `$XDG_CONFIG_HOME/shoal/leash.jsonc` or `~/.config/…`, whether or not it exists. */
export function userPolicyPath(env: Readonly<Record<string, string | undefined>>): string | null {
  const config = env.XDG_CONFIG_HOME
    ? env.XDG_CONFIG_HOME
    : env.HOME
    ? `${env.HOME}/.config`
    : null;
  return config === null ? null : `${config}/shoal/leash.jsonc`;
}

/**
 * Where the startup policy comes from (G-STATE-3): `--policy FILE` when given, else the user's
 * `leash.jsonc` if present; null means the default policy.
 */
export function startupPolicyPath(
  policyFlag: string | null,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  if (policyFlag !== null) return policyFlag;
  const path = userPolicyPath(env);
  return path !== null && existsSync(path) ? path : null;
}

/**
 * The startup policy (G-STATE-3): `--policy FILE` when given (it must exist), else the
 * user's `leash.jsonc` if present, else the default. Throws on any load error.
 */
export function loadStartupPolicy(
  policyFlag: string | null,
  env: Readonly<Record<string, string | undefined>>,
): Policy {
  const path = startupPolicyPath(policyFlag, env);
  return path === null ? defaultPolicy() : loadPolicyFile(path);
}

/**
 * Reads and validates a policy file; any problem throws an Error naming the file and field. Only
 * a regular file is read: it is opened without blocking and checked first, since a FIFO in its
 * place would block the read (the kernel's whole event loop) until a writer came, and a device
 * such as /dev/zero would never end.
 */
export function loadPolicyFile(path: string): Policy {
  return parsePolicyText(readPolicyText(path), path);
}

/** The text of the policy file at `path`, a regular file ({@link loadPolicyFile}); throws naming it. */
export function readPolicyText(path: string): string {
  let fd: number | null = null;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error("not a regular file");
    return utf8Text(readBounded(fd, info.size));
  } catch (error) {
    throw new Error(`policy ${path}: cannot read: ${(error as Error).message}`);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * The most bytes a policy file may hold: thousands of principals. Read whole, one of 200,000
 * principals (9.6 MB) held the kernel's event loop ~17 s, and a 600 MB file took ~1.9 GB.
 */
export const MAX_POLICY_BYTES = 1024 * 1024;

/**
 * The bytes of the regular file open at `fd`, `size` bytes by its stat, read to its end; more than
 * {@link MAX_POLICY_BYTES} throws, so a file that is huge or grows while read is never read whole.
 */
function readBounded(fd: number, size: number): Uint8Array {
  const tooLarge = () => new Error(`larger than ${MAX_POLICY_BYTES} bytes`);
  if (size > MAX_POLICY_BYTES) throw tooLarge();
  let buf = new Uint8Array(size + 1);
  let got = 0;
  while (true) {
    if (got === buf.length) {
      if (got > MAX_POLICY_BYTES) throw tooLarge();
      const grown = new Uint8Array(Math.min(MAX_POLICY_BYTES + 1, 2 * buf.length));
      grown.set(buf);
      buf = grown;
    }
    const n = readSync(fd, buf, got, buf.length - got, null);
    if (n === 0) return buf.subarray(0, got);
    got += n;
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` as text; bytes that are not UTF-8 throw, as JSON text must be UTF-8 (RFC 8259 §8.1):
 * decoded lossily, a grant of a name with the byte ff would read U+FFFD and grant another path.
 */
function utf8Text(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (e) {
    if (e instanceof TypeError) throw new Error("not UTF-8 text (JSON must be)");
    throw e;
  }
}

/** The byte order mark an editor may put first: JSON parsers may ignore it (RFC 8259 §8.1). */
export const BOM = "\uFEFF";

/** `text` without a leading byte order mark ({@link BOM}): offsets then count from the JSONC itself. */
export function withoutBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

/** Validates the text of the policy file at `path`; any problem throws an Error naming the file and field. */
export function parsePolicyText(text: string, path: string): Policy {
  let root: Node | undefined;
  try {
    root = parseJsonc(withoutBom(text));
  } catch (e) {
    if (!(e instanceof JsoncError)) throw e;
    throw new Error(`policy ${path}: malformed JSONC at offset ${e.offset}: ${e.problem}`);
  }
  if (root === undefined) throw new Error(`policy ${path}: malformed JSONC: empty file`);
  return parsePolicyTree(root, `policy ${path}`);
}

function fail(context: string, message: string): never {
  throw new Error(`${context}: ${message}`);
}

/** Members of an object node; duplicate keys are fatal. */
function members(node: Node, context: string): [string, Node][] {
  if (node.type !== "object") fail(context, `expected an object, got ${node.type}`);
  const seen = new Set<string>();
  const out: [string, Node][] = [];
  for (const property of node.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    const key = String(keyNode?.value);
    if (seen.has(key)) fail(context, `duplicate field "${key}"`);
    seen.add(key);
    if (valueNode === undefined) fail(context, `field "${key}" has no value`);
    out.push([key, valueNode]);
  }
  return out;
}

function parsePolicyTree(root: Node, context: string): Policy {
  const principals = new Map<string, PolicyEntry>();
  for (const [key, value] of members(root, context)) {
    if (key !== "principal") fail(context, `unknown field "${key}"`);
    for (const [name, entry] of members(value, `${context}: "principal"`)) {
      principals.set(name, parseEntry(entry, `${context}: principal "${name}"`));
    }
  }
  return { principals };
}

function parseEntry(node: Node, context: string): PolicyEntry {
  /** Canonical field → the spelling that set it. */
  const given = new Map<string, string>();
  const values = new Map<string, Node>();
  const set = (field: string, spelling: string, value: Node) => {
    const previous = given.get(field);
    if (previous !== undefined) {
      fail(context, `field "${field}" given twice (as "${previous}" and "${spelling}")`);
    }
    given.set(field, spelling);
    values.set(field, value);
  };
  for (const [key, value] of members(node, context)) {
    // own members only: `constructor` or `toString` would find Object.prototype's
    const nested = Object.hasOwn(NESTED, key) ? NESTED[key] : undefined;
    if (nested !== undefined) {
      for (const [inner, innerValue] of members(value, `${context}: field "${key}"`)) {
        const field = Object.hasOwn(nested, inner) ? nested[inner] : undefined;
        if (field === undefined) fail(context, `unknown field "${key}.${inner}"`);
        set(field, `${key}.${inner}`, innerValue);
      }
      continue;
    }
    const field = Object.hasOwn(FLAT_SPELLINGS, key) ? FLAT_SPELLINGS[key] : undefined;
    if (field === undefined) fail(context, `unknown field "${key}"`);
    set(field, key, value);
  }
  const label = (field: string) => `field "${given.get(field) ?? field}"`;
  const list = (field: ListField): string[] => {
    const value = values.get(field);
    if (value === undefined) return [];
    if (value.type !== "array") fail(context, `${label(field)} must be an array of strings`);
    return (value.children ?? []).map((item) => {
      if (field === "net_listen" && item.type === "number") {
        if (!isPort(String(item.value))) {
          fail(context, `${label(field)}: ${item.value} is not a port`);
        }
        return String(item.value);
      }
      if (item.type !== "string") fail(context, `${label(field)} must be an array of strings`);
      const text = item.value as string;
      if (!text.isWellFormed()) {
        // a lone surrogate (a JSON escape) names no path: encoded it reads U+FFFD, another name
        fail(context, `${label(field)}: ${JSON.stringify(text)} is not valid Unicode`);
      }
      if (
        field === "net_connect" &&
        !(NET_GRANT.test(text) && isPort(text.slice(text.lastIndexOf(":") + 1)))
      ) {
        fail(context, `${label(field)}: "${text}" is not hostglob:port`);
      }
      if (field === "writable_protected" && !isProtectedName(text)) {
        fail(context, `${label(field)}: "${text}" is not a protected name`);
      }
      if (field === "net_listen" && !isPort(text)) {
        fail(context, `${label(field)}: "${text}" is not a port or "*"`);
      }
      return text;
    });
  };
  const bool = (field: BoolField): boolean | null => {
    const value = values.get(field);
    if (value === undefined) return null;
    if (value.type !== "boolean") fail(context, `${label(field)} must be a boolean`);
    return value.value as boolean;
  };
  const choice = <T extends string>(field: string, allowed: readonly T[], fallback: T): T => {
    const value = values.get(field);
    if (value === undefined) return fallback;
    if (value.type !== "string" || !allowed.includes(value.value)) {
      fail(context, `${label(field)} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}`);
    }
    return value.value as T;
  };
  const selfApprove = (): (EffectKind | "*")[] => {
    const value = values.get("self_approve");
    if (value === undefined) return [];
    if (value.type !== "array") fail(context, `${label("self_approve")} must be an array`);
    return (value.children ?? []).map((item) => {
      if (item.type !== "string") fail(context, `${label("self_approve")} must hold strings`);
      if (item.value === "*") return "*";
      try {
        return normalizeEffectName(item.value);
      } catch {
        return fail(context, `${label("self_approve")}: unknown effect kind "${item.value}"`);
      }
    });
  };
  return {
    fs_read: list("fs_read"),
    fs_write: list("fs_write"),
    fs_delete: list("fs_delete"),
    net_connect: list("net_connect"),
    net_listen: list("net_listen"),
    proc_spawn: list("proc_spawn"),
    env_read: list("env_read"),
    env_write: list("env_write"),
    secret_use: list("secret_use"),
    writable_protected: list("writable_protected"),
    session_write: bool("session_write") ?? false,
    journal_read: bool("journal_read") ?? false,
    time: bool("time") ?? false,
    auto_apply: choice("auto_apply", ["never", "in-grant", "reversible"] as const, "never"),
    opaque: choice("opaque", ["deny", "ask", "allow"] as const, "deny"),
    hermetic: bool("hermetic") ?? false,
    sandbox: bool("sandbox") ?? true,
    approve_in_client: bool("approve_in_client") ?? false,
    approver: bool("approver"),
    self_approve: selfApprove(),
  };
}
