/**
 * Bounds of the facade against an MCP client that sends what no client needs: subscription URIs
 * of megabytes, or requests by the hundred thousand that wait on a task. Each costs the client
 * little to send and held the facade's memory without limit (probe round 14).
 */
import assert from "node:assert/strict";
import { memoryKiB } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { withRawFacade } from "../_support/facade.ts";

const MiB = 1024;

Deno.test({
  name:
    "M-SUB-2 64 subscriptions whose URIs carry 4 MiB each (a fragment the facade ignores) do not hold the facade's memory by the gigabyte [ignored: defect found by the probe round; needs a SPEC decision: M-SUB-2 keys the registry by the exact URI and M-SUB-3 repeats it in every notification, with no bound on its length below the 16 MiB frame; the facade held ~16 MiB per such subscription (+1.05 GiB RSS for 64, ~4 GiB at the frame limit): bound the URI (e.g. -32602 past 64 KiB) or count the URIs' bytes against the 64 subscriptions]",
  ignore: true,
  fn: () =>
    withRawFacade(async (facade) => {
      const before = memoryKiB(facade.facadePid()).rss;
      for (let i = 0; i < 64; i++) {
        const reply = await facade.request(10 + i, "resources/subscribe", {
          uri: `shoal://events/user.long#${i}${"a".repeat(4 << 20)}`,
        });
        assert.ok("result" in reply || "error" in reply);
      }
      const growth = memoryKiB(facade.facadePid()).rss - before;
      assert.ok(growth < 256 * MiB, `the facade grew by ${growth} KiB`);
    }),
});

Deno.test({
  name:
    "M-START-5 100,000 tasks/result requests waiting on one running task do not hold the facade's memory without bound [ignored: defect found by the probe round; needs a SPEC decision: the facade bounds neither its requests in flight nor tasks/result waits (M-TASKS-1 says it waits for the terminal state), so 100,000 of them (9 MB sent) held +370 MiB RSS, ~3.7 KiB each, and each would be answered with its own copy of the result: bound the requests in flight (answering the excess with an error) or the waits per task]",
  ignore: true,
  fn: () =>
    withRawFacade(async (facade) => {
      const created = await facade.request(2, "tools/call", {
        name: "shoal_exec",
        arguments: { src: "sleep 60" },
        task: {},
      });
      const taskId = ((created.result as Rec).task as Rec).taskId;
      const before = memoryKiB(facade.facadePid()).rss;
      let batch = "";
      for (let i = 0; i < 100_000; i++) {
        batch += JSON.stringify({
          jsonrpc: "2.0",
          id: 1000 + i,
          method: "tasks/result",
          params: { taskId },
        }) + "\n";
        if (batch.length > 1 << 20) {
          await facade.write(batch);
          batch = "";
        }
      }
      await facade.write(batch);
      assert.deepEqual((await facade.request("after", "ping")).result, {});
      const growth = memoryKiB(facade.facadePid()).rss - before;
      assert.ok(growth < 64 * MiB, `the facade grew by ${growth} KiB`);
      await facade.request(3, "tasks/cancel", { taskId });
    }),
});
