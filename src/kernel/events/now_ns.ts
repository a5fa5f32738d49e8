import process from "node:process";

const originNs = BigInt(Date.now()) * 1_000_000n;
const originHr = process.hrtime.bigint();

/** The current time in ns since the Unix epoch, monotonic within this process. */
export function nowNs(): bigint {
  return originNs + (process.hrtime.bigint() - originHr);
}
