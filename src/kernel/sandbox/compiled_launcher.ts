/** The C launcher (`launcher_c.ts`), compiled once per source with the host's C compiler. */
import { LAUNCHER_C } from "./launcher_c.ts";

/** Longest wait for the compiler: past it the compile is abandoned and perl's launcher serves. */
const COMPILE_TIMEOUT_MS = 60_000;

/**
 * The first 16 hex digits of the SHA-256 of {@link LAUNCHER_C}, written out: hashed at start, it
 * took ~8 ms of a starting kernel's main thread before its sandbox probe, which looks for the kept
 * launcher, could start (issue 33). `compiled_launcher_test.ts` checks it is the source's: change
 * it with the source, or a kernel would take a launcher compiled from the source before.
 */
export const LAUNCHER_HASH = "c0aa3e719fa12b76";

/** The file name of the launcher compiled from the current source. */
const NAME = `launcher-${LAUNCHER_HASH}`;

/**
 * The launcher compiled from {@link LAUNCHER_C} that an earlier kernel kept in `dir`, or null when
 * there is none yet: nothing is compiled.
 */
export function keptLauncher(dir: string): string | null {
  const target = `${dir}/${NAME}`;
  try {
    if (!Deno.statSync(target).isFile) return null;
    Deno.chmodSync(target, 0o700); // one an earlier kernel left as its umask had it
    return target;
  } catch {
    return null; // not compiled yet
  }
}

/**
 * The path of the launcher compiled from {@link LAUNCHER_C} in `dir` (the kernel's own): compiled
 * by `cc` when it is not there yet, and kept for later kernels. Null when the compiler fails, or
 * is stopped by `stop` (the kernel's shutdown): runs are then started by perl's launcher. The
 * compiler runs in a process group of its own, killed whole when stopped or past
 * {@link COMPILE_TIMEOUT_MS}: its passes (cc1, as, ld) would otherwise write into `dir` after
 * the kernel that asked had exited. Its temporary files go to a directory of its own in `dir`,
 * removed after it: a compiler killed keeps none of them (gcc's `/tmp/cc*` files stayed).
 */
export async function compiledLauncher(
  dir: string,
  cc: string,
  stop: AbortSignal,
): Promise<string | null> {
  const kept = keptLauncher(dir);
  if (kept !== null) return kept;
  const target = `${dir}/${NAME}`;
  if (stop.aborted) return null;
  const partial = `${target}.${Deno.pid}`;
  const scratch = `${partial}.tmp`;
  let child: Deno.ChildProcess;
  try {
    Deno.mkdirSync(scratch, { recursive: true, mode: 0o700 }); // or a killed kernel's, of its pid
    child = new Deno.Command(cc, {
      args: ["-O2", "-x", "c", "-o", partial, "-"],
      env: { TMPDIR: scratch },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
  } catch {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
    return null;
  }
  const kill = () => {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // its group has ended
    }
  };
  const timer = setTimeout(kill, COMPILE_TIMEOUT_MS);
  stop.addEventListener("abort", kill);
  try {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(LAUNCHER_C)).catch(() => {});
    await writer.close().catch(() => {});
    // the driver waits for its passes: when it has ended, so has its group (not killed then: a
    // group gone may name another by now)
    const status = await child.status;
    if (!status.success || stop.aborted) return null;
    // the compiler makes it as the kernel's umask has it: its owner's alone (G-STATE-4)
    Deno.chmodSync(partial, 0o700);
    Deno.renameSync(partial, target);
    return target;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", kill);
    await Deno.remove(partial).catch(() => {}); // gone when renamed
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}
