/**
 * The kernel's CPU time per back-to-back `exec` (issue 33), on a real kernel over its real socket:
 * `true` and `echo hi` by the local human and by a token agent in the bubblewrap sandbox, blocks of
 * {@link N} calls taking turns for {@link ROUNDS} rounds, the CPU time of the kernel's threads read
 * from /proc before and after each block (Linux only). Prints the median and the spread per row.
 * `BASE=<checkout>` starts a second kernel from another checkout (e.g. a `git worktree` of the
 * commit before a change), its rows taking turns with this one's, so a change's effect is measured
 * in one run under one load. `ONLY=<text>` keeps the rows whose label holds it. With
 * `PROF=<dir>` this checkout's kernel runs under deno with V8's `--prof` added to its flags (a tick
 * log in `<dir>` for `node --prof-process`); `FLAGS=<v8 flags>` replaces its flags (e.g. adding
 * `--perf-basic-prof`); `ATTACH=<command>` runs a command over the timed rounds with `{pid}` the
 * kernel's pid (e.g. `perf record -g -p {pid} -o <file>`, `strace -o <file> -p {pid}`).
 * `SPACING=<ms>` waits that long before each timed call, as an agent calls and then thinks: the
 * CPU an exec costs a kernel that idled meanwhile (caches gone cold) rather than one in a burst.
 */
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { createToken, writePolicy } from "../../tests/_support/principals.ts";
import { REPO, sandbox } from "../../tests/_support/sandbox.ts";
import { launchKernel, type TestKernel } from "../../tests/_support/kernel.ts";

const N = Number(Deno.env.get("N") ?? 400);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 5);
const PROF = Deno.env.get("PROF");
const ONLY = Deno.env.get("ONLY");
const BASE = Deno.env.get("BASE");
const ATTACH = Deno.env.get("ATTACH");
/** `NOPOLICY=1`: no policy file (a human alone, as before onboarding), and so no agent rows. */
const NOPOLICY = Deno.env.get("NOPOLICY") === "1";
/** `SPACING=<ms>`: a pause before each timed call (take a smaller `N`: a block lasts N pauses). */
const SPACING = Number(Deno.env.get("SPACING") ?? 0);

