/**
 * The proxy's Unix socket (P-NET-1) is made wherever the kernel's state directory is: a socket
 * path holds at most 107 bytes, a state directory's path any length.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";

/** Every entry below `dir`. */
async function* walk(dir: string): AsyncGenerator<{ name: string; path: string }> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    yield { name: entry.name, path };
    if (entry.isDirectory) yield* walk(path);
  }
}

hostTest(
  "P-NET-1 with a state directory 100 characters deep, an agent granted a destination reaches it through the proxy, and the kernel lives on (its proxy socket's path was past SUN_LEN: the kernel died of an uncaught TypeError at the agent's first exec)",
  NEEDS_TIER_B,
  async () => {
    const base = await sandbox();
    const state = `${base.dir}/state/${"d".repeat(100 - base.dir.length - 7)}`;
    assert.equal(state.length, 100);
    await Deno.mkdir(state, { mode: 0o700 });
    const box: Sandbox = {
      ...base,
      env: (extra = {}) => base.env({ XDG_STATE_HOME: state, ...extra }),
    };
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const server = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      () => new Response("hello\n"),
    );
    let k: TestKernel | undefined;
    try {
      const port = server.addr.port;
      const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: [`127.0.0.2:${port}`] } };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const fetched = await exec(agent, `curl -sS http://127.0.0.2:${port}/`, {
        position: "value",
      });
      const value = fetched.value as Rec;
      assert.equal((value.out as Rec).v, "hello\n", JSON.stringify(value.err));
      // the socket is in the state directory, which sandboxes mask (P-SBX-3), not elsewhere
      const sockets = [];
      for await (const entry of walk(state)) {
        if (entry.name === "proxy" && Deno.lstatSync(entry.path).isSocket) sockets.push(entry.path);
      }
      assert.equal(sockets.length, 1, "the proxy socket is below the state directory");
      const human = await exec(await k.attach("work"), "echo alive", { position: "value" });
      assert.equal(((human.value as Rec).out as Rec).v, "alive\n");
    } finally {
      await server.shutdown();
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
);
