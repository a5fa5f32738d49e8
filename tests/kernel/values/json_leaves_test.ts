import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { memoryKiB } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";

/** The `out` of `cat` of what `python3 -c` prints of `expr`, and how the kernel grew keeping it (MiB). */
async function grownBy(expr: string): Promise<{ out: Rec; grownMiB: number }> {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    await exec(conn, `python3 -c 'print(${expr})' > big.json`);
    const before = memoryKiB(k.child.pid).rss;
    const r = await exec(conn, "cat big.json");
    const out = (r.value as Rec).out as Rec;
    return { out, grownMiB: (memoryKiB(k.child.pid).rss - before) / 1024 };
  } finally {
    await k.cleanup();
  }
}

Deno.test("K-BASH-11/K-BASH-10 a 15 MB JSON list of 3 million short strings raises the kernel's resident memory by less than 64 MiB (its scalars count toward the value's budget as its containers do: parsed, the transcript held ~36 bytes a string, +103 MiB)", async () => {
  const { out, grownMiB } = await grownBy(
    `"[" + ",".join("\\"a%d\\"" % (i % 10) for i in range(3000000)) + "]"`,
  );
  assert.deepEqual([out.$, out.of], ["ref", "str"]);
  assert.ok(grownMiB < 64, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
});

Deno.test("K-BASH-11/K-BASH-10 a 16 MB JSON list of 8 million zeros raises the kernel's resident memory by less than 64 MiB (parsed it held +72 MiB)", async () => {
  const { out, grownMiB } = await grownBy(`"[" + ",".join(["0"] * 8000000) + "]"`);
  assert.deepEqual([out.$, out.of], ["ref", "str"]);
  assert.ok(grownMiB < 64, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
});

Deno.test("K-BASH-11/V-REF-1 a JSON value keeps only what it holds, not the stdout it was parsed from: 10 `cat` of a 15 MB file whose value is one 26-character string (the rest blanks) raise the kernel's resident memory by less than 32 MiB (each string was a slice of the whole text, which it kept alive: +137 MiB)", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    const key = "abcdefghijklmnopqrstuvwxyz";
    await exec(
      conn,
      `python3 -c 'print("[\\"${key}\\", {\\"${key}\\": \\"a\\\\tb${key}\\"}" + " " * 15000000 + "]")' > pad.json`,
    );
    const first = await exec(conn, "cat pad.json");
    const out = (first.value as Rec).out as Rec;
    assert.deepEqual(out, {
      $: "list",
      v: [{ $: "str", v: key }, { $: "record", v: { [key]: { $: "str", v: `a\tb${key}` } } }],
    });
    const before = memoryKiB(k.child.pid).rss;
    for (let i = 0; i < 10; i++) await exec(conn, "cat pad.json");
    const grownMiB = (memoryKiB(k.child.pid).rss - before) / 1024;
    assert.ok(grownMiB < 32, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
  } finally {
    await k.cleanup();
  }
});
