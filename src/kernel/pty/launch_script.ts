/** The `/bin/sh` launchers a PTY's program starts through (K-PTY-1). */

/**
 * The launcher, run by `/bin/sh` in a new session (Deno's `detached` makes the child a session
 * leader): opening the slave without O_NOCTTY makes it the session's controlling terminal, then the
 * program replaces the shell. `$0` is the slave path, `$1` is non-empty when the given environment
 * has `PWD` (`sh` exports one of its own otherwise), the rest is the command line. Nothing passes
 * through the environment, so the program gets exactly the environment it was given (K-PTY-1).
 * Only POSIX `sh` is needed: no util-linux `setsid`, no other interpreter, on Linux and macOS alike.
 */
export const LAUNCH_SCRIPT = '[ -n "$1" ] || unset PWD; shift; exec "$@" <>"$0" >&0 2>&0';
/**
 * The launcher of a sandboxed program: bwrap, on the host, shares the terminal's foreground process
 * group with the program, so the SIGINT and SIGQUIT of a Ctrl-C or Ctrl-\ would end bwrap and with
 * it the whole sandbox (a python3 REPL died where the human's raised KeyboardInterrupt, P-SBX-4),
 * and so would the SIGHUP of `close` and the SIGTERM of a kernel shutdown, at once: the program's
 * own handler had no time to run (K-PTY-5, G-SOCK-8). bwrap ignores them; the start gate's waiter
 * gives the program their defaults back.
 */
export const SANDBOX_LAUNCH_SCRIPT = `trap '' INT QUIT HUP TERM; ${LAUNCH_SCRIPT}`;
