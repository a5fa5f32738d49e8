// kernel.log, where a user is sent to read why (G-STATE-2, M-START-3), removed under a running
// kernel with the rest of its state directory.
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { removeTree } from "../../_support/remove_tree.ts";

Deno.test("G-STATE-2 a kernel whose state directory was removed while it runs writes its next diagnostics to a new kernel.log, not to the removed one", async () => {
  const k = await startKernel();
  const state = `${k.box.dir}/state/shoal`;
  try {
    const conn = await k.attach();
    await conn.request("exec", { src: "echo before" });
    removeTree(state);
    await conn.request("exec", { src: "echo after" }); // the kernel says it made tmp/ again
    assert.ok(k.stderr.some((line) => line.includes("was removed")), k.stderr.join("\n"));
    const log = Deno.readTextFileSync(`${state}/kernel.log`);
    assert.ok(log.includes("was removed"), JSON.stringify(log));
    assert.equal(Deno.statSync(`${state}/kernel.log`).mode! & 0o777, 0o600);
  } finally {
    await k.cleanup();
  }
});
