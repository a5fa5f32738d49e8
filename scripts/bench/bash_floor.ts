/**
 * The least an exec can cost under K-BASH-1/3 (a fresh bash per exec, done once it has exited),
 * for `exec_latency.ts` to time beside shoal's rows: a plain bash spawned ahead of its call and
 * blocked reading a FIFO, which the call hands `echo hi`; the call ends when its output is read to
 * EOF and its exit seen, and the next bash is spawned while it runs, as the kernel's warm shells
 * are. No restore, no state dump, no capture: only what the contract itself needs.
 */
import { makeFifo } from "../../src/kernel/bash/fifo.ts";

const encoder = new TextEncoder();
const DRIVER = 'read -r src <"$1"; eval "$src"';

/** A bash blocked on its FIFO, and the FIFO's kept-open write end. */
interface Waiting {
  child: Deno.ChildProcess;
  go: Deno.FsFile;
}

/**
 * A call that runs `echo hi` on a pre-spawned bash as above and checks its output; `close` ends
 * the bash still waiting and removes the FIFOs.
 */
export async function bashFloor(): Promise<
  { call: () => Promise<void>; close: () => Promise<void> }
> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-floor-" });
  // Two FIFOs in turns: the next bash opens one while the running one may still hold the other.
  const fifos = [0, 1].map((i) => {
    const path = `${dir}/go${i}`;
    makeFifo(path);
    // held read-write, so bash's open never waits and a line written before it reads stays
    return { path, go: Deno.openSync(path, { read: true, write: true }) };
  });
  let turn = 0;
  const spawn = (): Waiting => {
    const { path, go } = fifos[turn++ % 2];
    const child = new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-c", DRIVER, "floor", path],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    return { child, go };
  };
  let next = spawn();
  return {
    async call() {
      const { child, go } = next;
      go.writeSync(encoder.encode("echo hi\n"));
      next = spawn();
      const out = await child.output();
      const text = new TextDecoder().decode(out.stdout);
      if (!out.success || text !== "hi\n") throw new Error(`bash floor printed ${text}`);
    },
    async close() {
      next.child.kill("SIGKILL");
      await next.child.output();
      for (const { go } of fifos) go.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
