import { dirIdentity } from "../bash/dir_identity.ts";
import { sameCwd, type ShellCwd, shellCwd } from "../bash/shell_state.ts";

/**
 * Who moved a session's shared cwd last, and into which directory (P-SBX-7). A sandboxed
 * principal's exec is taken into a cwd only where its sandbox could be, but a later exec of its
 * own, ending in that cwd (so no change is checked), can swap the directory for a symlink to any
 * other (`mv ../sub ../old; ln -s ~ ../sub`): the same path then names a directory it chose out
 * of its reach. Every other principal then runs in the cwd the owner last left, until the owner
 * moves the session again. A cwd that is not UTF-8 cannot be checked (a path here is text; bash
 * enters its last components after the spawn, following a symlink there): one another principal
 * moved the session into is never used by the rest.
 */
export class CwdOrigin {
  #owner: ShellCwd;
  #movedBy: { principal: string; identity: string | null } | null = null;

  constructor(start: ShellCwd, readonly ownerName: string) {
    this.#owner = shellCwd(start);
  }

  /** Records a merge of `principal` that left the shared cwd `now` (it was `before`). */
  merged(principal: string, before: ShellCwd, now: ShellCwd): void {
    if (sameCwd(before, now)) return;
    if (principal === this.ownerName) {
      this.#owner = shellCwd(now);
      this.#movedBy = null;
    } else this.#movedBy = { principal, identity: dirIdentity(now.cwd) };
  }

  /**
   * The cwd `principal` runs in when the shared one is `now`: null for `now` itself (nobody else
   * moved the session there); `now` with the identity bash must find there when another
   * principal did; the owner's when the path no longer names that directory (or is not UTF-8).
   */
  for(principal: string, now: ShellCwd): ShellCwd & { cwdIdentity?: string } | null {
    const by = this.#movedBy;
    if (by === null || by.principal === principal) return null;
    const identity = by.identity;
    if (now.cwdBytes === undefined && identity !== null && dirIdentity(now.cwd) === identity) {
      return { cwd: now.cwd, cwdIdentity: identity };
    }
    return shellCwd(this.#owner);
  }
}
