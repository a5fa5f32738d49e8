import process from "node:process";
import { inBoundDir } from "./bound_dir.ts";
import type { BashChild } from "./bash_child.ts";
import { cLibrary } from "./c_library.ts";
import { errno } from "./fd_calls.ts";
import { posixSpawn, posixSpawnAvailable } from "./posix_spawn.ts";
import { procStat } from "./proc_stat.ts";
import { isFile } from "./regular_file.ts";
import { type ShellState, spawnDir } from "./shell_state.ts";

/**
 * setsid(1) on Linux, for a spawn {@link posixSpawn} cannot do: a child it starts leads a new
 * session and process group under its own pid (it calls setsid() and execs, since a freshly
 * spawned child leads no group). Spawning through it keeps Deno on its cheap spawn path;
 * `detached: true` makes Deno fork the whole kernel, which blocks the event loop several times
 * longer.
 */
const SETSID = Deno.build.os === "linux"
  ? ["/usr/bin/setsid", "/bin/setsid"].find(isFile) ?? null
  : null;

/**
 * Spawns `argv` as K-BASH-1 wants it: the leader of a new process group under its own pid, stdin
 * /dev/null, the state's cwd and exactly its exported environment, output piped. This one place
 * decides how: through {@link posixSpawn} where it is available (Linux, glibc 2.29, pidfds) and the
 * program is a path (one exec, reaped by the kernel), else by Deno.
 */
export function spawnGroupLeader([cmd, ...args]: string[], state: ShellState): BashChild {
  if (posixSpawnAvailable() && cmd.includes("/")) {
    return inBoundDir(state, (cwd) => posixSpawn({ argv: [cmd, ...args], cwd, env: state.env }));
  }
  const session = newSession([cmd, ...args]);
  return inBoundDir(
    state,
    (cwd) => new Deno.Command(session.cmd, { ...spawnOptions(state), cwd, ...session }).spawn(),
  );
}

/**
 * How to spawn `argv` as the leader of a new session, with no controlling terminal: through
 * {@link SETSID} where there is one, else by Deno's `detached`. The child keeps its own pid.
 */
export function newSession(
  [cmd, ...args]: string[],
): { cmd: string; args: string[]; detached: boolean } {
  return SETSID === null
    ? { cmd, args, detached: true }
    : { cmd: SETSID, args: [cmd, ...args], detached: false };
}

