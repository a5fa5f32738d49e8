// Issue 33: a session's older transcript values keep their output in the CAS, not in memory, and
// answer as they did when new (V-REF-1, V-ELIDE-7).
import assert from "node:assert/strict";
import { kernelGrowthMiB, kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";

/** An exec printing `i` and ~60 KB of text: more than 70 of them pass the transcript's budget. */
const sixtyKB = (i: number) => `echo ${i}; head -c 60000 /dev/zero | tr '\\0' y`;

/** What value.get answers for `ref`: whole, by path, sliced, rendered and raw. */
function reads(conn: RpcConnection, ref: string) {
  return Promise.all([
    conn.request("value.get", { ref }),
    conn.request("value.get", { ref, path: "stdout" }),
    conn.request("value.get", { ref, path: "err" }),
    conn.request("value.get", { ref, path: "out", slice: [1, 3] }),
    conn.request("value.get", { ref, format: "render" }),
    conn.request("value.get", { ref, path: "stdout", format: "raw", offset: 2 }),
  ]);
}

kernelTest(
  "V-REF-1 values spilled to the CAS answer value.get as they did when new: str, JSON, bytes and stderr",
  async (k) => {
    const conn = await k.attach();
    const sources = [
      sixtyKB(0),
      `python3 -c 'import json; print(json.dumps([{"n": i, "s": "x" * 20} for i in range(100)]))'`,
      "head -c 3000 /dev/zero | tr '\\0' '\\377'",
      "echo out; head -c 2000 /dev/zero | tr '\\0' e >&2; false",
      `printf '%s' "$(head -c 300 /dev/zero | tr '\\0' z)"; echo " (long command ${
        "c".repeat(400)
      })"`,
    ];
    const refs: string[] = [];
    for (const src of sources) {
      refs.push((await exec(conn, src, { position: "value" })).ref as string);
    }
    const fresh = await Promise.all(refs.map((ref) => reads(conn, ref)));
    for (let i = 1; i <= 100; i++) await exec(conn, sixtyKB(i));
    const spilled = await Promise.all(refs.map((ref) => reads(conn, ref)));
    assert.deepEqual(spilled, fresh);
  },
);

kernelTest(
  "V-REF-1 a session's transcript holds at most a few MiB of output in memory: 300 execs of 60 KB grow the kernel < 8 MiB (each value held its output: +16 MiB)",
  async (k) => {
    const conn = await k.attach();
    await exec(conn, sixtyKB(0)); // the bash parser loaded before the kernel's RSS is first read
    const grownMiB = await kernelGrowthMiB(k, conn, 8, async () => {
      for (let i = 1; i <= 300; i++) await exec(conn, sixtyKB(i));
    });
    assert.ok(grownMiB < 8, `kernel RSS grew by ${grownMiB.toFixed(1)} MiB`);
    const first = await conn.request("value.get", { ref: "out:3", path: "stdout", slice: [0, 4] });
    assert.deepEqual(first, { ref: "out:3", value: { $: "str", v: "1\nyy" } });
  },
);
