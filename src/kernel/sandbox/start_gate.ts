/**
 * A gate that holds a sandboxed program before it starts until the kernel has checked that the
 * sandbox's protections are in place (P-SBX-6), as a resident's are before a run enters it: for a
 * sandbox whose command is the program itself (a PTY's), with no pipe to the kernel of its own.
 */
import { type Fifo, makeFifo, openFifo } from "../bash/fifo.ts";
import { SCRATCH_MOUNT } from "./command.ts";
import { lines } from "./launcher.ts";
import { checkProtection, sandboxInit } from "./protected_mounts.ts";
import type { Protection } from "./protected_paths.ts";

/**
 * The gate, run by `/bin/sh` as the sandbox's command: it opens `go` (the kernel holds a writer),
 * says `ready` (the sandbox's mounts are complete once it runs), waits for `go`, then the program
 * replaces it; anything else (the kernel closed `go`) ends it before the program starts. `$1` is
 * non-empty when the program's environment has `PWD` (sh would export one of its own otherwise).
 */
const GATE_SCRIPT = `exec 3<${SCRATCH_MOUNT}/go || exit 126
echo ready >${SCRATCH_MOUNT}/ready || exit 126
read -r go <&3 && [ "$go" = go ] || exit 126
[ -n "$1" ] || unset PWD
shift
exec 3<&- "$@"`;

/** A start gate: its directory, to be bound at {@link SCRATCH_MOUNT}, and the kernel's ends. */
export class StartGate {
  #closed = false;

  private constructor(
    /** The host directory holding the gate's FIFOs. */
    readonly dir: string,
    /** The kernel's end of `go`, open read-write so the gate's open never waits. */
    private readonly go: Deno.FsFile,
    /** The FIFO the gate says `ready` on. */
    private readonly ready: Fifo,
  ) {}

  /** Makes a gate in a fresh directory below `parent` (the kernel's private scratch space). */
  static open(parent: string): StartGate {
    const dir = Deno.makeTempDirSync({ dir: parent, prefix: "gate-" });
    try {
      makeFifo(`${dir}/go`);
      makeFifo(`${dir}/ready`);
      const go = Deno.openSync(`${dir}/go`, { read: true, write: true });
      try {
        return new StartGate(dir, go, openFifo(`${dir}/ready`));
      } catch (e) {
        go.close();
        throw e;
      }
    } catch (e) {
      Deno.removeSync(dir, { recursive: true });
      throw e;
    }
  }

  /** The argv that runs `argv` behind the gate; `keepPwd`: its environment has `PWD`. */
  wrap(argv: readonly string[], keepPwd: boolean): string[] {
    return ["/bin/sh", "-c", GATE_SCRIPT, "shoal-gate", keepPwd ? "keep" : "", ...argv];
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
      return init;
    } finally {
      this.close();
      said.return(undefined).catch(() => {});
    }
  }

  /** Closes the kernel's ends (a gate still waiting ends without its program) and the directory. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.go.close();
    this.ready.keeper.close(); // a read still waiting ends at EOF: no writer is left
    Deno.removeSync(this.dir, { recursive: true });
  }
}
