/**
 * A long day of use in a few minutes (probe41): one kernel on its own socket and state directory,
 * driven for {@link ROUNDS} rounds by the local human and two agents (one sandboxed in `~/proj`,
 * one whose irreversible work needs approval). Each round: 30 small execs as the human and 10 as
 * the sandboxed agent, a 3 MB output read back by `value.get` and `blob.get` pages, four tasks
 * (one cancelled, all awaited), a PTY opened, written, read and closed, five new sessions whose
 * client vanishes mid-exec after subscribing, a plan requested and approved and one denied,
 * reads of the journal and the durable channels, a 2,000-row JSON table and a user event.
 * Prints, every {@link EVERY} rounds and once idle, what must stay bounded: the kernel's RSS and
 * peak, threads, open fds, child processes (zombies apart), the files and bytes of the state
 * directory's `tmp/` and `cas/`, and the sizes of `journal.db` and its WAL. Sessions reach the
 * quota (64) by round 13 and are reclaimed from then on, so every figure but `cas` and the
 * journal (no garbage collection, J-4) should level off. `deno run -A scripts/bench/day_soak.ts`.
 */
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { exec } from "../../tests/_support/exec.ts";
import { startKernelWithPolicy } from "../../tests/_support/kernel.ts";
import { createToken, PROJECT_AGENT } from "../../tests/_support/principals.ts";
import type { Rec } from "../../tests/_support/rec.ts";
import { delay } from "../../tests/_support/wait.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 60);
const EVERY = 10;
/** Any path, but irreversible work needs the human's approval. */
const APPROVING_AGENT = {
  fs: { read: ["/**"], write: ["/**"], delete: ["/**"] },
  proc_spawn: ["*"],
  session_write: true,
  auto_apply: "reversible",
  opaque: "ask",
};

const k = await startKernelWithPolicy({ "agent:s": PROJECT_AGENT, "agent:a": APPROVING_AGENT });
const pid = k.child.pid;
const state = `${k.box.dir}/state/shoal`;
const scratch = `${k.box.dir}/scratch`;

/** Files below `dir` and their bytes. */
function tree(dir: string): { files: number; bytes: number } {
  let files = 0, bytes = 0;
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      const below = tree(path);
      files += below.files;
      bytes += below.bytes;
    } else {
      files++;
      bytes += Deno.lstatSync(path).size;
    }
  }
  return { files, bytes };
}

function sizeOf(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** The kernel's children: all, and zombies. */
function children(): { live: number; zombies: number } {
  const out = new Deno.Command("ps", { args: ["-A", "-o", "ppid=,stat="] }).outputSync();
  const rows = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) =>
    l.trim().split(/\s+/)
  )
    .filter(([ppid]) => Number(ppid) === pid);
  const zombies = rows.filter(([, stat]) => stat.startsWith("Z")).length;
  return { live: rows.length - zombies, zombies };
}

function sample(round: number | string): void {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)![1]);
  const tmp = tree(`${state}/tmp`);
  const cas = tree(`${state}/cas`);
  const kids = children();
  console.log(
    [
      `round ${String(round).padStart(4)}`,
      `rss ${field("VmRSS") >> 10} MiB (peak ${field("VmHWM") >> 10})`,
      `threads ${field("Threads")}`,
      `fds ${[...Deno.readDirSync(`/proc/${pid}/fd`)].length}`,
      `children ${kids.live} (zombies ${kids.zombies})`,
      `tmp ${tmp.files} files ${(tmp.bytes / 1024).toFixed(0)} KiB`,
      `cas ${cas.files} blobs ${(cas.bytes / 2 ** 20).toFixed(1)} MiB`,
      `journal ${(sizeOf(`${state}/journal.db`) / 2 ** 20).toFixed(1)} MiB`,
      `wal ${(sizeOf(`${state}/journal.db-wal`) / 2 ** 20).toFixed(1)} MiB`,
    ].join(" | "),
  );
}

/** A plan of `agent` for `src`, as its approval_required refusal names it (K-EXEC-2). */
async function planOf(agent: RpcConnection, src: string): Promise<string> {
  const refused = await exec(agent, src).then(() => null, (e) => e);
  const ref = (refused?.data as Rec | undefined)?.plan_ref;
  if (typeof ref !== "string") throw new Error(`no plan for ${src}: ${refused}`);
  await agent.request("cap.request", { plan_ref: ref });
  return ref;
}

async function round(
  r: number,
  human: RpcConnection,
  sandboxed: RpcConnection,
  asking: RpcConnection,
) {
  for (let i = 0; i < 30; i++) await exec(human, `echo ${r}-${i}`);
  for (let i = 0; i < 10; i++) await exec(sandboxed, `echo ${i} > f${i}; cat f${i}`);
  const big = await exec(human, "head -c 3000000 /dev/zero | tr '\\0' x");
  await human.request("value.get", { ref: big.ref, path: "out", format: "raw", offset: 65536 });
  const [row] = await human.request("journal.query", { limit: 1, head: "head" }) as Rec[];
  const hash = (row.outputs as Rec[])[0].hash;
  await human.request("blob.get", { hash, offset: 1_000_000, length: 65536 });
  const tasks: unknown[] = [];
  for (let i = 0; i < 4; i++) {
    tasks.push((await exec(human, `sleep 0.${i + 1}`, { background: true })).task);
  }
  await human.request("task.cancel", { task: tasks[3] });
  for (const task of tasks) await human.request("task.await", { task, timeout_ms: 5000 });
  const pty = await human.request("pty.open", { cmd: "cat" }) as Rec;
  await human.request("pty.send", { pty_id: pty.pty_id, input: "hello\n" });
  await human.request("pty.read", { pty_id: pty.pty_id });
  await human.request("pty.close", { pty_id: pty.pty_id });
  for (let i = 0; i < 5; i++) {
    const gone = await k.attach(`s${r}-${i}`);
    await exec(gone, "echo hi");
    await gone.request("events.subscribe", { channel: "journal" });
    const running = exec(gone, "sleep 3").catch(() => {});
    await delay(20);
    gone.close();
    await running;
  }
  const approved = await planOf(asking, `touch ${scratch}/a${r}`);
  await human.request("approval.grant", { plan_ref: approved });
  await asking.request("plan.apply", { plan_ref: approved });
  await human.request("approval.deny", {
    plan_ref: await planOf(asking, `touch ${scratch}/d${r}`),
  });
  await human.request("journal.query", { limit: 50, ok: true });
  await human.request("events.read", { channel: "journal", since: 0, limit: 100 });
  await human.request("events.read", { channel: "session.transcript", limit: 100 });
  await exec(human, `python3 -c 'import json; print(json.dumps([{"a": i} for i in range(2000)]))'`);
  await human.request("events.publish", { channel: "user.soak", payload: { r } });
}

try {
  await Deno.mkdir(`${k.box.dir}/home/proj`, { recursive: true });
  await Deno.mkdir(scratch);
  const inProject = await k.attach("sandboxed");
  await exec(inProject, "cd ~/proj");
  inProject.close();
  const human = await k.attach("human");
  const sandboxed = await k.attach("sandboxed", (await createToken(k.box, "agent:s")).secret);
  const asking = await k.attach("asking", (await createToken(k.box, "agent:a")).secret);
  sample(0);
  for (let r = 1; r <= ROUNDS; r++) {
    await round(r, human, sandboxed, asking);
    if (r % EVERY === 0) sample(r);
  }
  await delay(6000); // the kernel's idle trim (daemon/idle_trim.ts) gives free heap pages back
  sample("idle");
} finally {
  await k.cleanup();
}
