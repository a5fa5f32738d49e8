/**
 * The policy as it is on disk now: the kernel re-reads its policy file when the file's (inode,
 * size, mtime, ctime) changed, as it does the token store (T-TOK-4), so an agent that
 * `shoal-mcp --print-config` added to the policy of a running kernel can attach at once (M-ONB-1).
 */
import { surelyMissing } from "../bash/surely_missing.ts";
import { defaultPolicy, parsePolicyText, type Policy, readPolicyText } from "./leash.ts";

/**
 * How long after a file's ctime (whole seconds: Deno reports no finer) its stamp cannot tell a
 * later edit: one in the same second that keeps the size and sets the mtime back (`cp -p`,
 * `rsync -t`, `tar x`, `touch -r`) changes nothing the stamp holds. A read that soon after it is
 * followed by reads of the text itself until a read comes this long after it (git's racy-clean).
 */
const CTIME_GRAIN_MS = 2000;

interface FileStamp {
  /** The (inode, size, mtime, ctime) of the file. */
  key: string;
  ctimeMs: number;
}

/**
 * The stamp of `path`, or null when it does not exist. Deno's own stat: node's `statSync` builds
 * its `Stats` from the same figures at ~10 µs more a call, and every request takes this (issue 33).
 */
function stampOf(path: string): FileStamp | null {
  if (surelyMissing(path)) return null; // no policy file: no NotFound thrown on every request
  try {
    const s = Deno.statSync(path);
    const ctimeMs = s.ctime?.getTime() ?? 0;
    return { key: `${s.ino}:${s.size}:${s.mtime?.getTime()}:${ctimeMs}`, ctimeMs };
  } catch {
    return null;
  }
}

/** Whether two policies grant the same (their entries hold only JSON values). */
function samePolicy(a: Policy, b: Policy): boolean {
  return JSON.stringify([...a.principals]) === JSON.stringify([...b.principals]);
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
  /**
   * The text last read (null: none since the start, or the file was removed or unreadable), and
   * why the file could not be read: a re-read finding either again changes and logs nothing.
   */
  #text: string | null = null;
  #unread: string | null = null;
  /** When the file was last read ({@link CTIME_GRAIN_MS}); the start counts as one. */
  #readAt = Date.now();

  /** Watches `path` (null: no file, the default policy forever), loaded as `initial` at startup. */
  constructor(
    private readonly path: string | null,
    initial: Policy,
    private readonly log: (line: string) => void,
  ) {
    this.#stamp = path === null ? null : stampOf(path)?.key ?? null;
    this.#policy = initial;
  }

  /** The policy now: re-read first when the file changed since the last read. */
  current(): Policy {
    if (this.path === null) return this.#policy;
    const stamp = stampOf(this.path);
    const racy = stamp !== null && this.#readAt < stamp.ctimeMs + CTIME_GRAIN_MS;
    if ((stamp?.key ?? null) === this.#stamp && !racy) return this.#policy;
    this.#stamp = stamp?.key ?? null;
    if (stamp === null) {
      this.#text = this.#unread = null;
      this.#policy = defaultPolicy();
      this.log(`policy ${this.path} removed: using the default policy`);
      return this.#policy;
    }
    this.#readAt = Date.now();
    let text: string;
    try {
      text = readPolicyText(this.path);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (why !== this.#unread) this.log(`${why}; keeping the policy loaded before`);
      this.#unread = why;
      this.#text = null;
      return this.#policy;
    }
    this.#unread = null;
    if (text === this.#text) return this.#policy;
    this.#text = text;
    try {
      const policy = parsePolicyText(text, this.path);
      if (!samePolicy(policy, this.#policy)) {
        this.#policy = policy;
        this.log(`policy ${this.path} reloaded`);
      }
    } catch (e) {
      this.log(`${e instanceof Error ? e.message : String(e)}; keeping the policy loaded before`);
    }
    return this.#policy;
  }
}
