/**
 * What a refused client says (P-NET-2, "every refusal is visible"): most clients print an answer's
 * status line, not its body, so the proxy's reason for a 403 is in its reason phrase too. Python's
 * urllib and http.client (pip, requests), wget, npm and Go print that phrase; curl prints the code.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

hostTest(
  "P-NET-2 a client refused by the proxy prints which destination lacks which principal's grant (python urllib, http.client's CONNECT, wget: it said only 'HTTP Error 403: Forbidden', 'Tunnel connection failed: 403 Forbidden', 'ERROR 403: Forbidden.')",
  NEEDS_TIER_B,
  async () => {
    let k: TestKernel | undefined;
    try {
      const agent = await startKernelWithAgent("agent:n", {
        ...PROJECT_AGENT,
        net_connect: ["granted.example:443"],
      });
      k = agent.kernel;
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj);
      await exec(await k.attach("work"), `cd ${proj}`);
      const urlopen = (url: string) =>
        `python3 -c "import urllib.request; urllib.request.urlopen('${url}')" 2>&1 | tail -1`;
      const src = [
        urlopen("http://refused.example/"),
        urlopen("https://tunnel.example/"),
        "wget --no-netrc -O /dev/null http://wget.example/ 2>&1 | grep ERROR",
      ].join("; ");
      // hidden from the static analysis: the proxy is what is tested
      const hidden = `eval "$(echo ${btoa(src)} | base64 -d)"`;
      const r = await exec(await k.attach("work", agent.token), hidden, { position: "value" });
      const value = r.value as Rec;
      const lines = ((value.out as Rec).v as string).trimEnd().split("\n");
      assert.equal(lines.length, 3, JSON.stringify(value));
      const said = ["refused.example:80", "tunnel.example:443", "wget.example:80"];
      for (const [i, destination] of said.entries()) {
        assert.ok(
          lines[i].includes(`${destination} is not in the net_connect grants of agent:n`),
          lines[i],
        );
      }
      assert.deepEqual([...(value.net_refused as string[])].sort(), said);
    } finally {
      await k?.cleanup();
    }
  },
);
