/**
 * Outcomes a session's transcript keeps with their output left in the CAS (issue 33): an older
 * `out:N` whose streams are read back and converted again (K-BASH-10) when asked for is the same
 * value as the one first stored, without its output held in memory meanwhile.
 */
import { INLINE_VALUE_LIMIT } from "../../protocol/limits.ts";
import type { BlobInfo, Captured } from "../store/blob_info.ts";
import type { Cas } from "../store/cas.ts";
import { BlobValue } from "./blob_value.ts";
import { outcomeValue } from "./outcome.ts";
import type { OutcomeInput } from "./outcome.ts";
import type { Outcome, Value } from "./value.ts";

/** Output an outcome holds below which it is kept as it is: its spill would save nothing. */
const SPILL_MIN_BYTES = 1024;

/** An outcome whose streams are in the CAS only: {@link restored} builds it again. */
export class SpilledOutcome {
  readonly status: number | null;
  readonly signal: string | null;
  readonly durNs: number;
  readonly pid: number;
  readonly cmd: string;
  readonly netRefused: readonly string[];

  constructor(
    readonly cas: Cas,
    outcome: Outcome,
    readonly out: BlobInfo,
    readonly err: BlobInfo,
  ) {
    this.status = outcome.status;
    this.signal = outcome.signal;
    this.durNs = outcome.durNs;
    this.pid = outcome.pid;
    this.cmd = outcome.cmd;
    this.netRefused = outcome.netRefused;
  }

  /** The outcome, its streams read back from the CAS (a blob gone → -32004). */
  async restored(): Promise<Outcome> {
    const [out, err] = await Promise.all([this.#captured(this.out), this.#captured(this.err)]);
    const { status, signal, durNs, pid, cmd, netRefused } = this;
    const input: OutcomeInput = { status, signal, out, err, dur_ns: durNs, pid, cmd, netRefused };
    return outcomeValue(this.cas, input, cmd);
  }

  /** A stream as captured: its bytes when the outcome held them in memory. */
  async #captured(blob: BlobInfo): Promise<Captured> {
    if (blob.len > INLINE_VALUE_LIMIT) return { blob, bytes: null };
    return { blob, bytes: await BlobValue.whole(this.cas, blob).read(0, blob.len) };
  }
}

/** A value of a session's transcript. */
export type TranscriptValue = Value | SpilledOutcome;

/**
 * How `outcome`, built from `input`, is kept spilled (the `Spill` a session's transcript takes):
 * the bytes of output it holds in memory, and its spilled form; undefined when it holds under
 * {@link SPILL_MIN_BYTES} of output in memory, or its stdout is CAS-backed (a JSON text over
 * INLINE_VALUE_LIMIT is held parsed: reading it back would parse it again at every read).
 */
export function outcomeSpill(
  cas: Cas,
  input: OutcomeInput,
  outcome: Outcome,
): { bytes: number; spilled: () => TranscriptValue } | undefined {
  const out = input.out.blob, err = input.err.blob;
  if (out.len > INLINE_VALUE_LIMIT) return undefined;
  const bytes = out.len + (err.len > INLINE_VALUE_LIMIT ? 0 : err.len);
  if (bytes < SPILL_MIN_BYTES) return undefined;
  return { bytes, spilled: () => new SpilledOutcome(cas, outcome, out, err) };
}

/** A transcript value as the value it stands for. */
export function transcriptValue(v: TranscriptValue): Value | Promise<Value> {
  return v instanceof SpilledOutcome ? v.restored() : v;
}
