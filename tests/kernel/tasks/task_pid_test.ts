/**
 * K-TASK-1 / P-SBX-4: every task anyone can see carries its pid (issue 13, defect 1). The async
 * reply, `task.get`, `task.list` and the handler of each `task.N` event never see `pid: null`,
 * and the pid is the outcome's pid — for warm, cold and sandboxed runs.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { startKernel, startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { dirAgent } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/** Tasks each test starts; every one finishes on its own within a second. */
const TASKS = 40;

/**
 * Sources mixing warm starts, cold starts after a state change, and quick and slower runs, in a
 * session whose cwd is `home`.
 */
function sources(home: string): string[] {
  return ["true", "sleep 0.2", "cd /usr", "X=$RANDOM", "exit 3", `cd ${home}`];
}

/** What one observer saw: every record, with where it came from. */
type Seen = { where: string; rec: Rec }[];

/**
 * Launches {@link TASKS} async execs on `runner` (in batches, each reply followed at once by a
 * `task.get`), while `watcher` lists the session's tasks in a loop and gets each task as soon as
 * one of its events arrives. Returns every record seen and each task's outcome pid.
 */
async function launchAndWatch(
  runner: RpcConnection,
  watcher: RpcConnection,
  home = "/tmp",
): Promise<{ seen: Seen; outcomePids: Map<string, number> }> {
  const seen: Seen = [];
  const lookups: Promise<unknown>[] = [];
  watcher.onNotification = (method, params) => {
    if (method !== "event" || !String(params.channel).startsWith("task.")) return;
    const task = (params.payload as Rec).task as string;
    lookups.push(
      watcher.request("task.get", { task }).then((rec) =>
        seen.push({ where: `event ${JSON.stringify(params.payload)}`, rec: rec as Rec })
      ),
    );
  };
  const first = Number(
    ((await exec(runner, "true", { async: true })).task as string).slice("task:".length),
  );
  for (let n = first + 1; n <= first + TASKS; n++) {
    await watcher.request("events.subscribe", { channel: `task.${n}`, since: -1 });
  }
  let launching = true;
  const listing = (async () => {
    while (launching) {
      for (const rec of await watcher.request("task.list", {}) as Rec[]) {
        seen.push({ where: "task.list", rec });
      }
    }
  })();
  // a failure below ends the test, whose cleanup closes the connection under this loop: the
  // failure is what the test reports, not the loop's closed connection
  listing.catch(() => {});
  const tasks: string[] = [];
  for (let i = 0; i < TASKS; i += 4) {
    await Promise.all([0, 1, 2, 3].map(async (j) => {
      const src = sources(home)[(i + j) % sources(home).length];
      const task = (await exec(runner, src, { async: true })).task as string;
      seen.push({
        where: `task.get after ${src}`,
        rec: await runner.request("task.get", { task }) as Rec,
      });
      tasks.push(task);
    }));
  }
  const outcomePids = new Map<string, number>();
  for (const task of tasks) {
    const done = await runner.request("task.await", { task, timeout_ms: 30000 }) as Rec;
    assert.equal(done.timed_out, false, task);
    seen.push({ where: "task.await", rec: done });
    const value = await runner.request("value.get", {
      ref: done.result_ref,
      path: "pid",
    }) as Rec;
    outcomePids.set(task, (value.value as Rec).v as number);
  }
  launching = false;
  await listing;
  await Promise.all(lookups);
  return { seen, outcomePids };
}

/** Every record carries a positive integer pid, the one of its task's outcome. */
function assertPids(seen: Seen, outcomePids: Map<string, number>): void {
  let checked = 0;
  for (const { where, rec } of seen) {
    const expected = outcomePids.get(rec.task as string);
    if (expected === undefined) continue; // the first probe task
    assert.ok(
      Number.isInteger(rec.pid) && (rec.pid as number) > 0,
      `${where}: ${JSON.stringify(rec)}`,
    );
    assert.equal(rec.pid, expected, `${where}: pid is the outcome's pid`);
    checked++;
  }
  assert.ok(checked >= 2 * TASKS, `only ${checked} records checked`);
}

Deno.test("K-TASK-1 an async task is never visible without its pid: reply, task.get, task.list, events, outcome", async () => {
  const k: TestKernel = await startKernel();
  try {
    const { seen, outcomePids } = await launchAndWatch(await k.attach(), await k.attach());
    assertPids(seen, outcomePids);
  } finally {
    await k.cleanup();
  }
});

Deno.test("P-SBX-4 a sandboxed async task carries the host pid of its top process everywhere", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:p", (box) => dirAgent(box.dir));
  try {
    // The kernel's own directory is hidden from the sandbox: the session starts in its own.
    await exec(await k.attach("work"), `cd ${k.box.dir}`);
    const runner = await k.connect();
    const attached = await runner.request("session.attach", { session: "work", token }) as Rec;
    assert.equal((attached.caps as Rec).enforced, true, "the agent runs inside bubblewrap");
    const { seen, outcomePids } = await launchAndWatch(
      runner,
      await k.attach("work", token),
      k.box.dir,
    );
    assertPids(seen, outcomePids);
  } finally {
    await k.cleanup();
  }
});
