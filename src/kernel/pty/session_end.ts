/**
 * Ending everything of a PTY's session at `pty.close` (K-PTY-5: closing is never a detach). An
 * interactive shell puts each job in a process group of its own, in the session its PTY child
 * leads: signalling the child's group alone left `nohup` jobs, jobs that ignore SIGHUP, and jobs a
 * shell left behind when it exited running after the close.
 */
import { within } from "../../protocol/within.ts";
import { KILL_GRACE_MS, PTY_KILL_GRACE_MS } from "../../protocol/limits.ts";
import { procStat } from "../bash/proc_stat.ts";
import {
  endLeaderlessGroup,
  groupDeadWithin,
  groupExists,
  otherGroupsOfSession,
  sessionEndedWithin,
  signalGroupOnly,
  signalSession,
} from "../bash/group_leader.ts";

/** The signal a PTY's session is ended with, and how long it has before SIGKILL. */
export type PtyEnding = { signal: Deno.Signal; graceMs: number };

/** `pty.close`: the terminal hangs up (K-PTY-5). */
export const CLOSE_ENDING: PtyEnding = { signal: "SIGHUP", graceMs: PTY_KILL_GRACE_MS };

/**
 * Kernel shutdown: SIGTERM, as to every task's group (G-SOCK-8), so a program that ignores the
 * hangup still runs its clean-up before SIGKILL.
 */
export const SHUTDOWN_ENDING: PtyEnding = { signal: "SIGTERM", graceMs: KILL_GRACE_MS };

/**
 * `ending`'s signal to the session `sid` leads (its group and its jobs' groups), SIGKILL to what is
 * left of it once `leader` (the child's status) settled and the grace passed, then waits (the
 * grace at most) until nothing of it lives.
 */
export async function endLedSession(sid: number, leader: Promise<unknown>, ending: PtyEnding) {
  const graceMs = ending.graceMs;
  const deadline = performance.now() + graceMs;
  // A job that started a session of its own is found only while its parent lives: before the hangup.
  const departed = otherGroupsOfSession(sid).map((group) => ({ group, start: startTime(group) }));
  // ESRCH on the group: it is empty, or the launcher has not yet made the child its leader.
  signalSession(sid, ending.signal);
  await within(leader, graceMs);
  if (!(await sessionEndedWithin(sid, Math.max(0, deadline - performance.now())))) {
    signalSession(sid, "SIGKILL");
  }
  for (const { group, start } of departed) {
    if (sameGroup(group, start)) signalGroupOnly(group, "SIGKILL");
  }
  await leader;
  // a killed process runs until scheduled, and the close answers after
  await sessionEndedWithin(sid, graceMs);
  for (const { group } of departed) await groupDeadWithin(group, graceMs);
}

/** Start time of process `pid` (/proc/PID/stat field 22), or null when there is none. */
function startTime(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/**
 * Whether process group `group` is still the one seen with leader start time `start`: its leader
 * is that same process, or it is leaderless and has members (then its number is not given out).
 */
function sameGroup(group: number, start: string | null): boolean {
  const now = startTime(group);
  return now === null ? groupExists(group) : now === start;
}

/**
 * Ends what is left of session `sid` once its leader was reaped: its own group and its jobs'
 * groups. While a member lives, no process gets pid `sid`; once one has it (pids wrap), a session
 * of that number is the new process's own and is left alone.
 */
export async function endLeaderlessSession(sid: number, ending: PtyEnding): Promise<void> {
  const graceMs = ending.graceMs;
  await endLeaderlessGroup(sid, graceMs, ending.signal);
  if (leaderLives(sid)) return;
  const groups = otherGroupsOfSession(sid);
  if (groups.length === 0) return;
  for (const group of groups) signalGroupOnly(group, ending.signal);
  if (await sessionEndedWithin(sid, graceMs) || leaderLives(sid)) return;
  for (const group of otherGroupsOfSession(sid)) signalGroupOnly(group, "SIGKILL");
  await sessionEndedWithin(sid, graceMs);
}

/** Whether a process (a zombie included) has pid `pid` (Linux /proc; elsewhere assumed). */
function leaderLives(pid: number): boolean {
  if (Deno.build.os !== "linux") return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}
