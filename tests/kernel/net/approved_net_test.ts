/**
 * What an approved plan's run reaches (P-SBX-3, P-NET-1): exactly the connections the human
 * approved, an IPv6 literal as much as an IPv4 one. The analysis names a URL's IPv6 host
 * bracketed (`[::1]`), and the run's added grant bracketed it again (`[[::1]]:P`), a grant no
 * destination matches: the approved connection got 403.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

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
