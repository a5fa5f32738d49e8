/** M-PERM-1..3: what network the facade's permission flags leave open, probed for real. */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { localFlags, releaseFlags } from "../../src/mcp/permissions.ts";
import { releaseTransport, sdkTransport } from "../_support/facade.ts";
import { hostTest, LINUX_SOCKET_RULE, needsLinux } from "../_support/host.ts";
import { launchKernel, startKernel, type TestKernel } from "../_support/kernel.ts";
import { childrenMentioning, liveChildren, memoryKiB, processLive } from "../_support/proc.ts";
import { KERNEL_ENTRY } from "../_support/sandbox.ts";
import { delay, waitUntil } from "../_support/wait.ts";

const PROBE = new URL("./_net_probe.ts", import.meta.url).pathname;

/** Runs the probe under `flags` against live loopback listeners; what each attempt met. */
async function probe(flags: string[]): Promise<Record<string, string>> {
  const v4 = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const v6 = Deno.listen({ hostname: "::1", port: 0 });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, PROBE, String(v4.addr.port), String(v6.addr.port)],
      stdin: "null",
      stderr: "inherit",
    }).output();
    assert.equal(out.code, 0);
    return JSON.parse(new TextDecoder().decode(out.stdout));
  } finally {
    v4.close();
    v6.close();
  }
}

/** Every attempt of the probe refused by a permission check. */
const ALL_REFUSED = {
  "tcp 127.0.0.1": "refused",
  "tcp ::1": "refused",
  "tcp ::": "refused",
  "tcp localhost": "refused",
  "tcp 2001:db8::1": "refused",
  "Deno.resolveDns": "refused",
  "node:dns lookup": "refused",
};

Deno.test("M-PERM-3: under exactly the release flags TCP to 127.0.0.1, ::1, :: and a global IPv6 address and both kinds of DNS look-up are refused", async () => {
  assert.equal(
    (await probe(["--allow-net"]))["tcp 127.0.0.1"],
    "allowed",
    "the listeners are live",
  );
  assert.deepEqual(await probe(releaseFlags()), ALL_REFUSED);
});

Deno.test("M-PERM-2: under the local flags (the exact unix: grant) every TCP connect and both kinds of DNS look-up are refused", async () => {
  assert.deepEqual(
    await probe(localFlags("/tmp/x/default.sock", "/bin/true", "/tmp")),
    ALL_REFUSED,
  );
});

/** Pids of the relays (`shoal-kernel connect --session …` or `--socket …`) the facade `pid` runs. */
function relays(pid: number): number[] {
  return liveChildren(pid).filter((c) =>
    KERNEL_ENTRY.test(c.command) && c.command.includes(" connect --")
  ).map((c) => c.pid);
}

