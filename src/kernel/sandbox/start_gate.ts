/**
 * A gate that holds a sandboxed program before it starts until the kernel has checked that the
 * sandbox's protections are in place (P-SBX-6), as a resident's are before a run enters it: for a
 * sandbox whose command is the program itself (a PTY's), with no pipe to the kernel of its own.
 * Behind it a waiter runs the program and reports how it ended, which bwrap cannot tell.
 */
import { madeIn } from "../net/made_in.ts";
import { type Fifo, makeFifo, openFifo } from "../bash/fifo.ts";
import { closeFd, openReadNonBlocking, readFd } from "../bash/fd_calls.ts";
import { commandStatus } from "../bash/wait_status.ts";
import { PERL } from "../net/inside.ts";
import { SCRATCH_MOUNT } from "./command.ts";
import { lines } from "./launcher.ts";
import { checkProtection, sandboxInit } from "./protected_mounts.ts";
import type { Protection } from "./protected_paths.ts";

/**
 * The gate, run by `/bin/sh` as the sandbox's command: it opens `go` (the kernel holds a writer)
 * and `exit` (the kernel holds a reader), says `ready` (the sandbox's mounts are complete once it
 * runs), waits for `go`, then {@link WAITER_SCRIPT} replaces it; anything else (the kernel closed
 * `go`) ends it before the program starts. `$1` is non-empty when the program's environment has
 * `PWD` (sh would export one of its own otherwise).
 */
const GATE_SCRIPT = `exec 3<${SCRATCH_MOUNT}/go 4>${SCRATCH_MOUNT}/exit || exit 126
echo ready >${SCRATCH_MOUNT}/ready || exit 126
read -r go <&3 && [ "$go" = go ] || exit 126
[ -n "$1" ] || unset PWD
shift
exec 3<&- "$@"`;

/**
 * The waiter, perl run by the gate: runs the program (argv after `--`) as its child, in its
 * process group, writes the child's raw wait status as a decimal line to fd 4 (`exit`), and exits
 * as bwrap would have. bwrap exits with 128 + the number of a signal that killed its command, so
 * by its status alone a program killed by SIGTERM and one that exited 143 look alike (P-SBX-4).
 * The terminal's SIGINT and SIGQUIT, the SIGHUP of a PTY's close and the SIGTERM of a kernel
 * shutdown (G-SOCK-8) reach the whole group: the waiter ignores them, the program gets their
 * defaults back. A program that left the group (a shell with job control, `bash -i`, makes its
 * own) is not reached by the close's SIGHUP or the shutdown's SIGTERM, which the human's program,
 * the terminal's session leader, always gets: the waiter passes them on then.
 * perl runs a handler between ops, so a SIGHUP that came after its last check and before
 * waitpid(2) began was never passed on (the program waited, and was killed after the grace):
 * SIGHUP, SIGTERM and SIGCHLD stay blocked except in rt_sigsuspend(2), and SIGCHLD's empty handler wakes
 * the waiter to look for the program's end. Its first two arguments are the syscall numbers of
 * rt_sigprocmask(2) and rt_sigsuspend(2).
 */
const WAITER_SCRIPT = String.raw`
my ($sigmask, $sigsuspend) = splice @ARGV, 0, 2;
$SIG{INT} = $SIG{QUIT} = 'IGNORE';
my $pid;
$SIG{HUP} = $SIG{TERM} = sub { my $g = $pid ? getpgrp($pid) : -1; kill($_[0], $pid) if $g > 0 && $g != getpgrp(0) };
$SIG{CHLD} = sub {};
my $held = pack('Q', 1 | 1 << 14 | 1 << 16);
syscall($sigmask + 0, 0, $held, 0, 8);
$pid = fork;
unless (defined $pid) { print STDERR "shoal: cannot start $ARGV[0]: $!\n"; exit 126; }
if ($pid == 0) {
  if (open(my $report, '>&=', 4)) { close($report); }
  $SIG{INT} = $SIG{QUIT} = $SIG{HUP} = $SIG{TERM} = $SIG{CHLD} = 'DEFAULT';
  syscall($sigmask + 0, 1, $held, 0, 8);
  exec { $ARGV[0] } @ARGV;
  print STDERR "shoal: cannot run $ARGV[0]: $!\n";
  exit 127;
}
my $none = pack('Q', 0);
syscall($sigsuspend + 0, $none, 8) until waitpid($pid, 1);
my $status = $?;
if (open(my $report, '>&=', 4)) { syswrite($report, "$status\n"); }
exit($status & 127 ? 128 + ($status & 127) : $status >> 8);
`;

