/** Policy evaluation (P-EVAL-1/2): per-effect and per-plan verdicts, and approval checks. */
import type { Effect, EffectKind, Reversibility } from "./effect_types.ts";
import { type Policy, policyFor, type PrincipalPolicy } from "./leash.ts";
import { physicalGlob } from "./_physical_paths.ts";
import { netGrantMatches } from "../net/destinations.ts";
import { fallsOnProtected } from "../sandbox/protected_names.ts";
import { grantRoot, isUnder } from "../sandbox/view.ts";
import { isWorktreeGitDir } from "../sandbox/git_internal.ts";
import { heldByLastScan } from "../sandbox/held_paths.ts";
import { cutUtf8, utf8Length, utf8Suffix } from "../../protocol/utf8.ts";

/** A policy verdict. */
export type Verdict = "allow" | "approval_required" | "deny";

/** Verdict of one effect under a principal's grants (P-EVAL-1); `home` expands `~/` in globs. */
export function effectVerdict(
  p: PrincipalPolicy,
  effect: Effect,
  home: string | undefined,
): Verdict {
  const granted = (ok: boolean): Verdict => (ok ? "allow" : "deny");
  switch (effect.kind) {
    case "fs_read":
      return granted(
        effect.paths.every((path) => p.fs_read.some((g) => grantMatches(g, path, home))),
      );
    case "fs_write":
    case "fs_delete": {
      const globs = p[effect.kind];
      const matching = (path: string) => globs.filter((g) => grantMatches(g, path, home));
      if (!effect.paths.every((path) => matching(path).length > 0)) return "deny";
      const guarded = effect.paths.some((path) =>
        matching(path).some((g) => onProtectedName(g, path, home, p.writable_protected))
      );
      return guarded ? "approval_required" : "allow";
    }
    case "proc_spawn": {
      const base = effect.argv0.slice(effect.argv0.lastIndexOf("/") + 1);
      return granted(
        p.proc_spawn.some((grant) =>
          grant === "*" || grant === effect.argv0 || grant === base ||
          (effect.bin_hash !== null && grant === effect.bin_hash)
        ),
      );
    }
    case "net_connect":
      return granted(
        p.net_connect.some((grant) => netGrantMatches(grant, effect.host, effect.port)),
      );
    case "net_listen":
      return granted(p.net_listen.some((grant) => grant === "*" || grant === String(effect.port)));
    case "env_read":
    case "env_write":
    case "secret_use": {
      const grants = p[effect.kind];
      return granted(grants.includes("*") || effect.names.every((name) => grants.includes(name)));
    }
    case "session_write":
    case "journal_read":
    case "time":
      return granted(p[effect.kind]);
    case "opaque":
      return opaqueVerdict(p);
  }
}

/** Verdict of a whole plan (P-EVAL-2); a null policy is an unknown principal → `deny`. */
export function planVerdict(
  p: PrincipalPolicy | null,
  effects: readonly Effect[],
  reversibility: Reversibility,
  home: string | undefined,
): Verdict {
  if (p === null) return "deny";
  const verdicts = effects.map((effect) => effectVerdict(p, effect, home));
  if (verdicts.includes("deny")) return "deny";
  if (verdicts.includes("approval_required")) return "approval_required";
  switch (p.auto_apply) {
    case "never":
      return "approval_required";
    case "in-grant":
      return "allow";
    case "reversible":
      return reversibility === "reversible" ? "allow" : "approval_required";
  }
}

/**
 * Why a plan needs approval, one line per cause (M-ELICIT-2): each path that falls on a protected
 * name (`fs.write "/p/.vscode/tasks.json" is a protected name`), each opaque effect under `opaque:
 * "ask"`, else the `auto_apply` rule; empty unless the verdict is `approval_required`.
 */
export function approvalReasons(
  p: PrincipalPolicy | null,
  effects: readonly Effect[],
  reversibility: Reversibility,
  home: string | undefined,
): string[] {
  if (p === null || planVerdict(p, effects, reversibility, home) !== "approval_required") return [];
  const out = new Set<string>();
  for (const effect of effects) {
    if (effectVerdict(p, effect, home) !== "approval_required") continue;
    if (effect.kind === "opaque") {
      out.add(`opaque ${JSON.stringify(effect.reason)} (the policy says opaque "ask")`);
    } else if (effect.kind === "fs_write" || effect.kind === "fs_delete") {
      for (const path of effect.paths) {
        if (effectVerdict(p, { ...effect, paths: [path] }, home) === "approval_required") {
          const shown = reasonPath(path, p.writable_protected);
          out.add(`fs.${effect.kind.slice(3)} ${JSON.stringify(shown)} is a protected name`);
        }
      }
    }
  }
  if (out.size > 0) return [...out];
  return [
    p.auto_apply === "never"
      ? `every plan (the policy says auto_apply "never")`
      : `reversibility "${reversibility}" (the policy says auto_apply "reversible")`,
  ];
}

