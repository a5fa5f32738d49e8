/**
 * Why the stateful sequence of `exec_latency.ts` costs more than `echo hi` (issue 10): an exec
 * whose output is new stores two new CAS blobs (its stdout and its render, J-3), each a new file
 * and mostly a new fan-out directory, while `echo hi` finds both stored already. Times, in turns
 * on one autostarted kernel: the stateful sequence as the bench runs it, the same sequence with an
 * output that never changes, `echo hi`, and `echo <counter>` (new output, no state change); then
 * `Cas.put` of new and of stored bytes, with and without a full pool of blanks (the kernel's), and
 * what a new blob's file and directory cost, in a state directory of its own. `deno run -A scripts/bench/new_output.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { Cas } from "../../src/kernel/store/cas.ts";
import { Blanks } from "../../src/kernel/store/blanks.ts";
import { sdkTransport } from "../../tests/_support/facade.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { percentile } from "./percentile.ts";

const ROUNDS = 25;
const BLOCK = 20;

/** Prints the p50 and p95 of each row's samples (ms). */
function print(title: string, rows: Map<string, number[]>): void {
  console.log(title);
  for (const [label, samples] of rows) {
    samples.sort((a, b) => a - b);
    console.log(
      `${label.padEnd(40)} ${percentile(samples, 0.5).toFixed(3).padStart(7)}  ` +
        `${percentile(samples, 0.95).toFixed(3).padStart(7)}`,
    );
  }
}

/** Runs `work` and adds its time to the row `label`. */
async function timed(rows: Map<string, number[]>, label: string, work: () => unknown) {
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  rows.set(label, [...rows.get(label) ?? [], ms]);
}

const box = await sandbox();
const client = new Client({ name: "bench", version: "0" });
const rows = new Map<string, number[]>();
try {
  await client.connect(sdkTransport(box));
  await client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
  const [a, b, c] = await Promise.all([0, 1, 2].map(() => RpcConnection.connect(box.socket())));
  await a.request("session.attach", { session: "stateful" });
  await b.request("session.attach", { session: "stateful" });
  await c.request("session.attach", { session: "direct" });
  let i = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let j = 0; j < BLOCK / 2; j++, i++) {
      const [set, get] = i % 2 ? [a, b] : [b, a];
      await timed(
        rows,
        "stateful: export X=$i / echo $X",
        () => set.request("exec", { src: `export X=${i}` }),
      );
      await timed(
        rows,
        "stateful: export X=$i / echo $X",
        () => get.request("exec", { src: "echo $X" }),
      );
    }
    for (let j = 0; j < BLOCK / 2; j++, i++) {
      const [set, get] = i % 2 ? [a, b] : [b, a];
      await timed(
        rows,
        "stateful, output unchanged",
        () => set.request("exec", { src: `export X=${i}` }),
      );
      await timed(
        rows,
        "stateful, output unchanged",
        () => get.request("exec", { src: `test "$X" = ${i} && echo ok` }),
      );
    }
    for (let j = 0; j < BLOCK; j++) {
      await timed(rows, "echo hi", () => c.request("exec", { src: "echo hi" }));
    }
    for (let j = 0; j < BLOCK; j++, i++) {
      await timed(
        rows,
        "echo <counter> (new output)",
        () => c.request("exec", { src: `echo ${i}` }),
      );
    }
  }
  for (const conn of [a, b, c]) conn.close();
  print(`exec over the socket, ${ROUNDS} rounds in turns (ms)          p50      p95`, rows);
} finally {
  await client.close().catch(() => {});
  await box.cleanup();
}

const dir = await Deno.makeTempDir({ prefix: "shoal-new-output-" });
try {
  const cas = await Cas.open(dir);
  await Deno.mkdir(`${dir}/kernel`);
  const kernelCas = await Cas.open(`${dir}/kernel`);
  const blanks = Blanks.open(kernelCas.tmpDir);
  kernelCas.useBlanks(blanks);
  const encoder = new TextEncoder();
  const store = new Map<string, number[]>();
  for (let n = 0; n < 400; n++) {
    const bytes = encoder.encode(`${n}\n`);
    await timed(store, "Cas.put, new bytes", () => cas.put(bytes));
    await blanks.settled(); // as between two calls of an agent
    await timed(store, "Cas.put, new bytes, blanks ready", () => kernelCas.put(bytes));
    await timed(store, "Cas.put, stored bytes", () => cas.put(bytes));
    await timed(
      store,
      "a new file (create, write, close)",
      () => Deno.writeFileSync(`${dir}/tmp/f${n}`, bytes, { createNew: true, mode: 0o600 }),
    );
    await timed(store, "renaming it", () => Deno.renameSync(`${dir}/tmp/f${n}`, `${dir}/f${n}`));
    await timed(store, "a new directory", () => Deno.mkdirSync(`${dir}/d${n}`, { mode: 0o700 }));
  }
  await blanks.close();
  print("the content store, in a fresh state directory (ms)        p50      p95", store);
} finally {
  await Deno.remove(dir, { recursive: true });
}