/** rt_sigprocmask(2)'s and rt_sigsuspend(2)'s numbers on the architectures Deno runs on (Linux). */
const SIGNAL_SYSCALLS: Partial<Record<typeof Deno.build.arch, [number, number]>> = {
  x86_64: [14, 130],
  aarch64: [135, 133],
};

/** The most bytes a report of the waiter takes: a decimal wait status and a newline. */
const REPORT_BYTES = 16;

/** A start gate: its directory, to be bound at {@link SCRATCH_MOUNT}, and the kernel's ends. */
export class StartGate {
  #closed = false;
  /** The kernel's read end of `exit` (non-blocking), kept past close once the program started. */
  #exit: number | null;
  #started = false;

  private constructor(
    /** The host directory holding the gate's FIFOs. */
    readonly dir: string,
    /** The kernel's end of `go`, open read-write so the gate's open never waits. */
    private readonly go: Deno.FsFile,
    /** The FIFO the gate says `ready` on. */
    private readonly ready: Fifo,
    exit: number,
  ) {
    this.#exit = exit;
  }

  /** Makes a gate in a fresh directory below `parent` (the kernel's private scratch space). */
  static open(parent: string): StartGate {
    const dir = madeIn(parent, `gate-${Deno.pid}-`, "the sandbox's start gate");
    try {
      makeFifo(`${dir}/go`);
      makeFifo(`${dir}/ready`);
      makeFifo(`${dir}/exit`);
      const exit = openReadNonBlocking(`${dir}/exit`);
      if (exit < 0) throw new Error(`open ${dir}/exit failed (errno ${-exit})`);
      const go = Deno.openSync(`${dir}/go`, { read: true, write: true });
      try {
        return new StartGate(dir, go, openFifo(`${dir}/ready`), exit);
      } catch (e) {
        go.close();
        closeFd(exit);
        throw e;
      }
    } catch (e) {
      Deno.removeSync(dir, { recursive: true });
      throw e;
    }
  }

  /** The argv that runs `argv` behind the gate; `keepPwd`: its environment has `PWD`. */
  wrap(argv: readonly string[], keepPwd: boolean): string[] {
    const numbers = SIGNAL_SYSCALLS[Deno.build.arch];
    if (numbers === undefined) throw new Error(`no start gate for ${Deno.build.arch}`);
    const waiter = [PERL, "-e", WAITER_SCRIPT, "--", ...numbers.map(String), ...argv];
    return ["/bin/sh", "-c", GATE_SCRIPT, "shoal-gate", keepPwd ? "keep" : "", ...waiter];
  }

  /**
   * How the program behind the gate ended, as its waiter reported it, or null when it did not (it
   * never started, or its waiter was killed with it); to be asked once the sandbox has ended.
   * Releases the report's FIFO: later calls give null.
   */
  reportedExit(): Deno.CommandStatus | null {
    if (this.#exit === null) return null;
    const buf = new Uint8Array(REPORT_BYTES);
    const n = readFd(this.#exit, buf);
    closeFd(this.#exit);
    this.#exit = null;
    const line = /^([0-9]{1,5})\n/.exec(new TextDecoder().decode(buf.subarray(0, Math.max(0, n))));
    return line === null ? null : commandStatus(Number(line[1]));
  }

  /**
   * Waits until the gate runs in the sandbox of `bwrap` (a child running it behind this gate),
   * checks that every path of `protection` is a mount point there and lets the program start.
   * Resolves to the sandbox's init ({@link sandboxInit}); throws, the program never started, when
   * bwrap ended first or a protection is not in place. The gate is closed either way.
   */
  async pass(bwrap: Deno.ChildProcess, protection: Protection): Promise<number> {
    const said = lines(this.ready.reader);
    try {
      const first = await Promise.race([said.next(), bwrap.status.then(() => null)]);
      if (first === null || first.done || first.value !== "ready") {
        throw new Error("the sandbox ended before its program started");
      }
      const init = sandboxInit(bwrap.pid);
      checkProtection(init, protection);
      this.go.writeSync(new TextEncoder().encode("go\n"));
      this.#started = true;
      return init;
    } finally {
      this.close();
      // the reader lets go of the stream, which keeps its FIFO open until cancelled
      said.return(undefined).then(() => this.ready.reader.cancel()).catch(() => {});
    }
  }

  /**
   * Closes the kernel's ends (a gate still waiting ends without its program) and the directory;
   * the end of `exit` stays open once the program started, until {@link reportedExit}.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#started) this.reportedExit();
    this.go.close();
    this.ready.keeper.close(); // a read still waiting ends at EOF: no writer is left
    // never read (the sandbox did not start): nothing else closes its read end
    if (!this.ready.reader.locked) this.ready.reader.cancel().catch(() => {});
    Deno.removeSync(this.dir, { recursive: true });
  }
}
