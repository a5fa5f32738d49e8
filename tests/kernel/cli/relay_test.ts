/** `shoal-kernel connect`: the relay a facade without `net` permission reaches the kernel through (M-PERM-3). */
import assert from "node:assert/strict";
import { ConnectionClosedError } from "../../../src/protocol/rpc_client.ts";
import { connectThroughRelay, RelayConnectError } from "../../../src/mcp/relay.ts";
import { kernelTest } from "../../_support/kernel.ts";
import { kernelCli } from "../../_support/principals.ts";
import { pidsMentioning } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

/** Pids of relays to `socket` (the relay's command line names its subcommand and socket). */
function relays(socket: string): number[] {
  return pidsMentioning(`connect --socket ${socket}`);
}

kernelTest(
  "connect relays the framed stream both ways and exits when its stdin closes",
  async (k) => {
    const conn = await connectThroughRelay(KERNEL_BIN, k.socket, null, null);
    try {
      await conn.request("session.attach", { session: "default", token: null, client: {} });
      const run = await conn.request("exec", { src: "echo relayed" }) as { value: Rec };
      assert.deepEqual(run.value.out, { $: "str", v: "relayed\n" });
      assert.equal(relays(k.socket).length, 1);
    } finally {
      conn.close();
    }
    assert.ok(await waitUntil(() => relays(k.socket).length === 0, 10000), "the relay exited");
  },
);

kernelTest(
  "connect ends when the kernel goes away: in-flight requests fail as a closed connection",
  async (k) => {
    const conn = await connectThroughRelay(KERNEL_BIN, k.socket, null, null);
    try {
      await conn.request("session.attach", { session: "default", token: null, client: {} });
      const dropped = conn.request("exec", { src: "sleep 20" }).catch((e) => e);
      await delay(300);
      await k.stop();
      assert.ok(await dropped instanceof ConnectionClosedError);
      assert.ok(await waitUntil(() => relays(k.socket).length === 0, 10000), "the relay exited");
    } finally {
      conn.close();
    }
  },
);

Deno.test("connect with nothing listening exits 4 naming the socket; the facade may then autostart", async () => {
  const box = await sandbox();
  try {
    const socket = `${box.dir}/run/none.sock`;
    const run = await kernelCli(box, ["connect", "--socket", socket]);
    assert.equal(run.code, 4, run.stderr);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, new RegExp(`^shoal-kernel: no kernel is listening on ${socket} \\(`));
    const refused = await connectThroughRelay(KERNEL_BIN, socket, null, null).catch((e) => e);
    assert.ok(refused instanceof RelayConnectError && refused.unreachable, String(refused));
    assert.match(refused.message, new RegExp(`^no kernel is listening on ${socket} \\(`));
  } finally {
    await box.cleanup();
  }
});

Deno.test("G-SOCK-10: connect refuses a socket in a directory others may write, exits 1 and never connects", async () => {
  const box = await sandbox();
  const open = `${box.dir}/open`;
  await Deno.mkdir(open);
  await Deno.chmod(open, 0o777);
  const socket = `${open}/k.sock`;
  const listener = Deno.listen({ transport: "unix", path: socket });
  let accepted = 0;
  const accepting = (async () => {
    for await (const c of listener) {
      accepted++;
      c.close();
    }
  })();
  try {
    const run = await kernelCli(box, ["connect", "--socket", socket]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`untrusted socket path: ${open} .*writable by others`));
    const refused = await connectThroughRelay(KERNEL_BIN, socket, null, null).catch((e) => e);
    assert.ok(refused instanceof RelayConnectError && !refused.unreachable, String(refused));
    assert.match(refused.message, /untrusted socket path/);
    assert.equal(accepted, 0);
  } finally {
    listener.close();
    await accepting;
    await box.cleanup();
  }
});

Deno.test("connect rejects operands and unknown options as usage errors (exit 2)", async () => {
  const box = await sandbox();
  try {
    for (const args of [["connect", "extra"], ["connect", "--bogus"]]) {
      const run = await kernelCli(box, args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /shoal-kernel connect \[--socket PATH\]/);
    }
  } finally {
    await box.cleanup();
  }
});
