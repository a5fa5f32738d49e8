/**
 * What the proxy (P-NET-1) keeps for a sandbox once that sandbox has ended: neither its socket
 * nor the connections it relayed for it.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { isBwrapCommand, liveChildren } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** The TCP sockets process `pid` holds open to `127.0.0.2:port` (in any state). */
function socketsTo(pid: number, port: number): number {
  const out = new Deno.Command("ss", { args: ["-tnpH", `dst 127.0.0.2:${port}`] }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(`pid=${pid},`)).length;
}

/** Opens N (default 5) CONNECT tunnels through the proxy (its loopback listener, 3128), exits. */
const TUNNELS = String.raw`
import socket, sys
port = int(sys.argv[1])
held = []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT 127.0.0.2:%d HTTP/1.1\r\nHost: x\r\n\r\n" % port)
    print(s.recv(100).split(b"\r\n")[0].decode())
    held.append(s)
`;

hostTest(
  "P-NET-1 the connections the proxy relayed for a sandbox are closed when that sandbox has ended and its proxy socket is gone, not kept open to their destination until the 10-minute idle limit (counted against the principal's share)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    // a destination that accepts and then says nothing, and never closes on its own
    const listener = Deno.listen({ hostname: "127.0.0.2", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of listener) held.push(conn);
    })().catch(() => {});
    const { secret } = await createToken(box, "agent:a", "agent:a");
    const policy = await writePolicy(box, {
      "agent:a": { ...PROJECT_AGENT, net_connect: [`127.0.0.2:${port}`] },
    });
    const k = await startKernel(["--policy", policy], box);
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      await Deno.writeTextFile(`${proj}/tunnels.py`, TUNNELS);
      const r = await exec(agent, `python3 tunnels.py ${port}`, { position: "value" }) as Rec;
      const out = (r.value as Rec).out as Rec;
      assert.equal(out.v, "HTTP/1.1 200 Connection Established\n".repeat(5), JSON.stringify(r));
      assert.equal(held.length, 5);
      assert.equal(socketsTo(k.child.pid, port), 5, "the proxy holds the five upstreams");
      // the agent's sandbox ends (its resident killed): nothing of it can use them any more
      const tmp = `${box.dir}/state/shoal/tmp`;
      const proxySockets = () =>
        [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("net-")).length;
      for (const child of liveChildren(k.child.pid)) {
        if (isBwrapCommand(child.command)) Deno.kill(child.pid, "SIGKILL");
      }
      assert.ok(await waitUntil(() => proxySockets() === 0, 10_000), "its proxy socket went");
      assert.ok(
        await waitUntil(() => socketsTo(k.child.pid, port) === 0, 10_000),
        `the kernel still holds ${socketsTo(k.child.pid, port)} connections to the destination`,
      );
    } finally {
      await k.cleanup();
      listener.close();
      for (const conn of held) conn.close();
      await accepting;
    }
  },
);

Deno.test({
  name:
    "P-NET-1 the tunnels a finished run left half-open to a destination that says nothing do not keep the principal from the network: after a run that opened 130 and exited, its next run reaches another granted destination [ignored: defect found by the probe round; needs a SPEC decision: P-NET-1 says nothing of how long a relayed connection outlives the run that opened it. A client's exit reads as a half-close, which the proxy keeps open for clients that half-close and wait (tested: 8 clients each get back what they sent), so such tunnels count against the principal's 128 until the 10-minute idle limit and its next curl gets the proxy's 503 'agent:a holds 128 proxy connections at once, its limit'; closing on a client's EOF (Squid's default) would break those clients]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const listener = Deno.listen({ hostname: "127.0.0.2", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of listener) held.push(conn);
    })().catch(() => {});
    const http = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      () => new Response("hello\n"),
    );
    const { secret } = await createToken(box, "agent:a", "agent:a");
    const policy = await writePolicy(box, {
      "agent:a": {
        ...PROJECT_AGENT,
        net_connect: [`127.0.0.2:${port}`, `127.0.0.2:${http.addr.port}`],
      },
    });
    const k = await startKernel(["--policy", policy], box);
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      await Deno.writeTextFile(`${proj}/tunnels.py`, TUNNELS);
      const opened = await exec(agent, `python3 tunnels.py ${port} 130 | sort | uniq -c`, {
        position: "value",
      }) as Rec;
      assert.match(String(((opened.value as Rec).out as Rec).v), /Connection Established/);
      const r = await exec(agent, `curl -sS --max-time 10 http://127.0.0.2:${http.addr.port}/`, {
        position: "value",
      }) as Rec;
      const outcome = r.value as Rec;
      assert.deepEqual([(outcome.out as Rec).v, (outcome.err as Rec).v], ["hello\n", ""]);
    } finally {
      await k.cleanup();
      listener.close();
      for (const conn of held) conn.close();
      await accepting;
      await http.shutdown();
    }
  },
});
