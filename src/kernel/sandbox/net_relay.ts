/**
 * A resident sandbox's network relay (P-NET-1): the forwarder's child that listens on the
 * namespace's loopback and carries every connection to the proxy. An agent's process can still
 * kill it (same user), and the sandbox then has no way out left: such a resident is not entered
 * again (`residents.ts`, `warm_shell.ts`), a fresh one serves the next run.
 */
import { RELAY_NAME } from "../net/inside.ts";
import { childrenOf } from "./protected_mounts.ts";

/**
 * The bits in the pending sets of /proc/PID/status of SIGKILL, which ends the relay, and of
 * SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU, which stop it (it handles none of them).
 */
const SIGKILL_BIT = 1n << 8n;
const STOP_BITS = (1n << 18n) | (1n << 19n) | (1n << 20n) | (1n << 21n);
/** PF_EXITING in the flags of /proc/PID/stat: the process has begun to exit. */
const PF_EXITING = 0x4;

/**
 * The `comm` of `pid` with its state (`R`, `S`, `Z`, …), and whether it is ending: it has begun
 * to exit, or SIGKILL is pending (a `kill -KILL`, or any fatal signal, which Linux turns into one
 * for each thread), or a stop signal is (an agent's `kill -STOP`: relay_kill_test's next run met
 * it still sleeping, and its connection hung), which it may not act on for a while on a loaded
 * host; null once it is gone.
 */
function nameAndState(pid: number): { name: string; state: string; ending: boolean } | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const close = stat.lastIndexOf(")");
    // after the name: state, ppid, pgrp, session, tty_nr, tpgid, flags, …
    const flags = Number(stat.slice(close + 2).split(" ")[6]);
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const pending = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)]
      .reduce((bits, m) => bits | BigInt(`0x${m[1]}`), 0n);
    return {
      name: stat.slice(stat.indexOf("(") + 1, close),
      state: stat.charAt(close + 2),
      ending: (pending & (SIGKILL_BIT | STOP_BITS)) !== 0n || (flags & PF_EXITING) !== 0,
    };
  } catch {
    return null;
  }
}

/** The host pid of the relay among the children of `launcher` (the forwarder's own pid), or null. */
export function relayOf(launcher: number): number | null {
  return childrenOf(launcher).find((pid) => nameAndState(pid)?.name === RELAY_NAME) ?? null;
}

/** States of a relay that relays nothing: dead, a zombie, stopped by a signal or a tracer. */
const NOT_RELAYING = new Set(["X", "Z", "T", "t"]);

/**
 * Whether the relay `pid` still runs: not gone, not a zombie, not stopped (an agent's `kill
 * -STOP`: every connection of its sandbox hung), not another process since, and not ending. An
 * agent's `kill -KILL` returns before the relay has ended: the run after it must not enter a
 * sandbox whose relay is about to be gone (P-NET-1).
 */
export function relayRuns(pid: number): boolean {
  const now = nameAndState(pid);
  return now !== null && now.name === RELAY_NAME && !NOT_RELAYING.has(now.state) && !now.ending;
}
