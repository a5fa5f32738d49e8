import { Buffer } from "node:buffer";
import { cloneState, parseDump, type ShellState, unlistedEnv } from "./shell_state.ts";

/** How many parsed dumps are kept: a few sessions taking turns each find theirs. */
const KEEP = 4;
/** Dumps longer than this are parsed every time, never kept. */
const KEPT_DUMP_BYTES = 64 * 1024;

/**
 * A dump's bytes as its parse depends on them: every byte but the digits of the listing's own
 * `declare -i BASHPID="…"` line (bash's variable, never state, K-BASH-5), which differ in every
 * bash, so a run that changed nothing would never find its parse kept. Those digits are
 * `bytes[pid[0]..pid[1])`, or `pid` is null when the listing holds no such line.
 */
interface DumpKey {
  bytes: Uint8Array;
  pid: [number, number] | null;
}

/** A parsed dump and what its parse depended on besides its bytes. */
interface Parsed {
  key: DumpKey;
  bashVariables: ReadonlySet<string>;
  /** The read-only variables listed, with their values in the start state of that parse. */
  readOnly: { name: string; env: string | undefined; text: string | undefined }[];
  /** The start state's exported names that are no identifier ({@link unlistedEnv}). */
  unlisted: string;
  state: ShellState;
}

/**
 * The state dumps parsed last, so a dump like one of them is not parsed again: most runs change
 * no state, and their dump is the one before it but for bash's pid (issue 33: a parse of a small
 * session's dump took ~50 µs, ~4 % of the kernel's CPU per exec; a kept one is copied in ~10).
 * A kept parse is reused only when all it depended on is the same (the bytes, bash's own
 * variables, the start values of the read-only names it looked up, K-BASH-5, and of the exported
 * names that are no identifier), so the
 * answer is the one {@link parseDump} would give; each caller gets a copy of its own.
 */
export class ParsedDumps {
  #kept: Parsed[] = [];

  /** {@link parseDump}'s answer for a dump of a run that began with state `start`. */
  parse(
    bytes: Uint8Array,
    bashVariables: ReadonlySet<string>,
    start: ShellState,
  ): ShellState | null {
    if (bytes.length > KEPT_DUMP_BYTES) return parseDump(bytes, bashVariables, start);
    // bash's pid is no state only where bash lists it among its own variables
    const key = { bytes, pid: bashVariables.has("BASHPID") ? pidDigits(bytes) : null };
    const unlisted = unlistedEnv(start.env);
    const at = this.#kept.findIndex((p) =>
      p.bashVariables === bashVariables && p.unlisted === unlisted && sameDump(p.key, key) &&
      p.readOnly.every((r) => start.env.get(r.name) === r.env && start.vars.get(r.name) === r.text)
    );
    if (at >= 0) {
      const [hit] = this.#kept.splice(at, 1);
      this.#kept.unshift(hit);
      return cloneState(hit.state);
    }
    const names: string[] = [];
    const state = parseDump(bytes, bashVariables, start, names);
    if (state === null) return null;
    const readOnly = names.map((name) => ({
      name,
      env: start.env.get(name),
      text: start.vars.get(name),
    }));
    key.bytes = bytes.slice();
    this.#kept.unshift({ key, bashVariables, readOnly, unlisted, state: cloneState(state) });
    this.#kept.length = Math.min(this.#kept.length, KEEP);
    return state;
  }
}

const PID_LINE = Buffer.from('\ndeclare -i BASHPID="');

/**
 * Where the digits of the `declare -i BASHPID="…"` line of a dump's variable listing lie (its
 * third field, after `C`, the cwd and `D`). Only there: a function's body, later, may hold such
 * a line. Within a listing a line can start so only as a declaration of its own (a value with a
 * newline is written `$'…'`, or in double quotes with its `"` escaped).
 */
function pidDigits(bytes: Uint8Array): [number, number] | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const cwdEnd = buffer.indexOf(0, 2);
  if (buffer[0] !== 0x43 || buffer[1] !== 0 || cwdEnd < 0) return null;
  if (buffer[cwdEnd + 1] !== 0x44 || buffer[cwdEnd + 2] !== 0) return null;
  const listingEnd = buffer.indexOf(0, cwdEnd + 3);
  const line = buffer.indexOf(PID_LINE, cwdEnd + 3);
  if (line < 0) return null;
  const from = line + PID_LINE.length;
  let to = from;
  // none past the listing's end (nor when it has none: -1)
  while (to < listingEnd && buffer[to] >= 0x30 && buffer[to] <= 0x39) to++;
  return to > from ? [from, to] : null;
}

/** Whether two dumps are alike but for the digits of their {@link pidDigits}. */
function sameDump(a: DumpKey, b: DumpKey): boolean {
  const [x, y] = [Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.length), b.bytes];
  if (a.pid === null || b.pid === null) return a.pid === b.pid && x.equals(y);
  const [[aFrom, aTo], [bFrom, bTo]] = [a.pid, b.pid];
  return aFrom === bFrom && x.length - aTo === y.length - bTo &&
    x.subarray(0, aFrom).equals(y.subarray(0, bFrom)) &&
    x.subarray(aTo).equals(y.subarray(bTo));
}