/**
 * The CPU time of every thread of `pid` now, in ms: /proc's schedstat counts nanoseconds, where
 * /proc/<pid>/stat counts 10 ms ticks, too coarse for blocks of a few hundred execs.
 */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/schedstat`).split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

/** A kernel of one checkout, with its human's and its sandboxed agent's connections. */
interface Subject {
  name: string;
  kernel: TestKernel;
  human: RpcConnection;
  agent: RpcConnection;
}

/** The launcher of this checkout's kernel: its own bin, or deno with other V8 flags. */
async function ownLauncher(): Promise<string[] | undefined> {
  if (PROF === undefined && Deno.env.get("FLAGS") === undefined) return undefined;
  const flags = Deno.env.get("FLAGS") ??
    (await Deno.readTextFile(`${REPO}/src/kernel/v8_flags`)).trim();
  const prof = PROF === undefined
    ? ""
    : `,--prof,--logfile=${PROF}/v8-%p.log,--no-logfile-per-isolate`;
  return [
    `${REPO}/scripts/deno.sh`,
    "run",
    "--quiet",
    "--allow-all",
    `--v8-flags=${flags}${prof}`,
    `--config=${REPO}/deno.json`,
    `${REPO}/src/kernel/main.ts`,
  ];
}

/** Starts a kernel with `launcher` in a sandbox of its own, an agent confined to `~/proj`. */
async function start(name: string, launcher?: string[]): Promise<Subject> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  if (!NOPOLICY) {
    await writePolicy(`${box.dir}/home/.config/shoal/leash.jsonc`, {
      "agent:bench": {
        fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
        proc_spawn: ["*"],
        auto_apply: "in-grant",
        sandbox: true,
      },
    });
  }
  const token = NOPOLICY ? null : (await createToken(box, "agent:bench", "bench")).secret;
  const kernel = await launchKernel(box, ["--socket", box.socket()], box.socket(), {}, launcher);
  const human = await kernel.attach("bench");
  await human.request("exec", { src: `cd ${proj}` });
  await human.request("session.attach", { session: "bench-agent" });
  await human.request("exec", { src: `cd ${proj}` });
  await human.request("session.attach", { session: "bench" });
  const agent = await RpcConnection.connect(kernel.socket);
  if (token !== null) await agent.request("session.attach", { session: "bench-agent", token });
  return { name, kernel, human, agent };
}

const subjects: Subject[] = [];
try {
  subjects.push(await start(BASE === undefined ? "" : "new ", await ownLauncher()));
  if (BASE !== undefined) subjects.push(await start("base ", [`${BASE}/bin/shoal-kernel`]));
  const rows: [string, Subject, RpcConnection, Record<string, unknown>][] = [];
  for (const [who, src] of [["human", "true"], ["human", "echo hi"], ["agent", "true"]]) {
    for (const s of subjects) {
      const label = `${s.name}${who} ${src}`;
      if ((ONLY === undefined || label.includes(ONLY)) && !(NOPOLICY && who === "agent")) {
        rows.push([label, s, who === "human" ? s.human : s.agent, { src }]);
      }
    }
  }
  for (const s of subjects) {
    // what shoal-mcp sends for a `shoal_exec` call: a task-backed exec in a budget slice (M-PROG-1)
    const label = `${s.name}human true, facade's params`;
    const params = { src: "true", mode: "run", position: "value", background: false };
    if (ONLY === undefined || label.includes(ONLY)) {
      rows.push([label, s, s.human, { ...params, timeout_ms: 30000 }]);
    }
  }
  for (const [, , conn, params] of rows) {
    for (let i = 0; i < 20; i++) await conn.request("exec", params);
  }
  const words = ATTACH?.split(" ").map((w) =>
    w.replace("{pid}", `${subjects[0].kernel.child.pid}`)
  );
  const attached = words === undefined
    ? null
    : new Deno.Command(words[0], { args: words.slice(1), stdout: "null", stderr: "null" }).spawn();
  if (attached !== null) await new Promise((resolve) => setTimeout(resolve, 1000));
  const got = new Map<string, number[]>();
  for (let r = 0; r < ROUNDS; r++) {
    // each round in another order, so no row always follows the same one
    const order = r % 2 === 0 ? rows : [...rows].reverse();
    for (const [label, s, conn, params] of order) {
      const before = cpuMs(s.kernel.child.pid);
      for (let i = 0; i < N; i++) {
        if (SPACING > 0) await new Promise((resolve) => setTimeout(resolve, SPACING));
        await conn.request("exec", params);
      }
      const list = got.get(label) ?? [];
      list.push((cpuMs(s.kernel.child.pid) - before) / N);
      got.set(label, list);
    }
  }
  if (attached !== null) {
    attached.kill("SIGINT");
    await attached.status;
  }
  const apart = SPACING > 0 ? `, ${SPACING} ms apart` : "";
  console.log(`kernel CPU ms per exec, ${ROUNDS} rounds of ${N}${apart} (median [min..max])`);
  for (const [label] of rows) {
    const s = [...got.get(label)!].sort((a, b) => a - b);
    const cell = (x: number) => x.toFixed(3);
    console.log(
      `${label.padEnd(34)} ${cell(s[s.length >> 1])} [${cell(s[0])}..${cell(s.at(-1)!)}]`,
    );
  }
  if (BASE !== undefined) {
    // the rounds' own ratios: a round's two blocks ran minutes apart at most, under one load
    console.log("new / base, the median of the rounds' ratios [min..max]");
    for (const [label] of rows.filter(([label]) => label.startsWith("new "))) {
      const ours = got.get(label)!;
      const theirs = got.get(label.replace(/^new /, "base "))!;
      const ratios = ours.map((x, i) => x / theirs[i]).sort((a, b) => a - b);
      const cell = (x: number) => x.toFixed(3);
      console.log(
        `${label.slice(4).padEnd(34)} ${cell(ratios[ratios.length >> 1])} ` +
          `[${cell(ratios[0])}..${cell(ratios.at(-1)!)}]`,
      );
    }
  }
} finally {
  for (const s of subjects) {
    s.human.close();
    s.agent.close();
    await s.kernel.cleanup();
  }
}