/** A path a reason names is shortened past this many bytes (as JSON), so the line is shown whole. */
const REASON_PATH_BYTES = 200;
/** What a shortened path keeps of its start, and of its end past the protected name. */
const REASON_HEAD_BYTES = 100;
const REASON_END_BYTES = 80;

/**
 * `path` as a reason names it: whole when short, else its start, the protected name it falls on
 * (`.vscode`, `.git/hooks`) and its end, `…` for what is left out. Cut at its end by K-EFF-7
 * (1024 bytes) or an approval form's line (M-ELICIT-2), a path 2,000 bytes down named neither
 * the name that needs the approval nor the file: the human approved a git hook unseen.
 */
function reasonPath(path: string, lifted: readonly string[]): string {
  if (utf8Length(JSON.stringify(path)) <= REASON_PATH_BYTES) return path;
  const segments = path.split("/");
  let at = segments.length - 1;
  while (at > 0 && !fallsOnProtected(segments.slice(at), lifted)) at--;
  const end = (rest: string) =>
    utf8Length(rest) <= REASON_END_BYTES ? rest : `…${utf8Suffix(rest, REASON_END_BYTES - 3)}`;
  // the name is not in the path as written (a linked worktree's git directory): its end then
  if (at === 0) return `${cutUtf8(path, REASON_HEAD_BYTES)}/${end(path)}`;
  const named = segments[at] === ".git" ? 2 : 1;
  const rest = segments.slice(at + named).join("/");
  return [
    cutUtf8(segments.slice(0, at).join("/"), REASON_HEAD_BYTES),
    ...segments.slice(at, at + named),
    ...(rest === "" ? [] : [end(rest)]),
  ].join("/");
}

/** Whether `principal` may grant or deny approvals (K-APPR-1). */
export function isApprover(policy: Policy, principal: string, localHuman: string): boolean {
  return policyFor(policy, principal, localHuman)?.approver ?? false;
}

/** Whether the principal may approve a plan with these effect kinds itself (K-CAP-1 step 4). */
export function canSelfApprove(p: PrincipalPolicy | null, kinds: readonly EffectKind[]): boolean {
  if (p === null) return false;
  return p.self_approve.includes("*") || kinds.every((kind) => p.self_approve.includes(kind));
}

/** The verdict an `opaque` effect gets (K-ATTACH-4 `caps.opaque`). */
export function opaqueVerdict(p: PrincipalPolicy | null): Verdict {
  if (p === null) return "deny";
  return p.opaque === "allow" ? "allow" : p.opaque === "ask" ? "approval_required" : "deny";
}

/** Whether `env_read` of every name is granted (K-SESS-1). */
export function envReadGranted(p: PrincipalPolicy | null, names: readonly string[]): boolean {
  if (p === null) return false;
  return p.env_read.includes("*") || names.every((name) => p.env_read.includes(name));
}

/** Whether `bin_hash` must be computed for this principal's plans (K-EFF-3). */
export function wantsBinHash(p: PrincipalPolicy | null): boolean {
  return p?.proc_spawn.some((grant) => grant.startsWith("sha256:")) ?? false;
}

/**
 * A grant glob matches a path as written or with its fixed prefix resolved physically: effect
 * paths are physical (issue 14), grants are written as people know the paths.
 */
function grantMatches(glob: string, path: string, home: string | undefined): boolean {
  if (pathGlobMatches(glob, path, home)) return true;
  const expanded = glob === "~" || glob.startsWith("~/")
    ? home === undefined ? glob : `${home.replace(/\/+$/, "")}${glob.slice(1)}`
    : glob;
  const physical = physicalGlob(expanded);
  return physical !== expanded && pathGlobMatches(physical, path, home);
}

/**
 * Whether `path`, granted by `glob`, falls on a protected name below the grant's root that
 * `lifted` does not lift, or on what the sandbox's last scan of that root protected beyond the
 * names (P-SBX-6): such a write needs approval even in grant, not a read-only file system.
 */
