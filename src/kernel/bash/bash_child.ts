/**
 * A running bash as the run and warm-shell code sees it, however it was started (a Deno spawn, or
 * a launcher that reports the exit): the pid that leads its process group, its output pipes and
 * how it ended. `Deno.ChildProcess` is one.
 */
export interface BashChild {
  readonly pid: number;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly status: Promise<Deno.CommandStatus>;
  /**
   * Its output pipes' identities as `/proc/PID/fd` links show them in the processes that hold
   * them, when its starter knows them (FIFOs a launcher opened, pipes whose read ends the kernel
   * made); else they are read from its own descriptors (`outputPipes` of pipe_holders.ts).
   */
  readonly pipes?: ReadonlySet<string> | null;
  /**
   * Whether its pid is the nsenter it entered its sandbox through, which forks the run and
   * passes on how it ended: a cancel's SIGTERM spares it (K-BASH-13), since it would die of it
   * at once and report that signal as the run's end.
   */
  readonly entered?: boolean;
}
