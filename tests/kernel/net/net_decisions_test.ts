/**
 * What an agent's tools meet on the network where the SPEC needs a decision (P-NET-1, P-NET-2):
 * each test expects what the probe round took a user to need and is ignored until decided.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** Runs `body` with agent:n, granted `grants(port)`, where `port` is a server on 127.0.0.1. */
async function withAgent(
  grants: (port: number) => string[],
  body: (agent: RpcConnection, port: number) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("dev server\n"),
  );
  let k: TestKernel | undefined;
  try {
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const policy = {
      "agent:n": { ...PROJECT_AGENT, net_connect: grants(server.addr.port) },
    };
    const { secret } = await createToken(box, "agent:n", "n");
    k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    await exec(await k.attach("work"), `cd ${proj}`);
    await body(await k.attach("work", secret), server.addr.port);
  } finally {
    await server.shutdown();
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/** The outcome of `src`, hidden from the static analysis (the sandbox's network is tested). */
async function outcome(agent: RpcConnection, src: string, extra: Rec = {}): Promise<Rec> {
  const hidden = `eval "$(echo ${btoa(src)} | base64 -d)"`;
  return await exec(agent, hidden, { position: "value", ...extra });
}

Deno.test({
  name:
    "SPEC decision needed (P-NET-1): under a grant of localhost:P, curl http://127.0.0.1:P/ gets 403 from the proxy while a raw connect to 127.0.0.1:P reaches the same server through the forward the grant makes (a dev server that prints http://127.0.0.1:8000 is reached by python's socket, not by curl, wget or npm); this test expects the proxied request to be let through as the forward lets it",
  ignore: true || NEEDS_TIER_B !== null,
  fn: async () => {
    await withAgent((port) => [`localhost:${port}`], async (agent, port) => {
      const raw = await outcome(
        agent,
        `exec 3<>/dev/tcp/127.0.0.1/${port}; printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`,
      );
      assert.match(JSON.stringify(raw), /dev server/, "the forward reaches the server");
      const proxied = await outcome(agent, `curl -sS http://127.0.0.1:${port}/`);
      const value = proxied.value as Rec;
      assert.equal((value.out as Rec).v, "dev server\n", JSON.stringify(value));
      assert.equal(value.net_refused, undefined);
    });
  },
});

Deno.test({
  name:
    "SPEC decision needed (P-NET-2 'the exec during which it happened'): a background task's refusal is listed in the net_refused of a concurrent exec of the same agent that made no connection at all (`sleep; echo`), as if that exec had tried the destination; this test expects it in the task's outcome only",
  ignore: true || NEEDS_TIER_B !== null,
  fn: async () => {
    await withAgent((port) => [`127.0.0.1:${port}`], async (agent) => {
      // 127.0.0.3:9 is no grant's: the task's curl is refused while the other exec sleeps
      const { task } = await outcome(
        agent,
        `sleep 0.5; curl -sS -o /dev/null http://127.0.0.3:9/`,
        { async: true },
      );
      const quiet = await outcome(agent, `sleep 2; echo quiet`);
      const done = await agent.request("task.await", { task, timeout_ms: 20000 }) as Rec;
      const taskValue = (done.result as Rec).value as Rec;
      assert.deepEqual(taskValue.net_refused, ["127.0.0.3:9"]);
      assert.equal((quiet.value as Rec).net_refused, undefined, JSON.stringify(quiet.value));
    });
  },
});

Deno.test({
  name:
    "P-NET-1/P-SBX-3: an agent granted its npm registry uses npm in its project under the project profile: npm makes its cache in the sandbox's own ~/.npm (HOME was read-only, and npm failed making its cache, 'sudo chown -R …', before asking the registry), so `npm view` of a granted registry answers, as curl's fetch of it does",
  ignore: NEEDS_TIER_B !== null,
  fn: async () => {
    const registry = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      () =>
        Response.json({
          name: "tiny-pkg",
          "dist-tags": { latest: "1.0.0" },
          versions: { "1.0.0": { name: "tiny-pkg", version: "1.0.0" } },
        }),
    );
    const url = `http://127.0.0.2:${registry.addr.port}/`;
    try {
      await withAgent(() => [`127.0.0.2:${registry.addr.port}`], async (agent) => {
        const fetched = await outcome(agent, `curl -sS ${url}tiny-pkg`);
        assert.match(JSON.stringify(fetched.value), /dist-tags/, "the registry is reached");
        const viewed = await outcome(agent, `npm view --registry ${url} tiny-pkg version 2>&1`);
        const out = ((viewed.value as Rec).out as Rec).v as string;
        assert.equal(out.trim(), "1.0.0", out);
      });
    } finally {
      await registry.shutdown();
    }
  },
});

Deno.test({
  name:
    "SPEC decision needed (P-SBX-3 'exactly the session environment' / P-NET-1 names only HTTP_PROXY, HTTPS_PROXY, ALL_PROXY): what an agent exports of the proxy's other variables is replaced in each later exec: NO_PROXY=localhost (to curl the dev server it runs in its own sandbox, which the proxy refuses as the host's localhost:8000) comes back '', GIT_SSH_COMMAND='ssh -i ./deploy_key' comes back as the proxy's ssh command without the key; a human's NO_PROXY=.corp.example in a shared session, honoured, would send an agent's granted api.corp.example around the proxy, where there is no route. This test expects the agent's own exports kept",
  ignore: true || NEEDS_TIER_B !== null,
  fn: async () => {
    await withAgent((port) => [`127.0.0.1:${port}`], async (agent) => {
      await outcome(
        agent,
        `export NO_PROXY=localhost,127.0.0.1 no_proxy=localhost,127.0.0.1; ` +
          `export GIT_SSH_COMMAND='ssh -i ./deploy_key'`,
      );
      const served = await outcome(
        agent,
        `mkdir -p www && echo mine > www/i.txt; ` +
          `(cd www && exec timeout 20 python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &); ` +
          `sleep 1; curl -sS http://localhost:8000/i.txt; echo "[$NO_PROXY] [$GIT_SSH_COMMAND]"`,
      );
      const value = served.value as Rec;
      assert.equal(
        (value.out as Rec).v,
        "mine\n[localhost,127.0.0.1] [ssh -i ./deploy_key]\n",
        JSON.stringify(value),
      );
      assert.equal(value.net_refused, undefined);
    });
  },
});

Deno.test({
  name:
    "SPEC decision needed (P-NET-2 'every refusal is visible' / V-RENDER-1 pins an outcome's render as out, stderr, status): the render of an exec whose curl or git the proxy refused says only 'curl: (56) CONNECT tunnel failed, response 403' (curl and libcurl print no reason phrase), so an agent whose client shows the model the text content, not structuredContent (M-OUT-1), never learns which destination lacks which grant; net_refused is in the value only. This test expects the render to name it",
  ignore: true || NEEDS_TIER_B !== null,
  fn: async () => {
    await withAgent((port) => [`127.0.0.1:${port}`], async (agent) => {
      const refused = await outcome(agent, `curl -sS https://refused.example/`);
      assert.deepEqual((refused.value as Rec).net_refused, ["refused.example:443"]);
      assert.match(refused.render as string, /refused\.example:443/, refused.render as string);
    });
  },
});
