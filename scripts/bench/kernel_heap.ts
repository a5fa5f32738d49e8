/**
 * The kernel's V8 flags side by side (issue 11, 33): for each variant, a fresh kernel (`deno run -A`
 * of src/kernel/main.ts, as bin/shoal-kernel runs it, with only the V8 flags changed) is attached
 * and runs one exec, then 1,000 execs of another source each that needs the bash parser, then one
 * exec printing 100 MB. Prints RSS idle after the first exec and after the 1,000 (once its idle work
 * ran: heap compaction, malloc trim), the peak during the first 200 of them over the first idle
 * figure, and the kernel's CPU time (user + system) for the 1,000 and for the big output, per
 * variant, alternating variants over {@link ROUNDS}.
 */
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { exec } from "../../tests/_support/exec.ts";
import { collectLines, spawnKernel } from "../../tests/_support/kernel.ts";
import { cpuMs, memoryKiB, resetPeak, rssBytes } from "../../tests/_support/proc.ts";
import { REPO, sandbox } from "../../tests/_support/sandbox.ts";
import { delay, waitUntil } from "../../tests/_support/wait.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 2);
const EXECS = 1000;
/** The execs whose peak RSS is read, as `memory.ts` reads it. */
const PEAK_EXECS = 200;
/** The flags bin/shoal-kernel runs the kernel with. */
const KERNEL_FLAGS = Deno.readTextFileSync(`${REPO}/src/kernel/v8_flags`).trim();
const VARIANTS: [string, string[]][] = [
  ["src/kernel/v8_flags (bin/shoal-kernel)", [`--v8-flags=${KERNEL_FLAGS}`]],
  ["with Sparkplug", [`--v8-flags=${KERNEL_FLAGS.replace(",--no-sparkplug", "")}`]],
  ["+ --no-maglev", [`--v8-flags=${KERNEL_FLAGS},--no-maglev`]],
  [
    "Sparkplug in place of Maglev",
    [`--v8-flags=${KERNEL_FLAGS.replace(",--no-sparkplug", "")},--no-maglev`],
  ],
];
/** How long a kernel is left idle before its RSS is read: its idle work runs 2-4 s after a burst. */
const SETTLE_MS = 5000;
const mib = (pid: number) => rssBytes(pid) / 2 ** 20;

async function measure(flags: string[]): Promise<number[]> {
  const box = await sandbox();
  const socket = box.socket();
  const child = spawnKernel(box, ["--socket", socket], {}, [
    Deno.execPath(),
    "run",
    "--quiet",
    "--allow-all",
    ...flags,
    `--config=${REPO}/deno.json`,
    `${REPO}/src/kernel/main.ts`,
  ]);
  const stderr: string[] = [];
  const reading = collectLines(child.stderr, stderr);
  let conn: RpcConnection | null = null;
  try {
    if (!await waitUntil(() => stderr.some((l) => l.includes("ready")), 30000)) {
      throw new Error(`kernel did not start: ${stderr.join("\n")}`);
    }
    conn = await RpcConnection.connect(socket);
    await conn.request("session.attach", {
      session: "default",
      token: null,
      client: { kind: "bench", tty: false },
    });
    await exec(conn, "true");
    await delay(SETTLE_MS);
    const idle = mib(child.pid);
    const c0 = cpuMs(child.pid);
    resetPeak(child.pid);
    let peak = 0;
    for (let i = 0; i < EXECS; i++) {
      await exec(conn, `echo "hi ${i}"`);
      if (i === PEAK_EXECS - 1) peak = memoryKiB(child.pid).hwm! / 1024 - idle;
    }
    const c1 = cpuMs(child.pid);
    await delay(SETTLE_MS);
    const after = mib(child.pid);
    await exec(conn, "head -c 100000000 /dev/zero | tr '\\0' a");
    const c2 = cpuMs(child.pid);
    return [idle, after, peak, c1 - c0, c2 - c1];
  } finally {
    conn?.close();
    child.kill("SIGTERM");
    await child.status;
    await reading;
    await box.cleanup();
  }
}

const results = VARIANTS.map(() => [] as number[][]);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, flags]] of VARIANTS.entries()) results[i].push(await measure(flags));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
console.log(`kernel V8 flags, median of ${ROUNDS} kernels each`);
console.log(
  `variant                                  RSS MiB idle: 1 exec ${EXECS} execs ` +
    `peak over idle (${PEAK_EXECS})  CPU ms: ${EXECS} execs  100 MB`,
);
for (const [i, [label]] of VARIANTS.entries()) {
  const col = (k: number) => median(results[i].map((r) => r[k]));
  console.log(
    `${label.padEnd(44)} ${col(0).toFixed(1).padStart(13)} ${col(1).toFixed(1).padStart(5)} ` +
      `${("+" + col(2).toFixed(1)).padStart(21)} ${col(3).toFixed(0).padStart(19)} ` +
      `${col(4).toFixed(0).padStart(7)}`,
  );
}
console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
