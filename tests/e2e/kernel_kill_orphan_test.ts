// What a client is left with when the kernel is killed (kill -9) under a running exec.
import assert from "node:assert/strict";
import { kernelPid, pidsMentioning, processLive } from "../_support/proc.ts";
import { sandbox } from "../_support/sandbox.ts";
import { waitUntil } from "../_support/wait.ts";
import { connectMcp, mcpError } from "./_mcp.ts";

Deno.test({
  name:
    "kill -9 of the kernel under an unsandboxed shoal_exec leaves no process of that run behind: the client was told the call failed (-32603 kernel disconnected) and no cancel can reach the run afterwards [ignored: defect found by the probe round; needs a SPEC decision: K-BASH-13 signals the exec's process group on cancellation, timeout and kernel shutdown, and P-SBX-4 has bwrap die with the kernel, but nothing covers an unsandboxed run when the kernel dies: `sleep` keeps running after the call failed, the restarted kernel numbers its tasks from task:1 again, and an MCP task of that run is already 'failed', so tasks/cancel refuses it; decide whether the kernel puts its runs where its death ends them (PR_SET_PDEATHSIG, a cgroup, or killing recorded process groups at the next start)]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const marker = `sleep 40.${Deno.pid}`;
    const mcp = await connectMcp(box);
    try {
      const inFlight = mcpError(mcp.call("shoal_exec", { src: marker }));
      assert.ok(await waitUntil(() => pidsMentioning(marker).length > 0, 20000), "the run started");
      const kernel = kernelPid(box.socket());
      Deno.kill(kernel, "SIGKILL");
      const e = await inFlight;
      assert.equal(e.code, -32603);
      assert.match(e.message, /kernel disconnected/);
      assert.ok(await waitUntil(() => !processLive(kernel), 10000));
      assert.ok(
        await waitUntil(() => pidsMentioning(marker).length === 0, 5000),
        `the run is still there: ${pidsMentioning(marker)}`,
      );
    } finally {
      await mcp.close();
      for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
      await box.cleanup();
    }
  },
});
