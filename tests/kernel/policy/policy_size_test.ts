/**
 * G-STATE-3, M-ONB-1: a policy file larger than the kernel reads (1 MiB, thousands of principals)
 * is refused with a clear error like a malformed one, at start (exit 1) and on a re-read (the last
 * good policy stays); it is never read whole: a 200,000-principal policy held the kernel ~17 s,
 * and a 600 MB file took ~1.9 GB and was then called "not UTF-8".
 */
import assert from "node:assert/strict";
import { kernelUntilExit, startKernel } from "../../_support/kernel.ts";
import { createToken, RUNNER, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

const LIMIT = 1024 * 1024;

/** A valid policy text of more than `bytes` bytes: agent:a as `entry` and many filler principals. */
function bigPolicy(entry: Rec, bytes: number): string {
  const principals: Rec = { "agent:a": entry };
  let size = 0;
  for (let i = 0; size <= bytes; i++) {
    const name = `agent:f${String(i).padStart(6, "0")}`;
    principals[name] = { fs: { read: ["/tmp/x/**"] } };
    size += JSON.stringify({ [name]: principals[name] }).length - 2;
  }
  const text = JSON.stringify({ principal: principals });
  assert.ok(text.length > bytes);
  return text;
}

Deno.test("G-STATE-3: a --policy file over 1 MiB stops the kernel with exit 1 saying how large it may be", async () => {
  const box = await sandbox();
  try {
    const file = `${box.dir}/leash.jsonc`;
    await Deno.writeTextFile(file, bigPolicy(RUNNER, LIMIT + 1000));
    const r = await kernelUntilExit(box, ["--socket", box.socket(), "--policy", file]);
    assert.equal(r.code, 1, r.stderr.slice(0, 2000));
    assert.ok(r.stderr.includes(file), r.stderr.slice(0, 2000));
    assert.match(r.stderr, /larger than 1048576 bytes/);
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-ONB-1: a policy file replaced by a wider one over 1 MiB, or by a 64 MiB sparse file, keeps the last good (narrow) policy, says why once, and the kernel answers throughout", async () => {
  const box = await sandbox();
  const proj = `${box.dir}/proj`;
  await Deno.mkdir(proj);
  const narrow = { ...RUNNER, sandbox: false, fs: { read: [`${proj}/**`] } };
  const wide = { ...narrow, fs: { read: [`${proj}/**`], write: [`${proj}/**`] } };
  const file = await writePolicy(box, { "agent:a": narrow });
  const k = await startKernel(["--policy", file], box);
  try {
    const agent = await k.attach("default", (await createToken(box, "agent:a")).secret);
    const human = await k.attach();
    await Deno.writeTextFile(file, bigPolicy(wide, LIMIT + 1000));
    for (let i = 0; i < 2; i++) {
      const e = await agent.request("exec", { src: `echo x > ${proj}/f${i}` }).catch((e) => e);
      assert.equal((e as { code?: number }).code, -32010, String(e));
    }
    assert.equal((await human.request("exec", { src: "echo human" }) as Rec).render, "human");
    const big = k.stderr.filter((l) => l.includes(file) && /larger than 1048576 bytes/.test(l));
    assert.equal(big.length, 1, k.stderr.join("\n").slice(0, 3000));

    await Deno.remove(file);
    using f = await Deno.open(file, { create: true, write: true });
    await f.truncate(64 * 1024 * 1024);
    const e = await agent.request("exec", { src: `echo x > ${proj}/sparse` }).catch((e) => e);
    assert.equal((e as { code?: number }).code, -32010, String(e));
    assert.equal((await human.request("exec", { src: "echo again" }) as Rec).render, "again");
    const all = k.stderr.filter((l) => l.includes(file) && /larger than 1048576 bytes/.test(l));
    assert.equal(all.length, 1, "the same reason again is not said again");
    assert.ok(!k.stderr.some((l) => /reloaded/.test(l)), k.stderr.join("\n").slice(0, 3000));
  } finally {
    await k.cleanup();
  }
});
