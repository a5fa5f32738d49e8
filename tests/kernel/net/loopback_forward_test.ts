/** P-NET-1's raw TCP exception: a loopback grant's port forwarded to the host's loopback. */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { screenWhenDone } from "../../_support/pty_screen.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** The port below 1024 the tests forward: the finger port, which nothing here serves. */
const LOW_PORT = 79;

/** Why this host cannot serve {@link LOW_PORT} on its loopback for the test, or null. */
function lowPortMissing(): string | null {
  try {
    Deno.listen({ hostname: "127.0.0.1", port: LOW_PORT }).close();
    return null;
  } catch (e) {
    return `needs to listen on 127.0.0.1:${LOW_PORT} on the host (${(e as Error).name})`;
  }
}

/**
 * Runs `body` with a kernel where agent:n, granted `<host>:<port>` alone, works in `~/proj` of
 * session `work`, and a host service on 127.0.0.1:`port` (by default {@link LOW_PORT}; 0: any
 * free one) answers `pong` to every connection; `body` gets the port served.
 */
async function withForwardedAgent(
  host: string,
  body: (agent: RpcConnection, port: number) => Promise<void>,
  port = LOW_PORT,
): Promise<void> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  const service = Deno.listen({ hostname: "127.0.0.1", port });
  const served = service.addr.port;
  const serving = (async () => {
    for await (const conn of service) {
      await conn.write(new TextEncoder().encode("pong\n")).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  let k: TestKernel | undefined;
  try {
    const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: [`${host}:${served}`] } };
    const token = (await createToken(box, "agent:n", "agent:n")).secret;
    k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    await exec(await k.attach("work"), `cd ${proj}`);
    await body(await k.attach("work", token), served);
  } finally {
    service.close();
    await serving;
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/** Runs `body` with agent:n granted `127.0.0.1:79` alone (see {@link withForwardedAgent}). */
function withLowPortAgent(body: (agent: RpcConnection) => Promise<void>): Promise<void> {
  return withForwardedAgent("127.0.0.1", body);
}

/** A python3 one-liner printing the first bytes 127.0.0.1:79 sends, as bash source. */
const CONNECT = `python3 -c "import socket; ` +
  `print(socket.create_connection(('127.0.0.1', ${LOW_PORT}), 3).recv(10).decode(), end='')" 2>&1`;

hostTest(
  "P-NET-1 a grant of a loopback port below 1024 (127.0.0.1:79) is forwarded as raw TCP like " +
    "any other: the sandbox's own namespace takes that port (its unprivileged floor lowered, " +
    "the host's untouched), so an exec's python connects to it and reads the host service",
  NEEDS_TIER_B ?? lowPortMissing(),
  () =>
    withLowPortAgent(async (agent) => {
      const floor = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_unprivileged_port_start");
      const r = await exec(agent, `eval "$(echo ${btoa(CONNECT)} | base64 -d)"`, {
        position: "value",
      });
      assert.equal(((r.value as Rec).out as Rec).v, "pong\n");
      assert.equal(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_unprivileged_port_start"), floor);
    }),
);

hostTest(
  "P-NET-1 a PTY program of a principal granted 127.0.0.1:79 reaches that port as an exec does",
  NEEDS_TIER_B ?? lowPortMissing(),
  () =>
    withLowPortAgent(async (agent) => {
      const script = `${CONNECT}; echo; echo done; sleep 30`;
      const opened = await agent.request("pty.open", { cmd: "bash", args: ["-c", script] }) as Rec;
      const screen = await screenWhenDone(agent, opened.pty_id);
      await agent.request("pty.close", { pty_id: opened.pty_id });
      assert.deepEqual(screen.filter((row) => /^(pong|done)/.test(row)), ["pong", "done"]);
    }),
);

hostTest(
  "P-NET-1 a grant of localhost:P is forwarded on both loopback addresses of the namespace: a " +
    "client that reaches localhost as ::1 (as one resolving it to ::1 first does) gets the host " +
    "service as one reaching 127.0.0.1 does, not a refused connection",
  NEEDS_TIER_B,
  () =>
    withForwardedAgent("localhost", async (agent, port) => {
      const read = (address: string) =>
        `python3 -c "import socket; print(socket.create_connection(('${address}', ${port}), 3)` +
        `.recv(10).decode(), end='')" 2>&1 | tail -1`;
      const r = await exec(agent, `${read("::1")}; ${read("127.0.0.1")}`, {
        position: "value",
      });
      assert.equal(((r.value as Rec).out as Rec).v, "pong\npong\n");
    }, 0),
);
