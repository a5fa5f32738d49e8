/** The grants a sandboxed run is confined to: the principal's policy, plus an approved plan's effects. */
import type { Effect } from "../policy/effects.ts";
import type { PrincipalPolicy } from "../policy/leash.ts";
import type { SandboxGrants } from "./view.ts";

/** What the sandbox enforces of a principal's policy (P-SBX-3). */
export function policyGrants(policy: PrincipalPolicy): SandboxGrants {
  return {
    read: policy.fs_read,
    write: [...policy.fs_write, ...policy.fs_delete],
    net: policy.net_connect.length > 0 || policy.net_listen.length > 0,
  };
}

/**
 * `grants` widened by what an approved plan may do (P-SBX-3): the parent directory of each
 * approved write or delete read-write, each approved read read-only, and the network when a
 * connect or listen was approved.
 */
export function withApproved(grants: SandboxGrants, effects: readonly Effect[]): SandboxGrants {
  const read = [...grants.read];
  const write = [...grants.write];
  let net = grants.net;
  for (const effect of effects) {
    if (effect.kind === "fs_read") read.push(...effect.paths);
    else if (effect.kind === "fs_write" || effect.kind === "fs_delete") {
      write.push(...effect.paths.map((path) => path.slice(0, path.lastIndexOf("/")) || "/"));
    } else if (effect.kind === "net_connect" || effect.kind === "net_listen") net = true;
  }
  return { read, write, net };
}
