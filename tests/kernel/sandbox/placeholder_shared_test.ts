/**
 * Two kernels (two state directories, as two clients' kernels have) whose agents work in one
 * project: a placeholder of kernel A that B's sandbox binds when A's sandbox ends (B took it for
 * an existing protected name) lingers, and goes once B's sandbox has ended too (P-SBX-6): while A
 * runs, and when A stops.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, dirAgent, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { isBwrapCommand, kernelPid, liveChildren } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

/** The names in `dir`, sorted. */
function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

/** The sandboxes (bwrap processes) kernel `k` runs now. */
function sandboxes(k: TestKernel): number[] {
  return liveChildren(k.child.pid).filter((c) => isBwrapCommand(c.command)).map((c) => c.pid);
}

/** A shell command that waits until file `go` exists. */
const waitFor = (go: string) => `until [ -e ${go} ]; do sleep 0.05; done`;

/** The files the test's runs make in the project. */
const MARKS = ["a-up", "b-up", "go-a", "go-b"];

/**
 * Kernels A (agent `~/proj/**`) and B (agent granted A's `proj`), their agents attached in `proj`:
 * `holdA`, given A's agent, starts a sandbox of A's (its placeholders made when it resolves, to
 * what ends that sandbox); then B's agent runs in a sandbox that takes them for the project's
 * names, and `body` gets what ends A's sandbox and what ends B's (B's kernel stopped).
 */
async function withTwoKernels(
  holdA: (a: TestKernel, agent: RpcConnection, proj: string) => Promise<() => Promise<void>>,
  body: (
    a: TestKernel,
    proj: string,
    endA: () => Promise<void>,
    endB: () => Promise<void>,
  ) => Promise<void>,
): Promise<void> {
  const boxA = await sandbox();
  const boxB = await sandbox();
  const proj = `${boxA.dir}/home/proj`;
  await Deno.mkdir(proj, { recursive: true });
  const tokenA = (await createToken(boxA, "agent:a", "a")).secret;
  const tokenB = (await createToken(boxB, "agent:b", "b")).secret;
  let a: TestKernel | null = null;
  let b: TestKernel | null = null;
  try {
    a = await startKernel(
      ["--policy", await writePolicy(boxA, { "agent:a": PROJECT_AGENT })],
      boxA,
    );
    b = await startKernel(
      ["--policy", await writePolicy(boxB, { "agent:b": dirAgent(proj) })],
      boxB,
    );
    for (const k of [a, b]) await exec(await k.attach("work"), `cd ${proj}`);
    const endA = await holdA(a, await a.attach("work", tokenA), proj);
    assert.ok(names(proj).includes(".vscode"), `A's placeholders: ${names(proj)}`);
    const agentB = await b.attach("work", tokenB);
    const runB = exec(agentB, `touch b-up; ${waitFor("go-b")}`).catch((e) => e);
    assert.ok(await waitUntil(() => names(proj).includes("b-up"), 10_000), "B's run runs");
    const kb = b;
    await body(a, proj, endA, async () => {
      Deno.writeTextFileSync(`${proj}/go-b`, "");
      assert.equal(((await runB) as Rec).ok, undefined); // an outcome, not an error
      // B's sandbox lives on with the session's warm shell (a minute): it ends with B's kernel
      await kb.stop();
    });
  } finally {
    // B first: its sandbox binds A's placeholders, in A's box
    await (b === null ? boxB.cleanup() : b.cleanup());
    await (a === null ? boxA.cleanup() : a.cleanup());
  }
}

hostTest(
  "P-SBX-6 a placeholder of kernel A that kernel B's sandbox bound when A's sandbox ended goes once B's sandbox has ended too, while A still runs: it stayed in the project (.vscode/, .gitmodules/, …) until A ran another sandbox or a kernel started again on A's state directory",
  NEEDS_TIER_B,
  () =>
    withTwoKernels(
      async (a) => {
        // the warm shell of the agent's attachment has its sandbox (resident) up
        assert.ok(await waitUntil(() => sandboxes(a).length === 1, 10_000), "A's sandbox");
        return () => {
          // what its end after a minute idle does, at once: nothing starts another
          for (const pid of sandboxes(a)) Deno.kill(pid, "SIGKILL");
          return Promise.resolve();
        };
      },
      async (a, proj, endA, endB) => {
        await endA();
        assert.ok(await waitUntil(() => sandboxes(a).length === 0, 10_000), "A's sandbox ended");
        await delay(500); // its release, which finds B's sandbox binding its placeholders
        assert.ok(names(proj).includes(".vscode"), "removed under B's sandbox");
        await endB();
        const gone = await waitUntil(() => names(proj).every((n) => MARKS.includes(n)), 10_000);
        assert.ok(gone, `left in the project: ${names(proj)}`);
      },
    ),
);

hostTest(
  "P-SBX-6 placeholders of kernel A that kernel B's sandbox bound when A's sandbox ended are gone once both kernels have stopped: A's next sandbox took them for the project's own names and held none, and they stayed in the project until a kernel started again on A's state directory",
  NEEDS_TIER_B,
  () =>
    withTwoKernels(
      async (_a, agent, proj) => {
        // the run's `kill -KILL -1` ends its sandbox (its launcher too)
        exec(agent, `touch a-up; ${waitFor("go-a")}; kill -KILL -1`).catch(() => {});
        assert.ok(await waitUntil(() => names(proj).includes("a-up"), 10_000), "A's run runs");
        return () => {
          Deno.writeTextFileSync(`${proj}/go-a`, "");
          return Promise.resolve();
        };
      },
      async (a, proj, endA, endB) => {
        const [first] = sandboxes(a);
        await endA();
        assert.ok(await waitUntil(() => !sandboxes(a).includes(first), 10_000), "A's ended");
        await delay(500); // its release, which finds B's sandbox binding its placeholders
        assert.ok(names(proj).includes(".vscode"), "removed under B's sandbox");
        await endB();
        await a.stop();
        assert.deepEqual(names(proj).filter((n) => !MARKS.includes(n)), []);
      },
    ),
);

hostTest(
  "P-SBX-6 placeholders that a SIGKILLed kernel A left and kernel B's sandbox bound when A started again go once B's sandbox has ended, while A still runs: the restarted kernel looked at them only when it started, and they stayed until its next start",
  NEEDS_TIER_B,
  () =>
    withTwoKernels(
      async (a) => {
        assert.ok(await waitUntil(() => sandboxes(a).length === 1, 10_000), "A's sandbox");
        return async () => {
          Deno.kill(kernelPid(a.socket), "SIGKILL");
          await a.child.status;
        };
      },
      async (a, proj, endA, endB) => {
        await endA();
        const policy = await writePolicy(a.box, { "agent:a": PROJECT_AGENT });
        const again = await startKernel(["--policy", policy], a.box);
        try {
          assert.ok(names(proj).includes(".vscode"), "left to B's sandbox, which binds them");
          await endB();
          const gone = await waitUntil(() => names(proj).every((n) => MARKS.includes(n)), 10_000);
          assert.ok(gone, `left in the project: ${names(proj)}`);
        } finally {
          await again.stop();
        }
      },
    ),
);
