/**
 * The resolved-address guard (P-NET-1; `resolvedAddressDenied`, after sandbox-runtime's): an
 * IPv6 address that carries an IPv4 one (NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, IPv4-compatible
 * `::a.b.c.d`) is delivered to that IPv4 address by whatever translates it, so a granted name
 * resolving to such a form of loopback or of cloud metadata is refused as one resolving to the
 * IPv4 address itself; and the metadata endpoints outside link-local space are refused too. The
 * kernel sees its own /etc/hosts (a mount namespace, root only) naming those addresses.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { kernelWithEtc, NEEDS_ROOT } from "../../_support/etc_namespace.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import type { TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** Each name the agent asks for, and the address its hosts line gives it. */
const NAMES: [string, string][] = [
  ["nat64-loopback.test", "64:ff9b::7f00:1"],
  ["nat64-metadata.test", "64:ff9b::a9fe:a9fe"],
  ["compat-loopback.test", "::127.0.0.1"],
  ["sixto4-metadata.test", "2002:a9fe:a9fe::1"],
  ["oracle-metadata.test", "192.0.0.192"],
  ["google6-metadata.test", "fd20:ce::254"],
];

hostTest(
  "P-NET-1 a granted name resolving to a NAT64, 6to4 or IPv4-compatible form of loopback or of cloud metadata, or to a metadata endpoint outside link-local space, is refused with 403 naming that address and listed in net_refused (the proxy does not dial it), and ssh's ProxyCommand says so too",
  NEEDS_TIER_B ?? NEEDS_ROOT,
  async () => {
    const box = await sandbox();
    let k: TestKernel | undefined;
    try {
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: ["*.test:80"] } };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      const hosts = ["127.0.0.1 localhost", ...NAMES.map(([name, at]) => `${at} ${name}`), ""];
      k = await kernelWithEtc(box, { hosts: hosts.join("\n") }, [
        "--policy",
        await writePolicy(box, policy),
      ]);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const curls = NAMES.map(([name]) => `curl -sS --max-time 20 http://${name}/ 2>&1`);
      const r = await exec(agent, curls.join("; "), { position: "value", timeout_ms: 150000 });
      const value = r.value as Rec;
      const lines = String((value.out as Rec).v).split("\n");
      for (const [i, [name, at]] of NAMES.entries()) {
        const shown = new URL(`http://${at.includes(":") ? `[${at}]` : at}/`).hostname;
        assert.equal(
          lines[i],
          `shoal: ${name}:80 resolves to ${shown}, which a name may lead to only when a ` +
            "net_connect grant of agent:n names that address",
        );
      }
      assert.deepEqual(value.net_refused, NAMES.map(([name]) => `${name}:80`));
      // ssh's ProxyCommand (git over ssh) says the same, not that the name is not granted
      const ssh = await exec(
        agent,
        '/usr/bin/perl /dev/shoal-net/connect "${HTTP_PROXY##*:}" nat64-loopback.test 80 </dev/null',
        { position: "value" },
      );
      assert.equal(
        ((ssh.value as Rec).err as Rec).v,
        "shoal: nat64-loopback.test:80 resolves to [64:ff9b::7f00:1], which a name may lead to " +
          "only when a net_connect grant of agent:n names that address\n",
      );
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
);
