/**
 * One event on the bus (K-EVT-5). `ts` is ns since the epoch as a bigint because it exceeds
 * 2^53; the kernel's JSON encoder writes it as an exact integer (W-NUM-1).
 */
export interface BusEvent {
  channel: string;
  seq: number;
  ts: bigint;
  payload: unknown;
}

/**
 * Whom a kernel-owned event of a dynamic channel is for (K-EVT-8): the connections attached to
 * `session` and, when `principal` is set, only that principal's and the session's local human's.
 * Kept beside the event, never sent.
 */
export interface Audience {
  session: string;
  principal?: string;
}
