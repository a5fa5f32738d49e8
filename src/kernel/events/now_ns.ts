import process from "node:process";

/** How far the ns clock may run from the wall clock before it follows it again. */
const DRIFT_NS = 2_000_000n;

let originNs = BigInt(Date.now()) * 1_000_000n;
let originHr = process.hrtime.bigint();
let lastNs = 0n;

/**
 * The current time in ns since the Unix epoch, monotonic within this process: the monotonic
 * clock's resolution, set again to the wall clock when the two part by more than 2 ms (a VM's
 * clock is stepped; the monotonic clock is not, and timestamps and token expiries would drift).
 */
export function nowNs(): bigint {
  const hr = process.hrtime.bigint();
  const wall = BigInt(Date.now()) * 1_000_000n;
  let now = originNs + (hr - originHr);
  if (now > wall + DRIFT_NS || now < wall - DRIFT_NS) {
    originNs = wall;
    originHr = hr;
    now = wall;
  }
  lastNs = now > lastNs ? now : lastNs + 1n;
  return lastNs;
}
