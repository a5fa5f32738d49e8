/**
 * Test support: processes, process groups, memory and open files. Processes are read through
 * `ps` and open files through `lsof`, whose output Linux (procps, lsof) and macOS agree on; only
 * the peak RSS, CPU time and bytes read need Linux's /proc (null or Linux-only where noted).
 */

/** One process as `ps` shows it. */
interface PsRow {
  pid: number;
  ppid: number;
  pgid: number;
  /** The session id. */
  sess: number;
  /** The state letter: Z for a zombie. */
  state: string;
  /** The command line, arguments joined by spaces. */
  command: string;
}

/** Every process now. */
function processTable(): PsRow[] {
  const out = new Deno.Command("ps", {
    args: ["-A", "-ww", "-o", "pid=,ppid=,pgid=,sess=,stat=,command="],
    stderr: "null",
  }).outputSync();
  const rows: PsRow[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (m) {
      rows.push({
        pid: +m[1],
        ppid: +m[2],
        pgid: +m[3],
        sess: +m[4],
        state: m[5][0],
        command: m[6],
      });
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

/** Whether process group `pgid` has a `sleep` running: a run got past what came before its sleep. */
export function groupSleeps(pgid: number): boolean {
  return groupMembers(pgid).some((pid) => commandLine(pid)?.startsWith("sleep") === true);
}

/** Pids of live (non-zombie) processes of session `sid`, whatever their process group. */
export function sessionMembers(sid: number): number[] {
  return processTable().filter((r) => r.sess === sid && r.state !== "Z" && r.state !== "X")
    .map((r) => r.pid);
}

/**
 * Pids of processes (other than this one) whose command line contains `marker`; with `bwrap`
 * false, none that runs bwrap or execs into it ({@link runsBwrap}).
 */
export function pidsMentioning(marker: string, { bwrap = true } = {}): number[] {
  return processTable().filter((r) =>
    r.pid !== Deno.pid && r.command.includes(marker) && (bwrap || !runsBwrap(r.command))
  ).map((r) => r.pid);
}

/** The live (non-zombie) children of `pid` with their command lines (arguments joined by spaces). */
export function liveChildren(pid: number): { pid: number; command: string }[] {
  return processTable().filter((r) => r.ppid === pid && r.state !== "Z" && r.state !== "X")
    .map((r) => ({ pid: r.pid, command: r.command }));
}

/** Pids of the zombie children of `pid`: ended, not yet reaped. */
export function zombieChildren(pid: number): number[] {
  return processTable().filter((r) => r.ppid === pid && r.state === "Z").map((r) => r.pid);
}

/** Pids of live (non-zombie) children of `pid` whose command line contains `marker`. */
export function childrenMentioning(pid: number, marker: string): number[] {
  return liveChildren(pid).filter((c) => c.command.includes(marker)).map((c) => c.pid);
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
    const rows = found.map((pid) => row(pid)).map((r) =>
      r ? `${r.pid} (parent ${r.ppid}, ${r.state}): ${r.command}` : "gone"
    );
    throw new Error(`expected one kernel process on ${socket}, found ${rows.join("; ")}`);
  }
  return found[0];
}

/** One open file of a process as `lsof -F ftnT` reports it. */
interface OpenFile {
  fd: string;
  /** `unix`, `IPv4`, `REG`, `CHR` … */
  type: string;
  name: string;
  /** The socket state where lsof reports one (Linux: `LISTEN`, `CONNECTED`), else null. */
  state: string | null;
}

/** The open files of `pid`, narrowed by lsof selection `options` (e.g. `-d 0`, `-U`). */
function openFiles(pid: number, options: string[] = []): OpenFile[] {
  const out = new Deno.Command("lsof", {
    args: ["-w", "-n", "-P", "-a", "-p", String(pid), ...options, "-F", "ftnT"],
    stderr: "null",
  }).outputSync();
  const files: OpenFile[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const [field, value] = [line[0], line.slice(1)];
    if (field === "f") files.push({ fd: value, type: "", name: "", state: null });
    const file = files.at(-1);
    if (!file) continue;
    if (field === "t") file.type = value;
    if (field === "n") file.name = value;
    if (field === "T" && value.startsWith("ST=")) file.state = value.slice(3);
  }
  return files;
}

/** What file descriptor `fd` of `pid` is open on (a path such as `/dev/null`), or null. */
export function fdTarget(pid: number, fd: number): string | null {
  return openFiles(pid, ["-d", String(fd)]).find((f) => f.fd === String(fd))?.name ?? null;
}

/** How many file descriptors `pid` holds open (numbered lsof entries: not its cwd, text, maps). */
export function openFds(pid: number): number {
  return openFiles(pid).filter((f) => /^[0-9]+$/.test(f.fd)).length;
}

/** How many sockets `pid` holds, of any kind (its runtime's own included). */
export function socketCount(pid: number): number {
  return openFiles(pid).filter((f) => ["unix", "IPv4", "IPv6", "sock"].includes(f.type)).length;
}

/**
 * Client connections the kernel process `pid` holds on `socket`: its Unix sockets named by that
 * path (or a side name `socket.…` bound and renamed into place), less the listener. Linux's lsof
 * gives a listener's state; macOS's shows a connected socket's peer (`->0x…`) instead.
 */
export function kernelConnections(pid: number, socket: string): number {
  const paths = [socket, Deno.realPathSync(socket)];
  return openFiles(pid, ["-U"]).filter((f) => {
    const path = f.name.split(/ |->/)[0];
    const named = paths.some((p) => path === p || path.startsWith(`${p}.`));
    const listening = f.state === "LISTEN" || (f.state === null && !f.name.includes("->"));
    return named && !listening;
  }).length;
}

/** Memory figures of a process, in KiB. */
export interface Memory {
  /** Resident set size now (`ps` rss). */
  rss: number;
  /** Peak resident set size since the process started: Linux's VmHWM; null elsewhere. */
  hwm: number | null;
}

/** The resident set size of `pid` now and, on Linux, its peak so far, in KiB. */
export function memoryKiB(pid: number): Memory {
  const field = psField(pid, "rss");
  if (field === null) throw new Error(`no process ${pid}`);
  const rss = Number(field);
  if (Deno.build.os !== "linux") return { rss, hwm: null };
  const m = /^VmHWM:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return { rss, hwm: Number(m[1]) };
}

/**
 * The peak RSS in KiB of `pid` since `before` was taken: VmHWM when it rose meanwhile (it catches
 * a peak between samples), else the highest of the caller's samples.
 */
export function peakKiB(pid: number, before: Memory, sampled: number): number {
  const { hwm } = memoryKiB(pid);
  return hwm !== null && before.hwm !== null && hwm > before.hwm ? hwm : sampled;
}

/** Resets the peak RSS (VmHWM) of `pid`, one of this user's processes, to its RSS now (Linux ≥ 4.0). */
export function resetPeak(pid: number): void {
  Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** Resident set size of `pid` in bytes. */
export function rssBytes(pid: number): number {
  return memoryKiB(pid).rss * 1024;
}

/** The command line of `pid`, arguments joined by spaces, or null when it is gone. */
export function commandLine(pid: number): string | null {
  return row(pid)?.command ?? null;
}

/**
 * The environment `pid` started with, as `NAME=VALUE` words (a value holding spaces splits), by
 * `ps`: procps prints it after the command with `e`, macOS with `-E`.
 */
export function startEnvironment(pid: number): string[] {
  const command = commandLine(pid);
  const out = new Deno.Command("ps", {
    args: [Deno.build.os === "darwin" ? "-E" : "e", "-ww", "-o", "command=", "-p", String(pid)],
    stderr: "null",
  }).outputSync();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (command === null || !text.startsWith(command)) {
    throw new Error(`no environment for process ${pid}`);
  }
  return text.slice(command.length).trim().split(" ");
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

/** The fields of /proc/PID/stat after the command name, from the state on (Linux only). */
function statFields(pid: number): string[] {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU time (user + system) `pid` has used so far, in ms (clock ticks of 10 ms; Linux only). */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time the main thread of `pid` has run so far, in ms at nanosecond resolution (its
 * /proc/PID/task/PID/schedstat; Linux only): the thread that loads and runs a Deno program's
 * modules, apart from V8's and Deno's helper threads.
 */
export function mainThreadCpuMs(pid: number): number {
  return Number(Deno.readTextFileSync(`/proc/${pid}/task/${pid}/schedstat`).split(" ")[0]) / 1e6;
}

/**
 * CPU time (user + system) of the children `pid` has waited for so far, theirs and their own
 * waited-for descendants', in ms (clock ticks of 10 ms; Linux only).
 */
export function reapedChildrenCpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** Page faults (minor + major) `pid` has taken so far (Linux only). */
export function pageFaults(pid: number): number {
  const fields = statFields(pid);
  return Number(fields[7]) + Number(fields[9]);
}

/** Page faults of the children `pid` has waited for so far, and their waited-for descendants'. */
export function reapedChildrenPageFaults(pid: number): number {
  const fields = statFields(pid);
  return Number(fields[8]) + Number(fields[10]);
}

/**
 * Bytes process `pid` (this one by default) has read through read(2) and friends so far (`rchar`
 * of /proc/PID/io), or null off Linux: macOS keeps no such counter that a test can read without FFI.
 */
export function bytesRead(pid: number | "self" = "self"): number | null {
  if (Deno.build.os !== "linux") return null;
  return Number(/rchar: (\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/io`))![1]);
}

/** poll(2) and ppoll(2) system call numbers by architecture (Deno.build.arch). */
const POLL_SYSCALLS: Record<string, number[]> = { x86_64: [7, 271], aarch64: [73] };

/**
 * How many threads of `pid` are blocked in poll(2) or ppoll(2) now, by the first field of each
 * thread's /proc/<pid>/task/<tid>/syscall (Linux on x86_64 or aarch64; null elsewhere).
 */
export function threadsInPoll(pid: number): number | null {
  const numbers = POLL_SYSCALLS[Deno.build.arch];
  if (Deno.build.os !== "linux" || numbers === undefined) return null;
  let count = 0;
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      const first = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/syscall`).split(" ")[0];
      if (numbers.includes(Number(first))) count++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return count;
}

/** `argv` spawned with exactly `env`, stdin and stdout piped and stderr as `stderr` says. */
export function spawnPiped(
  [command, ...args]: string[],
  env: Record<string, string>,
  stderr: "piped" | "null",
): Deno.ChildProcess {
  return new Deno.Command(command, {
    args,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr,
  }).spawn();
}

/**
 * Whether a command line is bwrap's: the host's, by its path, or the copy a kernel that owns
 * bwrap runs from a memfd of its own (`own_bwrap.ts`), by that memfd's path under /proc.
 */
export function isBwrapCommand(command: string): boolean {
  return /^(\S*\/bwrap|\/proc\/\d+\/fd\/\d+)( |$)/.test(command);
}

/**
 * Whether a command line is bwrap's ({@link isBwrapCommand}) or that of a wrapper about to exec
 * it, which names it as a word: `setsid` before a resident's bwrap, the `sh` launcher of a PTY's.
 */
export function runsBwrap(command: string): boolean {
  return /(^| )(\S*\/bwrap|\/proc\/\d+\/fd\/\d+)( |$)/.test(command);
}