/** The text of a `shoal_exec` result, or the message of the error it was answered with. */
async function execText(client: Client, src: string): Promise<string> {
  try {
    const r = await client.callTool({ name: "shoal_exec", arguments: { src } });
    return (r.content as { text?: string }[])[0]?.text ?? JSON.stringify(r);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Why the release facade cannot reach a test kernel's socket here: only Linux puts the sandbox
 * below a release runtime root (/tmp). On macOS it lies below /private/var/folders and is named
 * explicitly (see DARWIN_RULE), and G-SOCK-10 would have the facade read /private and
 * /private/var, which the release flags do not grant; release.yml smoke-tests the macOS builds.
 */
const RELEASE_REACHES_SANDBOX = needsLinux("a test kernel's socket below a release runtime root");

hostTest(
  "M-PERM-3, M-START-3/4: the facade under exactly the release flags serves a live kernel through its relay; a kernel restart or a dead relay is a clear error, then it recovers",
  RELEASE_REACHES_SANDBOX,
  async () => {
    const kernel = await startKernel();
    const socket = kernel.socket;
    let again: TestKernel | null = null;
    const client = new Client({ name: "shoal-test", version: "0" });
    try {
      assert.ok(socket.startsWith("/tmp/"), "the sandbox lies under a release runtime root");
      const transport = releaseTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1" });
      await client.connect(transport);
      const facade = transport.pid!;
      assert.equal(await execText(client, "echo released"), "released");
      assert.equal(relays(facade).length, 1, "one relay carries the main connection");

      const inFlight = execText(client, "sleep 20");
      await delay(500);
      await kernel.stop();
      assert.match(await inFlight, /kernel disconnected$/);
      assert.match(
        await execText(client, "echo down"),
        new RegExp(`kernel unavailable: no kernel is listening on ${socket} \\(`),
      );
      again = await launchKernel(kernel.box, ["--socket", socket], socket);
      assert.equal(await execText(client, "echo back"), "back");

      const [relay] = relays(facade);
      const cut = execText(client, "sleep 20");
      await delay(500);
      Deno.kill(relay, "SIGKILL");
      assert.match(await cut, /kernel disconnected$/);
      assert.equal(await execText(client, "echo relayed again"), "relayed again");
      assert.equal(relays(facade).length, 1, "the dead relay was replaced, not added to");

      const last = relays(facade);
      await client.close();
      assert.ok(await waitUntil(() => !last.some(processLive), 10000), "no relay outlives it");
    } finally {
      await client.close();
      await again?.stop();
      await kernel.cleanup();
    }
  },
);

hostTest(
  "M-PERM-3, M-SUB-2..4: under the release flags a subscription gets its own relay, delivers kernel events, and unsubscribe ends that relay",
  RELEASE_REACHES_SANDBOX,
  async () => {
    const kernel = await startKernel();
    const client = new Client({ name: "shoal-test", version: "0" });
    const updates: unknown[] = [];
    client.fallbackNotificationHandler = (n) => {
      if (n.method === "notifications/resources/updated") updates.push(n.params?.payload);
      return Promise.resolve();
    };
    const publisher = await kernel.attach();
    try {
      const transport = releaseTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1" });
      await client.connect(transport);
      const facade = transport.pid!;
      const uri = "shoal://events/user.released";
      assert.deepEqual(await client.subscribeResource({ uri }), {});
      assert.equal(relays(facade).length, 2, "the main connection and the subscription's");
      await publisher.request("events.publish", { channel: "user.released", payload: { n: 1 } });
      assert.ok(await waitUntil(() => updates.length === 1, 10000), "the event arrived");
      assert.deepEqual(updates, [{ n: 1 }]);
      assert.deepEqual(await client.unsubscribeResource({ uri }), {});
      assert.ok(await waitUntil(() => relays(facade).length === 1, 10000), "its relay ended");
    } finally {
      await client.close();
      await kernel.cleanup();
    }
  },
);

Deno.test("M-PERM-2: the local run connects to its socket itself: no relay process", async () => {
  const kernel = await startKernel();
  const client = new Client({ name: "shoal-test", version: "0" });
  try {
    const transport = sdkTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1" });
    await client.connect(transport);
    assert.equal(await execText(client, "echo direct"), "direct");
    assert.deepEqual(childrenMentioning(transport.pid!, " connect "), []);
  } finally {
    await client.close();
    await kernel.cleanup();
  }
});

hostTest(
  "G-SOCK-10: the relay checks a discovered socket below the runtime root the facade checks it below (a runtime directory reached through a symlink works)",
  LINUX_SOCKET_RULE,
  async () => {
    const kernel = await startKernel();
    const client = new Client({ name: "shoal-test", version: "0" });
    try {
      const link = `${kernel.box.dir}/run-link`;
      await Deno.symlink(`${kernel.box.dir}/run`, link);
      await client.connect(
        releaseTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1", XDG_RUNTIME_DIR: link }),
      );
      assert.equal(await execText(client, "echo linked"), "linked");
    } finally {
      await client.close();
      await kernel.cleanup();
    }
  },
);

Deno.test({
  name:
    "M-PERM-3/M-SUB-2/E-2 a release facade's subscriptions hold a bounded share of memory [ignored: needs a SPEC decision: under the release flags every kernel connection is a relay process (M-PERM-3) and every subscription its own connection (M-SUB-2), so 16 subscriptions ran 17 relays of ~47 MiB each, 796 MiB in all (the checkout's deno-run stand-in for the compiled kernel), and the 64 E-2 allows would be ~3 GiB of processes any MCP client can start; one relay carrying several connections, subscriptions sharing a connection, or a lower release cap each change M-SUB-2 or E-2; Linux only, as the release tests above]",
  ignore: true,
  fn: async () => {
    const kernel = await startKernel();
    const client = new Client({ name: "shoal-test", version: "0" });
    try {
      const transport = releaseTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1" });
      await client.connect(transport);
      for (let i = 0; i < 16; i++) {
        assert.deepEqual(await client.subscribeResource({ uri: `shoal://events/user.r${i}` }), {});
      }
      const pids = relays(transport.pid!);
      const mib = pids.reduce((sum, pid) => sum + memoryKiB(pid).rss, 0) / 1024;
      assert.ok(mib < 256, `${pids.length} relays hold ${mib.toFixed(0)} MiB`);
    } finally {
      await client.close();
      await kernel.cleanup();
    }
  },
});
