// A facade whose kernel is stopped the orderly way (SIGTERM, G-SOCK-8) while it serves: the
// "stop that kernel, and the next call starts the current one" of an upgrade (M-START-4).
import assert from "node:assert/strict";
import { withRawFacade } from "../_support/facade.ts";
import { kernelConnections, kernelPid, processLive } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { waitUntil } from "../_support/wait.ts";

Deno.test("M-START-4: a call sent while the kernel shuts down (SIGTERM, a run that ignores SIGTERM holds it for the 2000 ms grace) runs on the kernel autostarted after it; it failed -32603 'kernel unavailable: the kernel closed the connection during attach', the dying kernel's socket still taking connections it never served", async () => {
  await withRawFacade(async (facade, box) => {
    const started = await facade.request(2, "tools/call", {
      name: "shoal_exec",
      arguments: { src: 'trap "" TERM; sleep 30; :', background: true },
    });
    assert.equal((started.result as Rec).isError, false, JSON.stringify(started));
    const socket = box.socket();
    const old = kernelPid(socket);
    Deno.kill(old, "SIGTERM");
    // The kernel drops its connections at once, then waits for its runs to end.
    assert.ok(await waitUntil(() => kernelConnections(old, socket) === 0, 10000), "dropped");
    assert.ok(processLive(old), "the old kernel is still shutting down when the call is sent");
    const after = await facade.request(3, "tools/call", {
      name: "shoal_exec",
      arguments: { src: "echo after" },
    });
    assert.equal(after.error, undefined, JSON.stringify(after));
    assert.equal((after.result as Rec).isError, false, JSON.stringify(after));
    assert.equal(((after.result as Rec).content as Rec[])[0].text, "after");
    assert.notEqual(kernelPid(socket), old, "a new kernel serves");
  });
});
