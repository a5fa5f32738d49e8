/**
 * P-NET-1 against work already running when the human edits the policy (M-ONB-1): the kernel's
 * proxy judges each new connection, so it could judge it by the grants in force. Ignored until
 * the SPEC decides what a task started before the edit keeps.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test({
  name:
    "SPEC decision needed (P-NET-1 / M-ONB-1 / K-TASK): a background task started before the human removed its net_connect grant opens new connections to that destination through the proxy afterwards (200), where the agent's next exec gets 403; this test expects 403 for the task's new connection too",
  ignore: true || NEEDS_TIER_B !== null,
  fn: async () => {
    const box = await sandbox();
    const server = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      () => new Response("hello\n"),
    );
    try {
      const port = server.addr.port;
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      const granted = { ...PROJECT_AGENT, net_connect: [`127.0.0.2:${port}`] };
      const policy = await writePolicy(box, { "agent:n": granted });
      const { secret } = await createToken(box, "agent:n", "n");
      const k = await startKernel(["--policy", policy], box);
      try {
        await exec(await k.attach("work"), `cd ${proj}`);
        const agent = await k.attach("work", secret);
        const fetch = `curl -sS -o /dev/null -w 'code %{http_code}\\n' http://127.0.0.2:${port}/`;
        const waiting = `while [ ! -e go ]; do sleep 0.05; done; ${fetch}`;
        const hidden = `eval "$(echo ${btoa(waiting)} | base64 -d)"`;
        const { task } = await exec(agent, hidden, { async: true });
        await writePolicy(box, { "agent:n": { ...granted, net_connect: [] } });
        const next = await exec(agent, `eval "$(echo ${btoa(fetch)} | base64 -d)"`, {
          position: "value",
        }).then((r) => JSON.stringify(r), (e) => String(e));
        assert.doesNotMatch(next, /code 200/, "the agent's next exec reached the removed grant");
        await Deno.writeTextFile(`${proj}/go`, "");
        const done = await agent.request("task.await", { task, timeout_ms: 20000 }) as Rec;
        const out = JSON.stringify(done.result);
        assert.doesNotMatch(out, /code 200/, "the running task reached the removed grant");
      } finally {
        await k.stop();
      }
    } finally {
      await server.shutdown();
      await box.cleanup();
    }
  },
});
