/** Linux signal names by number, as `Deno.CommandStatus.signal` gives them. */
// deno-fmt-ignore
const SIGNALS = [
  "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL",
  "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD",
  "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ",
  "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
] as const;

/**
 * A raw waitpid(2) status (Linux) as Deno reports a child's end: a killed child's code is
 * 128 + signal.
 */
export function commandStatus(wait: number): Deno.CommandStatus {
  const signal = wait & 0x7f;
  if (signal === 0) {
    const code = (wait >> 8) & 0xff;
    return { success: code === 0, code, signal: null };
  }
  return { success: false, code: 128 + signal, signal: SIGNALS[signal - 1] ?? null };
}
