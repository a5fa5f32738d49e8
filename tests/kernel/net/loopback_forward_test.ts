/** P-NET-1's raw TCP exception: a loopback grant's port forwarded to the host's loopback. */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test({
  name:
    "P-NET-1 a grant of a loopback port below 1024 (127.0.0.1:79) is forwarded as raw TCP like any other [ignored: defect found by the probe round, not fixed; needs a decision: the forwarder binds the port inside the namespace, where ip_unprivileged_port_start is 1024 and the sandbox has no capability (--cap-drop ALL), so the bind fails silently and python's connect to 127.0.0.1:79 is refused; the fix needs CAP_NET_BIND_SERVICE for the forwarder alone, or the namespace's ip_unprivileged_port_start lowered by the launcher, which is sandbox code]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const service = Deno.listen({ hostname: "127.0.0.1", port: 79 });
    const serving = (async () => {
      for await (const conn of service) {
        await conn.write(new TextEncoder().encode("pong\n")).catch(() => {});
        conn.close();
      }
    })().catch(() => {});
    let k: TestKernel | undefined;
    try {
      const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: ["127.0.0.1:79"] } };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      await exec(await k.attach("work"), `cd ${proj}`);
      const py = `python3 -c "import socket; ` +
        `print(socket.create_connection(('127.0.0.1', 79), 3).recv(10).decode(), end='')" 2>&1`;
      const r = await exec(
        await k.attach("work", token),
        `eval "$(echo ${btoa(py)} | base64 -d)"`,
        { position: "value" },
      );
      assert.equal(((r.value as Rec).out as Rec).v, "pong\n");
    } finally {
      service.close();
      await serving;
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
});
