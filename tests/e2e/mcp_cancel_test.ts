// M-PROG-3 at the edges of a request's life: a cancellation that arrives before the facade has
// sent anything to the kernel, and one for an id the client used twice.
import assert from "node:assert/strict";
import { RawFacade, withRawFacade } from "../_support/facade.ts";
import type { Rec } from "../_support/rec.ts";
import { KERNEL_BIN, sandbox } from "../_support/sandbox.ts";
import { delay } from "../_support/wait.ts";

/** Reads `shoal://jobs` until the job whose cmd is `cmd` is in `state`; the job, or null after 10 s. */
async function jobInState(facade: RawFacade, cmd: string, state: string): Promise<Rec | null> {
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    const read = await facade.request(`jobs-${crypto.randomUUID()}`, "resources/read", {
      uri: "shoal://jobs",
    });
    const jobs = (read.result as Rec).structuredContent as Rec[];
    const job = jobs.find((j) => j.cmd === cmd);
    if (job?.state === state) return job;
    await delay(100);
  }
  return null;
}

/** `tools/call` of `name` with `args` under `id`, as one frame. */
function callFrame(id: unknown, name: string, args: Rec, extra: Rec = {}): string {
  const params = { name, arguments: args, ...extra };
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }) + "\n";
}

function cancelFrame(requestId: unknown): string {
  const params = { requestId, reason: "the user pressed Esc" };
  return JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params }) + "\n";
}

for (
  const [what, extra] of [
    ["shoal_exec", {}],
    ["a task-augmented shoal_exec", { task: {} }],
  ] as const
) {
  Deno.test(`M-PROG-3: ${what} cancelled while the facade still autostarts its kernel is never sent: the command does not run (before: it ran once the kernel was up, after the client had given up on it)`, async () => {
    const box = await sandbox();
    // A kernel that takes a second to start: the call and its cancellation both come before it.
    const slow = `${box.dir}/slow-kernel`;
    await Deno.writeTextFile(slow, `#!/bin/sh\nsleep 1\nexec '${KERNEL_BIN}' "$@"\n`);
    await Deno.chmod(slow, 0o755);
    const facade = new RawFacade(box, [], { SHOAL_KERNEL: slow });
    try {
      await facade.request(1, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      });
      const marker = `${box.dir}/home/ran`;
      // One write: the cancellation is read with the call, while the kernel is being started.
      await facade.write(
        callFrame(2, "shoal_exec", { src: `touch ${marker}` }, extra) + cancelFrame(2),
      );
      // A later call runs once the kernel is up; by its answer the cancelled one would have run.
      const later = await facade.request(3, "tools/call", {
        name: "shoal_exec",
        arguments: { src: "sleep 1.5; echo later" },
      });
      assert.equal((later.result as Rec).isError, false, JSON.stringify(later));
      const jobs = await facade.request(4, "resources/read", { uri: "shoal://jobs" });
      const cmds = ((jobs.result as Rec).structuredContent as Rec[]).map((j) => j.cmd);
      assert.equal(cmds.some((c) => String(c).includes("touch")), false, JSON.stringify(cmds));
      assert.equal(await Deno.stat(marker).then(() => true, () => false), false, "nothing ran");
      assert.equal(facade.queued.some((f) => (f as Rec).id === 2), false, "no response for id 2");
    } finally {
      await facade.stop().catch(() => facade.kill());
      await box.cleanup();
    }
  });
}

Deno.test("M-PROG-3: a cancellation for an id the client reused while its first request was in flight cancels the run still in flight under it, once the other request with that id was answered (before: the reuse made the run unreachable: it went on and answered)", async () => {
  await withRawFacade(async (facade) => {
    const src = "sleep 34 # reused id";
    await facade.write(callFrame(7, "shoal_exec", { src }));
    assert.ok(await jobInState(facade, src, "running"), "the run started");
    // The same id again, for a request answered at once: the run is still in flight under it.
    await facade.send({ jsonrpc: "2.0", id: 7, method: "ping" });
    assert.deepEqual((await facade.response(7)).result, {});
    await facade.write(cancelFrame(7));
    assert.ok(await jobInState(facade, src, "cancelled"), "the run was cancelled");
    await delay(500);
    assert.equal(facade.queued.some((f) => (f as Rec).id === 7), false, "no second response");
  });
});
