/**
 * The resolved-address guard (P-NET-1; `resolvedAddressDenied`): whoever controls a granted
 * name's DNS (a wildcard grant, a `*.nip.io`-style name) must not reach the host's own services
 * through it, on the host's own interface addresses as much as on loopback. The kernel sees its
 * own /etc/hosts (a mount namespace, root only) in which `own.test` is the host's own address.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { kernelWithEtc, NEEDS_ROOT } from "../../_support/etc_namespace.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import type { TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** The host's first IPv4 address that is not loopback, or null. */
const OWN =
  Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))
    ?.address ?? null;

hostTest(
  "P-NET-1 a granted name that resolves to one of the host's own interface addresses is refused (403 naming that address) as one resolving to loopback is: a server on the host's 0.0.0.0 is not reached; granting the address itself lets it through",
  NEEDS_TIER_B ?? NEEDS_ROOT ?? (OWN === null ? "needs a non-loopback IPv4 address" : null),
  async () => {
    const server = Deno.serve(
      { hostname: "0.0.0.0", port: 0, onListen: () => {} },
      () => new Response("host service\n"),
    );
    const port = server.addr.port;
    const box = await sandbox();
    let k: TestKernel | undefined;
    try {
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      const policy = {
        "agent:n": { ...PROJECT_AGENT, net_connect: [`own.test:${port}`] },
        "agent:g": { ...PROJECT_AGENT, net_connect: [`own.test:${port}`, `${OWN}:${port}`] },
      };
      const tokens = {
        n: (await createToken(box, "agent:n", "agent:n")).secret,
        g: (await createToken(box, "agent:g", "agent:g")).secret,
      };
      const hosts = `127.0.0.1 localhost\n${OWN} own.test\n`;
      k = await kernelWithEtc(box, { hosts }, ["--policy", await writePolicy(box, policy)]);
      await exec(await k.attach("work"), `cd ${proj}`);
      const fetch = async (token: string) => {
        const r = await exec(
          await k!.attach("work", token),
          `curl -sS --max-time 20 http://own.test:${port}/ 2>&1`,
          { position: "value" },
        );
        return String(((r.value as Rec).out as Rec).v);
      };
      assert.equal(
        await fetch(tokens.n),
        `shoal: own.test:${port} resolves to ${OWN}, which a name may lead to only when a ` +
          "net_connect grant of agent:n names that address\n",
      );
      assert.equal(await fetch(tokens.g), "host service\n");
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
      await server.shutdown();
    }
  },
);
