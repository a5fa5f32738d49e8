/**
 * The policy as it is on disk now: the kernel re-reads its policy file when the file's (inode,
 * size, mtime) changed, as it does the token store (T-TOK-4), so an agent that
 * `shoal-mcp --print-config` added to the policy of a running kernel can attach at once (M-ONB-1).
 */
import { statSync } from "node:fs";
import { defaultPolicy, loadPolicyFile, type Policy } from "./leash.ts";

/** The (inode, size, mtime) of `path`, or null when it does not exist. */
function stampOf(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
}

/**
 * Keeps the policy of one file current. A file that appears or changes is loaded; one that
 * becomes malformed keeps the last good policy (logged once per change: a half-edited file never
 * widens or empties anyone's grants); one that is removed leaves the default policy, where every
 * agent is unknown (denied).
 */
export class PolicyWatch {
  #stamp: string | null;
  #policy: Policy;

  /** Watches `path` (null: no file, the default policy forever), loaded as `initial` at startup. */
  constructor(
    private readonly path: string | null,
    initial: Policy,
    private readonly log: (line: string) => void,
  ) {
    this.#stamp = path === null ? null : stampOf(path);
    this.#policy = initial;
  }

  /** The policy now: re-read first when the file changed since the last read. */
  current(): Policy {
    if (this.path === null) return this.#policy;
    const stamp = stampOf(this.path);
    if (stamp === this.#stamp) return this.#policy;
    this.#stamp = stamp;
    if (stamp === null) {
      this.#policy = defaultPolicy();
      this.log(`policy ${this.path} removed: using the default policy`);
      return this.#policy;
    }
    try {
      this.#policy = loadPolicyFile(this.path);
      this.log(`policy ${this.path} reloaded`);
    } catch (e) {
      this.log(`${e instanceof Error ? e.message : String(e)}; keeping the policy loaded before`);
    }
    return this.#policy;
  }
}
