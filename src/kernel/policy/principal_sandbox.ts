/** Which principals run inside the sandbox, and the sandbox of one of their runs (P-SBX-2, P-SBX-3). */
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import type { Effect } from "./effects.ts";
import type { PrincipalPolicy } from "./leash.ts";
import type { Sandboxing } from "../sandbox/command.ts";
import type { SandboxHost } from "../sandbox/probe.ts";
import {
  isUnder,
  OWN_MOUNTS,
  type SandboxGrants,
  sandboxView,
  visibleIn,
} from "../sandbox/view.ts";
import { sandboxNet } from "../net/destinations.ts";
import { namespaceFloor } from "../sandbox/port_floor.ts";
import { withGitIdentity } from "../sandbox/git_identity.ts";
import { withGitExcludes } from "../sandbox/git_excludes.ts";
import { tmpfsBounds } from "../sandbox/tmpfs_bounds.ts";
import { SCAN_DEPTH, SCAN_DIR_LIMIT } from "../sandbox/scan_listings.ts";

/** This host's bounds on a sandbox's tmpfs (`tmpfs_bounds.ts`). */
const TMPFS_BOUNDS = tmpfsBounds();

/** The kernel's sandbox facts: what the host offers and what every view hides. */
export interface SandboxSetting {
  host: SandboxHost;
  /** HOME of the kernel, for `~/` in grants. */
  home: string | undefined;
  /** The kernel's state directory, socket directory and policy file (P-SBX-3 masks). */
  masked: readonly string[];
  /** The host file of the human's git identity for sandboxes, made when first asked, or null. */
  gitIdentity: () => string | null;
  /** The host file holding a git excludes text, made when first asked for it, or null. */
  gitExcludes: (text: string) => string | null;
}

/** What the sandbox enforces of a principal's policy (P-SBX-3): its file grants. */
function policyGrants(policy: PrincipalPolicy): SandboxGrants {
  return {
    read: policy.fs_read,
    write: [...policy.fs_write, ...policy.fs_delete],
    writableProtected: policy.writable_protected,
  };
}

/**
 * `grants` widened by what an approved plan may do (P-SBX-3): the parent directory of each
 * approved write or delete read-write (and the protected path it falls on writable, P-SBX-6),
 * each approved read read-only; `sandboxView` shows each only where it still leads.
 */
function withApproved(grants: SandboxGrants, effects: readonly Effect[]): SandboxGrants {
  const approvedReads: string[] = [];
  const approvedWrites: string[] = [];
  for (const effect of effects) {
    if (effect.kind === "fs_read") approvedReads.push(...effect.paths);
    else if (effect.kind === "fs_write" || effect.kind === "fs_delete") {
      approvedWrites.push(...effect.paths);
    }
  }
  return { ...grants, approvedReads, approvedWrites };
}

/**
 * The destinations a run reaches through the proxy (P-NET-1): the `net_connect` grants, plus
 * exactly each approved connection of the plan it runs (P-SBX-3).
 */
function netGrants(policy: PrincipalPolicy, effects: readonly Effect[]): string[] {
  const grants = [...policy.net_connect];
  for (const effect of effects) {
    // its host as every destination is named (an IPv6 literal bracketed): a grant as written
    if (effect.kind === "net_connect") grants.push(`${effect.host}:${effect.port}`);
  }
  return grants;
}

/**
 * Whether a principal's runs go into the sandbox: a token principal (never the local human) whose
 * policy leaves `sandbox` on, on a host with tier B (P-SBX-2).
 */
export function isSandboxed(
  setting: SandboxSetting,
  policy: PrincipalPolicy | null,
  localHuman: boolean,
): boolean {
  return setting.host.tier === "B" && !localHuman && policy !== null && policy.sandbox;
}

/**
 * Whether a run of a sandboxed principal would see the existing host `path` (P-SBX-3): shown by
 * its grants and not masked, nor under the `/proc` and `/dev` the sandbox makes its own. What the
 * kernel lists for it (`complete`) must not show more.
 */
