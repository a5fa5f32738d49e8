/**
 * G-STATE-3, M-ONB-1: a policy file that is not a regular file (a FIFO, a device) neither hangs
 * nor feeds the kernel: it is refused like a malformed one, at start (exit 1) and on a re-read
 * (the last good policy stays).
 */
import assert from "node:assert/strict";
import { kernelUntilExit, startKernelWithPolicy, type TestKernel } from "../../_support/kernel.ts";
import { createToken, RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** Opens `fifo` for writing and closes it at once (EOF to a reader), unless no reader comes in 2 s. */
async function releaseFifo(fifo: string): Promise<void> {
  await new Deno.Command("timeout", { args: ["2", "sh", "-c", `: > '${fifo}'`] }).output();
}

/** `p`, or "no answer" once `ms` pass: a bound on a hang, not a timing. */
function answerWithin<T>(p: Promise<T>, ms: number): Promise<T | "no answer"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"no answer">((r) => timer = setTimeout(() => r("no answer"), ms));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

Deno.test("G-STATE-3: a --policy naming a FIFO stops the kernel with exit 1 naming the file, instead of blocking its start on the read", async () => {
  const box = await sandbox();
  const fifo = `${box.dir}/leash.jsonc`;
  try {
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    const exited = kernelUntilExit(box, ["--socket", box.socket(), "--policy", fifo]);
    const r = await answerWithin(exited, 15000);
    if (r === "no answer") {
      await releaseFifo(fifo);
      assert.fail("the kernel blocked reading its policy FIFO");
    }
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(fifo), r.stderr);
    assert.match(r.stderr, /not a regular file/);
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-ONB-1: a policy file replaced by a FIFO keeps the last good policy and the kernel answering everyone (it blocked on the read for good)", async () => {
  const k: TestKernel = await startKernelWithPolicy({ "agent:a": RUNNER });
  const file = `${k.box.dir}/leash.jsonc`;
  try {
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    const human = await k.attach();
    assert.equal((await agent.request("exec", { src: "echo before" }) as Rec).render, "before");
    await Deno.remove(file);
    await new Deno.Command("mkfifo", { args: [file] }).output();
    const answer = await answerWithin(human.request("exec", { src: "echo human" }), 15000);
    if (answer === "no answer") {
      await releaseFifo(file);
      assert.fail("the kernel blocked reading its policy FIFO");
    }
    assert.equal((answer as Rec).render, "human");
    const own = await agent.request("exec", { src: "echo agent" }) as Rec;
    assert.equal(own.render, "agent", "the last good policy stays");
    assert.ok(
      k.stderr.some((l) => l.includes(file) && /not a regular file/.test(l)),
      k.stderr.join("\n"),
    );
  } finally {
    await k.cleanup();
  }
});
