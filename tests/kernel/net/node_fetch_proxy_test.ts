/**
 * Node's own HTTP clients behind the proxy (P-NET-1): Node ≥ 24 (and 22.21+) reads HTTP(S)_PROXY
 * in `fetch` and `http`/`https` only when NODE_USE_ENV_PROXY is set, so without it a sandboxed
 * `node` never asks the proxy and fails on every granted destination (no route). The host's
 * `node` (or SHOAL_TEST_NODE) runs in a real bwrap sandbox through the real kernel.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** The node to test (SHOAL_TEST_NODE, else `node` on PATH): its real path, or null if none. */
async function nodePath(): Promise<string | null> {
  const named = Deno.env.get("SHOAL_TEST_NODE") ?? "node";
  for (const dir of named.includes("/") ? [""] : (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      return await Deno.realPath(dir === "" ? named : `${dir}/${named}`);
    } catch {
      // not there
    }
  }
  return null;
}

const NODE = await nodePath();

/** Why this host's node cannot show it: none, or one too old to read NODE_USE_ENV_PROXY. */
async function nodeMissing(): Promise<string | null> {
  if (NODE === null) return "needs node (SHOAL_TEST_NODE or PATH)";
  const out = await new Deno.Command(NODE, { args: ["-p", "process.versions.node"] }).output();
  const [major, minor] = new TextDecoder().decode(out.stdout).trim().split(".").map(Number);
  return major >= 24 || (major === 22 && minor >= 21)
    ? null
    : `needs node >= 24 or 22.21 (NODE_USE_ENV_PROXY); this one is ${major}.${minor}`;
}

const MISSING = NEEDS_TIER_B ?? await nodeMissing();

hostTest(
  "P-NET-1 a sandboxed node's fetch and https.get reach a granted destination through the proxy, and a refused one is refused by it (in net_refused), instead of failing with no route",
  MISSING,
  async () => {
    const answer = (tag: string) =>
      Deno.serve({ hostname: "127.0.0.2", port: 0, onListen: () => {} }, () => new Response(tag));
    const granted = answer("granted");
    const other = answer("other");
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    let k: TestKernel | undefined;
    try {
      // node's own tree (its binary may live outside the system roots the sandbox shows)
      const tree = NODE!.split("/").slice(0, -2).join("/") || "/";
      const policy = {
        "agent:n": {
          ...PROJECT_AGENT,
          fs: { ...PROJECT_AGENT.fs, read: [...PROJECT_AGENT.fs.read, `${tree}/**`] },
          net_connect: [`127.0.0.2:${granted.addr.port}`],
        },
      };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      await exec(await k.attach("work"), `cd ${proj}`);
      const conn = await k.attach("work", token);
      const run = async (js: string) => {
        // hidden from the static analysis: the sandbox's network is what is tested
        const src = `${NODE} -e "$(echo ${btoa(js)} | base64 -d)"`;
        const r = await exec(conn, `eval "$(echo ${btoa(src)} | base64 -d)"`, {
          position: "value",
        });
        return r.value as Rec;
      };
      const fetched = (port: number) =>
        `fetch("http://127.0.0.2:${port}/").then((r) => r.text()).then((t) => console.log(t), ` +
        `(e) => console.log("failed", e.cause?.code ?? e.message))`;
      const ok = await run(fetched(granted.addr.port));
      assert.equal((ok.out as Rec).v, "granted\n");
      const got = await run(
        `require("http").get("http://127.0.0.2:${granted.addr.port}/", (r) => ` +
          `r.on("data", (d) => console.log(String(d)))).on("error", (e) => console.log(e.code))`,
      );
      assert.equal((got.out as Rec).v, "granted\n");
      const refused = await run(fetched(other.addr.port));
      assert.match((refused.out as Rec).v as string, /^failed/);
      assert.deepEqual(refused.net_refused, [`127.0.0.2:${other.addr.port}`]);
      // the run's only, as the other proxy variables: the session does not keep it
      const human = await exec(await k.attach("work"), "echo ${NODE_USE_ENV_PROXY-unset}", {
        position: "value",
      });
      assert.equal(((human.value as Rec).out as Rec).v, "unset\n");
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
      await Promise.all([granted.shutdown(), other.shutdown()]);
    }
  },
);