function onProtectedName(
  glob: string,
  path: string,
  home: string | undefined,
  lifted: readonly string[],
): boolean {
  const root = grantRoot(glob, home);
  if (root === null) return false;
  const physical = physicalGlob(root);
  const base = [root, physical].find((r) => isUnder(path, r));
  if (base === undefined) return false;
  const below = path.slice(base === "/" ? 1 : base.length + 1);
  if (below === "") return false;
  // a linked worktree's git directory (granted with its project, M-ONB-3) is a `.git`'s inside
  const segments = isWorktreeGitDir(base) ? [".git", ...below.split("/")] : below.split("/");
  return fallsOnProtected(segments, lifted) || heldByLastScan(physical, lifted, path);
}

const globCache = new Map<string, RegExp>();

/**
 * Whether a path glob matches `path` as literal text (P-EVAL-1): `*` and `?` stay within a
 * segment, `**` crosses segments (and `/**` also matches the directory itself), `[…]` is a
 * class, a leading `~/` is `home`.
 */
export function pathGlobMatches(glob: string, path: string, home: string | undefined): boolean {
  let prefix = "";
  let rest = glob;
  if (glob === "~" || glob.startsWith("~/")) {
    if (home === undefined) return false;
    prefix = home.replace(/\/+$/, "");
    rest = glob.slice(1);
  }
  const key = `${prefix}\0${rest}`;
  let regex = globCache.get(key);
  if (regex === undefined) {
    regex = new RegExp(`^${escapeRegex(prefix)}${globToRegex(rest)}$`, "s");
    globCache.set(key, regex);
  }
  return regex.test(path);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function globToRegex(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "\\" && i + 1 < glob.length) {
      out += escapeRegex(glob[++i]);
    } else if (
      ch === "/" && glob.startsWith("/**", i) && (i + 3 === glob.length || glob[i + 3] === "/")
    ) {
      // `/**` at the end or before `/` matches zero or more whole segments.
      out += i + 3 === glob.length ? "(?:/.*)?" : "(?:/.*)?(?=/)";
      i += 2;
    } else if (ch === "*") {
      if (glob[i + 1] === "*") {
        out += ".*";
        i++;
      } else {
        out += "[^/]*";
      }
    } else if (ch === "?") {
      out += "[^/]";
    } else if (ch === "[") {
      const end = classEnd(glob, i);
      if (end < 0) {
        out += "\\[";
      } else {
        let body = glob.slice(i + 1, end);
        const negated = body.startsWith("!") || body.startsWith("^");
        if (negated) body = body.slice(1);
        out += `[${negated ? "^/" : ""}${body.replace(/[\\\]^[]/g, "\\$&")}]`;
        i = end;
      }
    } else {
      out += escapeRegex(ch);
    }
  }
  return out;
}

/** Index of the `]` closing a class opened at `start`, or -1. */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === "!" || glob[i] === "^") i++;
  if (glob[i] === "]") i++;
  const end = glob.indexOf("]", i);
  return end;
}

/**
 * What each denied effect lacks, as the policy line that would grant it (M-ONB-3), e.g.
 * `net_connect "example.com:443"` or `fs.write "/etc/x"`: said in a refusal, so the agent and
 * its human know what to add to the policy.
 */
export function missingGrants(
  p: PrincipalPolicy,
  effects: readonly Effect[],
  home: string | undefined,
): string[] {
  const out = new Set<string>();
  for (const effect of effects) {
    if (effectVerdict(p, effect, home) !== "deny") continue;
    switch (effect.kind) {
      case "fs_read":
      case "fs_write":
      case "fs_delete":
        for (const path of effect.paths) {
          if (effectVerdict(p, { ...effect, paths: [path] }, home) === "deny") {
            out.add(`fs.${effect.kind.slice(3)} ${JSON.stringify(path)}`);
          }
        }
        break;
      case "proc_spawn":
        out.add(`proc_spawn ${JSON.stringify(effect.argv0)}`);
        break;
      case "net_connect":
        out.add(`net_connect ${JSON.stringify(`${effect.host}:${effect.port}`)}`);
        break;
      case "net_listen":
        out.add(`net_listen ${JSON.stringify(String(effect.port))}`);
        break;
      case "env_read":
      case "env_write":
      case "secret_use":
        out.add(`${effect.kind} ${JSON.stringify(effect.names)}`);
        break;
      case "opaque":
        out.add(`opaque "ask"`);
        break;
      default:
        out.add(`${effect.kind} true`);
    }
  }
  return [...out];
}
