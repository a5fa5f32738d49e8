import assert from "node:assert/strict";
import { bashCandidates, resolveBash } from "../../../src/kernel/bash/discover.ts";
import { type ByteSink, runBash } from "../../../src/kernel/shells/run.ts";
import { ScratchPool } from "../../../src/kernel/bash/scratch_pool.ts";
import { bashOwnVariables } from "../../../src/kernel/bash/shell_state.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { delay } from "../../_support/wait.ts";
import { pidsMentioning } from "../../_support/proc.ts";
import { within } from "../../../src/protocol/within.ts";

/** A sink that takes `ms` to store each chunk, as a kernel under heavy load does. */
class SlowSink implements ByteSink {
  text = "";
  constructor(readonly ms: number) {}
  async write(chunk: Uint8Array): Promise<void> {
    this.text += new TextDecoder().decode(chunk);
    await delay(this.ms);
  }
}

/** Runs `src` in a fresh bash with a sink that stores each chunk in `ms`; its stdout text. */
async function slowRun(src: string, ms: number): Promise<string> {
  let text = "";
  await withTempDir(async (dir) => {
    const bash = await resolveBash(undefined, bashCandidates(Deno.build.os, Deno.env.get("PATH")));
    const scratch = new ScratchPool(dir);
    const stdout = new SlowSink(ms);
    const exit = await runBash({
      bash,
      bashVariables: await bashOwnVariables(bash),
      src,
      state: { cwd: dir, env: new Map(), vars: new Map(), funcs: new Map(), aliases: new Map() },
      scratch,
      warm: null,
      stdout,
      stderr: new SlowSink(0),
      sandbox: null,
    });
    scratch.clear();
    text = stdout.text;
    try {
      Deno.kill(-exit.pid, "SIGKILL"); // a background descendant left behind
    } catch {
      // none left
    }
  });
  return text;
}

Deno.test("K-BASH-3 output bash wrote before it exited is read to the end however slowly it is stored: the linger only stops a pipe a live descendant holds", async () => {
  assert.equal(await slowRun("echo first; sleep 0.1; echo second", 1500), "first\nsecond\n");
});

Deno.test("K-BASH-3 a background descendant holding the pipe still ends the read after the linger, not when the descendant ends", async () => {
  assert.equal(await slowRun("echo first; (sleep 5; echo late) &", 0), "first\n");
});

Deno.test("K-BASH-3 a descendant that left bash's process group (setsid) and holds the pipe still ends the read after the linger", async () => {
  const text = await slowRun("echo first; setsid sh -c 'sleep 5; echo late' & echo $!", 0);
  const [first, pid, ...rest] = text.split("\n");
  try {
    assert.deepEqual([first, rest], ["first", [""]]);
  } finally {
    Deno.kill(Number(pid), "SIGKILL");
  }
});

Deno.test("K-BASH-3 a descendant that left bash's process group and writes without pause still ends the read after the linger", async () => {
  const marker = `linger-writer-${crypto.randomUUID()}`;
  // it writes every 10 ms for good: output keeps arriving long after bash has exited
  const src = `setsid sh -c 'while :; do echo more; sleep 0.01; done # ${marker}' &`;
  try {
    const text = await within(slowRun(src, 0), 15000);
    assert.notEqual(text, null, "the read did not end while the descendant kept writing");
  } finally {
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
  }
});
