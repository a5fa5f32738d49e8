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
