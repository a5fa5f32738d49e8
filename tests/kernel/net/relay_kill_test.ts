/**
 * A proxied sandbox's network relay (P-NET-1) against the agent's own processes: an agent that
 * ran `pkill -x perl` to clean up its scripts ended the relay (a perl process), and from then on
 * every connection of its sandbox, to the proxy and to a forwarded port, was refused until the
 * sandbox ended; one that kills the relay by name gets a fresh sandbox on its next run.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/**
 * Runs `body` with agent:n, granted the host's 127.0.0.1:`port` (a service answering `pong`),
 * in `~/proj` of session `work`; `connect` is bash source printing what that port sends.
 */
async function withForwardingAgent(
  body: (agent: RpcConnection, connect: string) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  const service = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const conn of service) {
      await conn.write(new TextEncoder().encode("pong\n")).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  const port = service.addr.port;
  let k: TestKernel | undefined;
  try {
    const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: [`127.0.0.1:${port}`] } };
    const token = (await createToken(box, "agent:n", "agent:n")).secret;
    k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    await exec(await k.attach("work"), `cd ${proj}`);
    const py = `python3 -c "import socket; ` +
      `print(socket.create_connection(('127.0.0.1', ${port}), 3).recv(10).decode(), end='')" 2>&1`;
    await body(await k.attach("work", token), `eval "$(echo ${btoa(py)} | base64 -d)"`);
  } finally {
    service.close();
    await serving;
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/**
 * Runs `src` as `agent` and checks that it succeeds printing `expected`; a failure names `step`
 * with the run's status, stdout and stderr (a failed run does not stop at its status).
 */
async function step(agent: RpcConnection, name: string, src: string, expected: string) {
  const value = (await exec(agent, src, { position: "value" })).value as Rec;
  const text = (v: unknown) => ((v as Rec | undefined)?.v ?? v) as string;
  const seen = {
    status: value.status,
    signal: value.signal,
    out: text(value.out),
    err: text(value.err),
  };
  assert.deepEqual(
    seen,
    { status: 0, signal: null, out: expected, err: "" },
    `step "${name}": ${JSON.stringify(seen)}`,
  );
}

hostTest(
  "P-NET-1 an agent's `pkill -x perl` leaves its sandbox's network relay running: a forwarded " +
    "port still answers on the next exec",
  NEEDS_TIER_B,
  () =>
    withForwardingAgent(async (agent, connect) => {
      await step(agent, "connect", connect, "pong\n");
      await step(agent, "pkill -x perl", "pkill -x perl; true", "");
      await step(agent, "connect after pkill", connect, "pong\n");
    }),
);

/**
 * Bash source sending `signal` to the sandbox's relay, found by its name, saying `signalled`; a
 * process that ended after the listing (the task's `sleep`) is passed over.
 */
const signalRelay = (signal: string) =>
  "for s in /proc/[0-9]*/stat; do { read -r l < $s; } 2>/dev/null || continue; " +
  `case $l in *"(shoal-net-relay)"*) p=\${s#/proc/}; kill -${signal} \${p%/stat}; ` +
  "echo signalled;; esac; done";
const KILL_RELAY = signalRelay("KILL");

hostTest(
  "P-NET-1 an agent that kills its sandbox's network relay gets a fresh sandbox on its next " +
    "exec, whose forwarded port answers",
  NEEDS_TIER_B,
  () =>
    withForwardingAgent(async (agent, connect) => {
      await step(agent, "connect", connect, "pong\n");
      await step(agent, "kill the relay", KILL_RELAY, "signalled\n");
      await step(agent, "connect in a fresh sandbox", connect, "pong\n");
    }),
);

hostTest(
  "P-NET-1 a background task going on in a sandbox whose network relay was killed runs to its " +
    "end, while the next exec gets a fresh sandbox whose forwarded port answers",
  NEEDS_TIER_B,
  () =>
    withForwardingAgent(async (agent, connect) => {
      const { task } = await exec(
        agent,
        "while [ ! -e stop ]; do sleep 0.05; done; echo task-done",
        { async: true },
      );
      await step(agent, "kill the relay", KILL_RELAY, "signalled\n");
      await step(agent, "connect in a fresh sandbox", connect, "pong\n");
      await step(agent, "stop the task", "touch stop", "");
      const done = await agent.request("task.await", { task, timeout_ms: 20000 }) as Rec;
      assert.equal(done.state, "completed");
      const value = (done.result as Rec).value as Rec;
      assert.deepEqual(value.out, { $: "str", v: "task-done\n" });
    }),
);

hostTest(
  "P-NET-1 an agent that stops its sandbox's network relay (SIGSTOP) gets a fresh sandbox on its " +
    "next exec, whose forwarded port answers (before: the stopped relay counted as running, and " +
    "every connection of the sandbox hung)",
  NEEDS_TIER_B,
  () =>
    withForwardingAgent(async (agent, connect) => {
      await step(agent, "connect", connect, "pong\n");
      await step(agent, "stop the relay", signalRelay("STOP"), "signalled\n");
      await step(agent, "connect in a fresh sandbox", connect, "pong\n");
    }),
);