/** The options every bash spawn takes: the state's cwd and exactly its environment, stdin /dev/null, output piped. */
export function spawnOptions(state: ShellState): Deno.CommandOptions {
  return {
    cwd: spawnDir(state),
    env: Object.fromEntries(state.env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  };
}

/**
 * Signals the process group led by `pid`; false when nothing was there or `pid` is no pid. A child spawned through
 * setsid(1) may not lead its group yet: then it has started nothing either, and `pid` alone is
 * signalled.
 */
export function signalGroup(pid: number, signal: Deno.Signal): boolean {
  if (!(pid > 0)) return false; // kill(0) and kill(-0) would signal the kernel's own group
  try {
    Deno.kill(-pid, signal);
    return true;
  } catch {
    try {
      Deno.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** errno of kill(2) on a process the caller may not signal (the same on Linux and macOS). */
const EPERM = 1;

const KILL = { kill: { parameters: ["i32", "i32"], result: "i32" } } as const;

let killCall: ((pid: number, signal: number) => number) | null | undefined;

/**
 * kill(2) through the C library where the kernel has its facts, else null: a probe of a group that
 * is gone then fails with a return value, where process.kill throws an error that costs 0.07 ms
 * (a sandboxed run's end asks once).
 */
function kill(): ((pid: number, signal: number) => number) | null {
  if (killCall === undefined) {
    const libc = cLibrary(Deno.build.os);
    killCall = libc === null ? null : Deno.dlopen(libc, KILL).symbols.kill;
  }
  return killCall;
}

/** Whether any process (zombies included) still belongs to process group `pgid`. */
export function groupExists(pgid: number): boolean {
  if (!(pgid > 0)) return false; // kill(-0) would ask about the kernel's own group
  const call = kill();
  if (call !== null) return call(-pgid, 0) === 0 || errno() === EPERM;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether process group `pgid` has members but no process has pid `pgid`: the group of a leader
 * that was reaped. A pid is not given out again while a group of its number has members, so once
 * a process has it again (pids wrap), a group under that number is the new process's own.
 */
export function leaderlessGroup(pgid: number): boolean {
  if (!groupExists(pgid)) return false;
  const call = kill();
  if (call !== null) return !(call(pgid, 0) === 0 || errno() === EPERM);
  try {
    process.kill(pgid, 0);
    return false;
  } catch {
    return true;
  }
}

/** How often the waits below look. */
const GROUP_POLL_MS = 50;

/** Whether `gone` holds within `ms` (asked every {@link GROUP_POLL_MS}). */
async function goneWithin(gone: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (let left = ms; left > 0; left = deadline - performance.now()) {
    if (gone()) return true;
    await new Promise((resolve) => setTimeout(resolve, Math.min(GROUP_POLL_MS, left)));
  }
  return gone();
}

/**
 * Whether no member of process group `pgid` is alive within `ms`: killed members gone or zombies
 * (Linux /proc; elsewhere, the group gone). A SIGKILLed process still runs until it is scheduled.
 */
export function groupDeadWithin(pgid: number, ms: number): Promise<boolean> {
  return goneWithin(() => !liveMember(pgid), ms);
}

/** Whether a process of group `pgid` lives (not a zombie, not exiting). */
function liveMember(pgid: number): boolean {
  if (!groupExists(pgid)) return false;
  if (Deno.build.os !== "linux") return true;
  for (const [, ids] of liveProcesses()) if (ids.group === pgid) return true;
  return false;
}

/** Each live process of this host with its ids ({@link processIds}), from Linux's /proc. */
function* liveProcesses(): Generator<[number, { parent: number; group: number; session: number }]> {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    const ids = processIds(pid);
    if (ids !== null) yield [pid, ids];
  }
}

/**
 * Whether session `sid`'s own process group, every other group {@link otherGroupsOfSession}
 * finds, and each of `groups` (found earlier, while they could be) are gone within `ms`.
 */
export function sessionGoneWithin(
  sid: number,
  ms: number,
  groups: readonly number[] = [],
): Promise<boolean> {
  return goneWithin(
    () =>
      !groupExists(sid) && otherGroupsOfSession(sid).length === 0 &&
      groups.every((group) => !groupExists(group)),
    ms,
  );
}

/**
 * Whether nothing of session `sid`, and of each of `groups` (found earlier), is alive within `ms`.
 * On Linux a zombie has ended (SIGKILL is for what still runs): a sandbox's inner bwrap, which its
 * outer one leaves to the host's init, stays one until that init reaps it, and an init that reaps
 * late (seconds here) kept such a group answering for the whole grace. Elsewhere they must be gone.
 */
export function sessionEndedWithin(
  sid: number,
  ms: number,
  groups: readonly number[] = [],
): Promise<boolean> {
  if (Deno.build.os !== "linux") return sessionGoneWithin(sid, ms, groups);
  return goneWithin(() => {
    // a live leader, as while a run ignores SIGTERM, answers without reading every process
    if (processIds(sid)?.session === sid) return false;
    for (const [, ids] of liveProcesses()) {
      if (ids.session === sid || groups.includes(ids.group)) return false;
    }
    return true;
  }, ms);
}

/**
 * The parent, process group and session of `pid` (/proc/PID/stat fields 4, 5 and 6), or null once
 * it is gone, a zombie or dying: a process that is exiting shows group and session 0, and a kill
 * of group 0 would signal the kernel's own group.
 */
export function processIds(pid: number): { parent: number; group: number; session: number } | null {
  const fields = procStat(pid);
  if (fields === null) return null;
  const [state, parent, group, session] = fields;
  const ids = { parent: Number(parent), group: Number(group), session: Number(session) };
  return state === "Z" || !(ids.group > 0 && ids.session > 0) ? null : ids;
}

/**
 * The process groups, other than `sid` itself, of the processes of session `sid` and of their
 * descendants (Linux /proc; none elsewhere): the jobs a shell with job control (`set -m`) moved
 * into groups of their own, and a child that started a session of its own (`setsid`) while its
 * parent lives. While a member lives, `sid` names that session and no other. One that a process
 * gone since started (a double fork) is not found.
 */
export function otherGroupsOfSession(sid: number): number[] {
  if (!(sid > 0) || Deno.build.os !== "linux") return [];
  const children = new Map<number, number[]>();
  const groups = new Map<number, number>();
  const found: number[] = [];
  for (const [pid, ids] of liveProcesses()) {
    groups.set(pid, ids.group);
    const siblings = children.get(ids.parent);
    if (siblings === undefined) children.set(ids.parent, [pid]);
    else siblings.push(pid);
    if (ids.session === sid) found.push(pid);
  }
  const reached = new Set(found);
  for (const pid of reached) { // a Set iterates over what is added while it runs
    for (const child of children.get(pid) ?? []) reached.add(child);
  }
  return [...new Set([...reached].map((pid) => groups.get(pid)!))].filter((group) => group !== sid);
}

/**
 * Signals process group `pgid` as {@link signalGroup} does, and every other group of the session
 * it leads and of its descendants ({@link otherGroupsOfSession}); false when the first signal
 * reached nothing.
 */
export function signalSession(pgid: number, signal: Deno.Signal): boolean {
  const sent = signalGroup(pgid, signal);
  for (const group of otherGroupsOfSession(pgid)) signalGroupOnly(group, signal);
  return sent;
}

/**
 * Signals every process of group `pgid` but its leader (Linux /proc; elsewhere the whole group):
 * one forked after the scan is not reached.
 */
export function signalGroupButLeader(pgid: number, signal: Deno.Signal): void {
  if (!(pgid > 0)) return;
  if (Deno.build.os !== "linux") return signalGroupOnly(pgid, signal);
  for (const [pid, ids] of liveProcesses()) {
    if (pid === pgid || ids.group !== pgid) continue;
    try {
      Deno.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

/** Signals process group `pgid` and nothing else (not a process of that pid); one gone is ignored. */
export function signalGroupOnly(pgid: number, signal: Deno.Signal): void {
  if (!(pgid > 0)) return; // kill(-0) would signal the kernel's own group
  try {
    Deno.kill(-pgid, signal);
  } catch {
    // gone meanwhile
  }
}

/**
 * Ends what is left of process group `pgid` once its leader was reaped: `signal`, SIGKILL after
 * `graceMs`, and waits (`graceMs` more at most) until nothing of it lives. Once no member lives,
 * pids wrap and `pgid` may lead another group (a kernel exec's): that one is left alone (K-PTY-5).
 */
export async function endLeaderlessGroup(
  pgid: number,
  graceMs: number,
  signal: Deno.Signal,
): Promise<void> {
  if (!leaderlessGroup(pgid)) return;
  signalGroupOnly(pgid, signal);
  if (await groupDeadWithin(pgid, graceMs) || !leaderlessGroup(pgid)) return;
  signalGroupOnly(pgid, "SIGKILL");
  await groupDeadWithin(pgid, graceMs);
}
