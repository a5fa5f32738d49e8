import assert from "node:assert/strict";
import { ErrorCode } from "../../../src/protocol/errors.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken } from "../../_support/principals.ts";
import { memoryKiB } from "../../_support/proc.ts";
import { rpcError } from "../../_support/rejection.ts";

Deno.test("T-TOK-2/4 attaches with huge strings for a token are refused without the kernel keeping them: 16 of 12 MB do not grow it by their 192 MB", async () => {
  const kernel = await startKernel();
  try {
    const { secret } = await createToken(kernel.box, "agent:a");
    await kernel.attach("default", secret); // the store is read, the digest of a real secret kept
    const before = memoryKiB(kernel.child.pid).rss;
    for (let i = 0; i < 16; i++) {
      const bogus = String.fromCharCode(65 + i).repeat(12_000_000);
      const conn = await kernel.connect();
      const e = await rpcError(conn.request("session.attach", { session: "s", token: bogus }));
      assert.equal(e.code, ErrorCode.AUTH_FAILED);
      conn.close();
    }
    const growthMiB = (memoryKiB(kernel.child.pid).rss - before) / 1024;
    // Before: each refused string was kept as a key of the validated-digest cache, ~240 MiB here.
    assert.ok(growthMiB < 112, `kernel RSS grew by ${growthMiB.toFixed(0)} MiB over 16 refusals`);
    assert.equal(typeof (await kernel.attach("default", secret)), "object");
  } finally {
    await kernel.cleanup();
  }
});
