/**
 * Test support: processes, process groups, memory and kernel connections. Processes are read
 * through `ps`, whose columns Linux (procps) and macOS agree on; only socket connections and the
 * peak RSS need Linux's /proc (tests using them are Linux-only).
 */

/** One process as `ps` shows it. */
interface PsRow {
  pid: number;
  ppid: number;
  pgid: number;
  /** The state letter: Z for a zombie. */
  state: string;
  /** The command line, arguments joined by spaces. */
  command: string;
}

/** Every process now. */
function processTable(): PsRow[] {
  const out = new Deno.Command("ps", {
    args: ["-A", "-ww", "-o", "pid=,ppid=,pgid=,stat=,command="],
    stderr: "null",
  }).outputSync();
  const rows: PsRow[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s?(.*)$/.exec(line);
    if (m) {
      rows.push({ pid: +m[1], ppid: +m[2], pgid: +m[3], state: m[4][0], command: m[5] });
    }
  }
  return rows;
}

function row(pid: number): PsRow | undefined {
  return processTable().find((r) => r.pid === pid);
}

/** Pids of every process now. */
export function allPids(): number[] {
  return processTable().map((r) => r.pid);
}

/** Whether `pid` exists and is not a zombie. */
export function processLive(pid: number): boolean {
  const state = psField(pid, "stat");
  return state !== null && state[0] !== "Z" && state[0] !== "X";
}

/** The parent pid of `pid` (throws once it is gone). */
export function parentPid(pid: number): number {
  const r = row(pid);
  if (!r) throw new Error(`no process ${pid}`);
  return r.ppid;
}

/** The process group of `pid` (throws once it is gone). */
export function processGroup(pid: number): number {
  const r = row(pid);
  if (!r) throw new Error(`no process ${pid}`);
  return r.pgid;
}

/** Pids of live (non-zombie) processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  return processTable().filter((r) => r.pgid === pgid && r.state !== "Z" && r.state !== "X")
    .map((r) => r.pid);
}

/** Pids of processes (other than this one) whose command line contains `marker`. */
export function pidsMentioning(marker: string): number[] {
  return processTable().filter((r) => r.pid !== Deno.pid && r.command.includes(marker))
    .map((r) => r.pid);
}

/**
 * The pids in `pids` whose parent is not also in `pids`. A child that a process is forking
 * shares its exe and command line until it execs, so it would otherwise count twice.
 */
export function outermost(pids: number[]): number[] {
  const parents = new Map<number, number>();
  const table = new Map(processTable().map((r) => [r.pid, r.ppid]));
  for (const pid of pids) {
    const ppid = table.get(pid);
    if (ppid !== undefined) parents.set(pid, ppid);
  }
  return [...parents].filter(([, ppid]) => !parents.has(ppid)).map(([pid]) => pid);
}

/**
 * The deno processes serving (or starting to serve) `socket`: their argv names the socket as a
 * word of its own (the sh wrapper is not deno; a facade names it only inside a permission flag).
 */
export function kernelPids(socket: string): number[] {
  return outermost(
    processTable().filter((r) =>
      ` ${r.command} `.includes(` ${socket} `) &&
      /(^|\/)deno$/.test(psField(r.pid, "comm") ?? "")
    ).map((r) => r.pid),
  );
}

/** The deno process serving `socket`; throws unless there is exactly one. */
export function kernelPid(socket: string): number {
  const found = kernelPids(socket);
  if (found.length !== 1) {
    throw new Error(`expected one kernel process on ${socket}, found ${found}`);
  }
  return found[0];
}

/** Inodes of the socket fds `pid` holds. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** The __SO_ACCEPTCON flag of a listening socket in /proc/net/unix. */
const LISTENING = "00010000";

/**
 * Client connections the kernel process `pid` holds on `socket`: its socket fds that
 * /proc/net/unix lists under the name its listener was bound to, minus the listener. That name
 * is `socket` itself or a side name starting with `socket.` that the kernel bound and then
 * renamed into place (/proc keeps the bound name). Other sockets the runtime may hold do not
 * count.
 */
export function kernelConnections(pid: number, socket: string): number {
  const held = socketInodes(pid);
  const entries = Deno.readTextFileSync("/proc/net/unix").split("\n").slice(1).map((line) => {
    const [, , , flags, , , inode, path] = line.trim().split(/\s+/);
    return { flags, inode, path };
  }).filter((e) => e.path !== undefined && held.has(e.inode));
  const bound = new Set(
    entries.filter((e) =>
      e.flags === LISTENING && (e.path === socket || e.path.startsWith(`${socket}.`))
    ).map((e) => e.path),
  );
  return entries.filter((e) => e.flags !== LISTENING && bound.has(e.path)).length;
}

/** Memory figures of a process from /proc/<pid>/status, in KiB. */
export interface Memory {
  /** Resident set size now (VmRSS). */
  rss: number;
  /** Peak resident set size since the process started (VmHWM). */
  hwm: number;
}

/** VmRSS and VmHWM of `pid` in KiB. */
export function memoryKiB(pid: number): Memory {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
    if (!m) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(m[1]);
  };
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** Resident set size of `pid` in bytes (/proc on Linux, `ps` elsewhere). */
export function rssBytes(pid: number): number {
  if (Deno.build.os === "linux") return memoryKiB(pid).rss * 1024;
  return Number(psField(pid, "rss")) * 1024;
}

/**
 * One `ps -o FIELD` column of `pid` (Linux and macOS `ps` agree on pid, ppid, pgid, sess, tpgid,
 * stat, comm, rss), trimmed; null when no such process exists (a zombie still exists).
 */
export function psField(pid: number, field: string): string | null {
  const out = new Deno.Command("ps", { args: ["-o", `${field}=`, "-p", String(pid)] }).outputSync();
  const text = new TextDecoder().decode(out.stdout).trim();
  return out.success && text !== "" ? text : null;
}

/** The command name of the foreground process group of `pid`'s controlling terminal, or null. */
export function foregroundCommand(pid: number): string | null {
  const tpgid = Number(psField(pid, "tpgid"));
  if (!(tpgid > 0)) return null;
  const comm = psField(tpgid, "comm");
  return comm === null ? null : comm.slice(comm.lastIndexOf("/") + 1);
}

/** CPU time (user + system) `pid` has used so far, in ms (clock ticks of 10 ms; Linux only). */
export function cpuMs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** How many file descriptors `pid` holds open (Linux /proc). */
export function openFds(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}
