/**
 * A resident sandbox's network relay (P-NET-1): the forwarder's child that listens on the
 * namespace's loopback and carries every connection to the proxy. An agent's process can still
 * kill it (same user), and the sandbox then has no way out left: such a resident is not entered
 * again (`residents.ts`, `warm_shell.ts`), a fresh one serves the next run.
 */
import { RELAY_NAME } from "../net/inside.ts";
import { childrenOf } from "./protected_mounts.ts";

/** The `comm` of `pid` with its state (`R`, `S`, `Z`, …), or null once it is gone. */
function nameAndState(pid: number): { name: string; state: string } | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const close = stat.lastIndexOf(")");
    return { name: stat.slice(stat.indexOf("(") + 1, close), state: stat.charAt(close + 2) };
  } catch {
    return null;
  }
}

/** The host pid of the relay among the children of `launcher` (the forwarder's own pid), or null. */
export function relayOf(launcher: number): number | null {
  return childrenOf(launcher).find((pid) => nameAndState(pid)?.name === RELAY_NAME) ?? null;
}

/** Whether the relay `pid` still runs (not gone, not a zombie, not another process since). */
export function relayRuns(pid: number): boolean {
  const now = nameAndState(pid);
  return now !== null && now.name === RELAY_NAME && now.state !== "Z" && now.state !== "X";
}
