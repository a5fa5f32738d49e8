/**
 * An IPv6 literal destination, which the analysis names bracketed (`[::1]`) whether it comes from a
 * URL or a `/dev/tcp/::1/P` path (tests/kernel/policy/connect_host_form_test.ts): a grant of it
 * matches however the grant is written (P-EVAL-1, P-NET-1), and an approved plan's run reaches
 * exactly the connections the human approved (P-SBX-3), an IPv6 literal as much as an IPv4 one.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** A server on [::1] answering `six`, and a kernel whose agent:a is granted `grant(port)`. */
async function withV6Agent(
  grants: (port: number) => string[],
  body: (agent: RpcConnection, port: number) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const v6 = Deno.serve(
    { hostname: "::1", port: 0, onListen: () => {} },
    () => new Response("six\n"),
  );
  let k: TestKernel | undefined;
  try {
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const policy = { "agent:a": { ...PROJECT_AGENT, net_connect: grants(v6.addr.port) } };
    const { secret } = await createToken(box, "agent:a", "a");
    k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    await exec(await k.attach("work"), `cd ${proj}`);
    await body(await k.attach("work", secret), v6.addr.port);
  } finally {
    await v6.shutdown();
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/** What `src` printed, or the error that refused it. */
async function printed(agent: RpcConnection, src: string): Promise<string> {
  try {
    const r = await exec(agent, src, { position: "value" });
    return ((r.value as Rec).out as Rec).v as string;
  } catch (e) {
    return String(e);
  }
}

hostTest(
  "P-EVAL-1 P-NET-1 a grant of [::1]:P lets `/dev/tcp/::1/P` run, and a grant of ::1:P lets curl -g http://[::1]:P/ run: the analysis named the one bare and the other bracketed, and each grant matched one spelling only (-32010, lacks net_connect)",
  NEEDS_TIER_B,
  async () => {
    const tcp = (port: number) =>
      `exec 3<>/dev/tcp/::1/${port}; printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`;
    await withV6Agent((port) => [`[::1]:${port}`], async (agent, port) => {
      assert.match(await printed(agent, tcp(port)), /six\n$/);
    });
    await withV6Agent((port) => [`::1:${port}`], async (agent, port) => {
      assert.equal(await printed(agent, `curl -sS -g 'http://[::1]:${port}/'`), "six\n");
    });
  },
);

hostTest(
  "P-SBX-3 P-NET-1 a plan fetching http://[::1]:P/, approved by the human, reaches [::1]:P in its run as an approved http://127.0.0.1:P/ reaches 127.0.0.1:P (it was refused with 403 and listed in net_refused)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const quiet = { port: 0, onListen: () => {} };
    const v6 = Deno.serve({ hostname: "::1", ...quiet }, () => new Response("six\n"));
    const port = v6.addr.port;
    let v4: Deno.HttpServer<Deno.NetAddr> | null = null;
    let k: TestKernel | undefined;
    try {
      v4 = Deno.serve({ hostname: "127.0.0.1", ...quiet, port }, () => new Response("four\n"));
    } catch {
      // the port is taken on 127.0.0.1: the IPv6 case alone is tested
    }
    try {
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      // `*:P` covers an IP literal in the analysis (P-EVAL-1) but not in the proxy (P-NET-1):
      // the run reaches one only once approved; every run of this agent asks
      const policy = {
        "agent:p": { ...PROJECT_AGENT, net_connect: [`*:${port}`], auto_apply: "never" },
      };
      const { secret } = await createToken(box, "agent:p", "p");
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      const cases: [string, string][] = [[`http://[::1]:${port}/`, "six\n"]];
      if (v4 !== null) cases.push([`http://127.0.0.1:${port}/`, "four\n"]);
      for (const [url, answer] of cases) {
        const asked = await rpcError(exec(agent, `curl -sS -g '${url}'`));
        assert.equal(asked.code, -32011, url);
        const planRef = (asked.data as Rec).plan_ref as string;
        await human.request("approval.grant", { plan_ref: planRef });
        const applied = await agent.request("plan.apply", {
          plan_ref: planRef,
          position: "value",
        }) as Rec;
        const value = applied.value as Rec;
        assert.equal((value.out as Rec).v, answer, JSON.stringify(value));
        assert.equal(value.net_refused, undefined, url);
      }
    } finally {
      await v6.shutdown();
      await v4?.shutdown();
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
);
