/**
 * A granted name whose addresses do not answer (P-NET-1, P-NET-2): the agent gets, in bounded
 * time, an answer from the proxy naming the destination and why each address failed, not a
 * connection closed unanswered. The kernel sees its own /etc/hosts (a mount namespace, root
 * only) in which `dead.test` has three loopback addresses whose listeners never accept.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { kernelWithEtc, NEEDS_ROOT } from "../../_support/etc_namespace.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import type { TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { deafListeners } from "../../_support/deaf_listener.ts";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";

const ADDRESSES = ["127.0.0.3", "127.0.0.4", "127.0.0.5"];

hostTest(
  "P-NET-1 P-NET-2 curl to a granted name whose three addresses never accept gets the proxy's answer naming the name and what each address tried did, not 'Empty reply from server' when the 30 s handshake limit cut it off",
  NEEDS_TIER_B ?? NEEDS_ROOT,
  async () => {
    const { port, stop } = await deafListeners(ADDRESSES);
    const box = await sandbox();
    let k: TestKernel | undefined;
    try {
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      // the name, and each of its loopback addresses (a name may lead to one only when granted)
      const grants = ["dead.test", ...ADDRESSES].map((host) => `${host}:${port}`);
      const policy = { "agent:d": { ...PROJECT_AGENT, net_connect: grants } };
      const token = (await createToken(box, "agent:d", "agent:d")).secret;
      const hosts = `127.0.0.1 localhost\n${ADDRESSES.map((a) => `${a} dead.test\n`).join("")}`;
      k = await kernelWithEtc(box, { hosts }, ["--policy", await writePolicy(box, policy)]);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const r = await exec(agent, `curl -sS --max-time 100 http://dead.test:${port}/ 2>&1`, {
        position: "value",
        timeout_ms: 120_000,
      });
      const out = String(((r.value as Rec).out as Rec).v);
      // each address for 15 s, two at once: the third, started when the first gave up, for what
      // is left of the 30 s
      assert.match(
        out,
        new RegExp(
          `^shoal: cannot connect to dead\\.test:${port}: 127\\.0\\.0\\.3 did not answer within ` +
            "15 s; 127\\.0\\.0\\.4 did not answer within 15 s; 127\\.0\\.0\\.5 did not answer " +
            "within 1[45] s\n$",
        ),
      );
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
      await stop();
    }
  },
);

Deno.test("P-NET-2 a granted address that refuses the connection is named so in the proxy's answer (HTTP 502; SOCKS5 reply 5), and a name with no address is told apart from it (reply 4)", async () => {
  await withTempDir(async (dir) => {
    // a port nothing listens on: taken and given back
    const probe = Deno.listen({ hostname: "127.0.0.2", port: 0 });
    const closed = (probe.addr as Deno.NetAddr).port;
    probe.close();
    const grants = [`127.0.0.2:${closed}`, `nowhere.invalid:${closed}`];
    const proxy = new NetProxy(dir, () => {});
    const socket = `${proxy.endpoint("s", sandboxNet("agent:a", grants)!).dir}/${PROXY_SOCKET}`;
    const ask = async (request: Uint8Array, greeting = false) => {
      const conn = await Deno.connect({ transport: "unix", path: socket });
      try {
        if (greeting) {
          await conn.write(new Uint8Array([5, 1, 0]));
          await conn.read(new Uint8Array(2));
        }
        await conn.write(request);
        const buf = new Uint8Array(4096);
        let got = "";
        for (let n; (n = await conn.read(buf)) !== null;) {
          got += String.fromCharCode(...buf.subarray(0, n));
        }
        return got;
      } finally {
        conn.close();
      }
    };
    try {
      const http = await ask(
        new TextEncoder().encode(`CONNECT 127.0.0.2:${closed} HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      assert.match(http, /^HTTP\/1\.1 502 /);
      assert.ok(
        http.endsWith(
          `shoal: cannot connect to 127.0.0.2:${closed}: 127.0.0.2 refused the connection\n`,
        ),
        http,
      );
      const refused = await ask(
        new Uint8Array([5, 1, 0, 1, 127, 0, 0, 2, closed >> 8, closed & 255]),
        true,
      );
      assert.equal(refused.charCodeAt(1), 5);
      const name = new TextEncoder().encode("nowhere.invalid");
      const none = await ask(
        new Uint8Array([5, 1, 0, 3, name.length, ...name, closed >> 8, closed & 255]),
        true,
      );
      assert.equal(none.charCodeAt(1), 4);
      const noneHttp = await ask(
        new TextEncoder().encode(`CONNECT nowhere.invalid:${closed} HTTP/1.1\r\n\r\n`),
      );
      assert.match(noneHttp, /found no address for nowhere\.invalid/);
    } finally {
      proxy.closeAll();
    }
  });
});