export function sandboxShows(
  setting: SandboxSetting,
  policy: PrincipalPolicy,
  path: string,
): boolean {
  if (OWN_MOUNTS.some((own) => isUnder(path, own))) return false;
  // Every root read-only: the same paths are shown, and no protected names are looked for.
  const { read, write } = policyGrants(policy);
  return visibleIn(
    sandboxView({ read: [...read, ...write], write: [] }, setting.home, setting.masked),
    path,
  );
}

/**
 * The sandbox one run of `principal` goes into, or null when it runs unconfined; `approved` are
 * the effects of the approved plan it runs, if any. Refuses with -32010 a hermetic principal that
 * would run unconfined (`hermetic_unavailable`) and a run whose `cwd` the sandbox does not show
 * (`cwd_outside_sandbox`), one while a protected file has a second name (`protected_hardlink`,
 * P-SBX-6), and one while a write root holds more directories than the protection scan reads
 * (`protection_scan_limit`) or a directory whose name is not UTF-8 holding a protected name
 * (`protection_scan_name`):
 * nothing runs then.
 */
export function runSandbox(
  setting: SandboxSetting,
  policy: PrincipalPolicy | null,
  localHuman: boolean,
  principal: string,
  cwd: string,
  approved: readonly Effect[] = [],
): Sandboxing | null {
  if (!isSandboxed(setting, policy, localHuman)) {
    if (policy?.hermetic === true) {
      throw new RpcError(ErrorCode.LEASH_DENIED, "hermetic principal but no sandbox is available", {
        reason: "hermetic_unavailable",
      });
    }
    return null;
  }
  const grants = withApproved(policyGrants(policy!), approved);
  const view = withGitExcludes(
    withGitIdentity(
      sandboxView(grants, setting.home, setting.masked),
      setting.home,
      setting.gitIdentity(),
    ),
    setting.home,
    setting.gitExcludes,
  );
  if (!visibleIn(view, cwd)) {
    throw new RpcError(
      ErrorCode.LEASH_DENIED,
      `the working directory ${cwd} is outside this principal's sandbox, so nothing ran: the ` +
        "session's cwd must first move into a directory the sandbox shows (a cd of another " +
        "principal's, or a facade's --project when it attaches)",
      { reason: "cwd_outside_sandbox", cwd },
    );
  }
  const linked = view.protection.linked;
  if (linked.length > 0) {
    throw new RpcError(
      ErrorCode.LEASH_DENIED,
      `the protected file ${
        linked[0]
      } has another name (a hard link), through which it would stay writable: remove the other name first`,
      { reason: "protected_hardlink", paths: linked.slice(0, 100) },
    );
  }
  const unscanned = view.protection.unscanned ?? [];
  if (unscanned.length > 0) {
    throw new RpcError(
      ErrorCode.LEASH_DENIED,
      `the writable directory ${unscanned[0]} holds more than ${SCAN_DIR_LIMIT} directories ` +
        `within ${SCAN_DEPTH} levels (outside node_modules), more than the sandbox looks through ` +
        "for the files it keeps read-only (P-SBX-6), so nothing ran: remove directories there, " +
        "or grant writes to a smaller directory",
      { reason: "protection_scan_limit", paths: unscanned },
    );
  }
  const unnamed = view.protection.unnamed ?? [];
  if (unnamed.length > 0) {
    throw new RpcError(
      ErrorCode.LEASH_DENIED,
      `the writable directory ${unnamed[0]} holds a directory whose name is not UTF-8 with a ` +
        "repository or a protected name (such as .envrc or .vscode) inside, which the sandbox " +
        "cannot name to keep read-only (P-SBX-6), so nothing ran: rename that directory",
      { reason: "protection_scan_name", paths: unnamed.slice(0, 100) },
    );
  }
  const net = sandboxNet(principal, netGrants(policy!, approved), policy!.net_listen);
  const portFloor = namespaceFloor(net, policy!.net_listen);
  const afresh = () => runSandbox(setting, policy, localHuman, principal, cwd, approved);
  const { bwrap, prlimit, sizedTmpfs } = setting.host as SandboxHost & { tier: "B" };
  const tmpfs = sizedTmpfs ? TMPFS_BOUNDS : null;
  return { principal, bwrap, prlimit, view, net, portFloor, tmpfs, afresh };
}
