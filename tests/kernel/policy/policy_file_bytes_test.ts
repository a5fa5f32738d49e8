/**
 * P-POL-1, G-STATE-3, M-ONB-1: what the bytes of a policy file may be. JSON text is UTF-8 (RFC 8259
 * §8.1): a file that is not is malformed, refused at start (exit 1) and on a re-read (the last good
 * policy stays), never read with its bad bytes turned into U+FFFD, which names other paths.
 */
import assert from "node:assert/strict";
import { kernelUntilExit, startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, kernelCli, RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

const encoder = new TextEncoder();

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A policy whose agent:a may write below `dir` + the byte ff (raw, not UTF-8) and read `read`. */
function rawPolicy(dir: string, read: string): Uint8Array {
  const entry = (write: string) =>
    `{"spawn": ["*"], "opaque": "allow", "auto_apply": "in-grant", "sandbox": false, ` +
    `"fs": {"read": ["${read}"], "write": ["${write}`;
  return new Uint8Array([
    ...encoder.encode(`{"principal": {"agent:a": ${entry(`${dir}/`)}`),
    0xff,
    ...encoder.encode(`/**"]}}}}\n`),
  ]);
}

Deno.test("P-POL-1, G-STATE-3: a policy file that is not UTF-8 stops the kernel with exit 1 naming the file (its byte ff was read as U+FFFD: a grant of proj/<ff> let the agent write proj/<U+FFFD>)", async () => {
  const box = await sandbox();
  const proj = `${box.dir}/proj`;
  await Deno.mkdir(`${proj}/\ufffd`, { recursive: true });
  const file = `${box.dir}/leash.jsonc`;
  await Deno.writeFile(file, rawPolicy(proj, `${proj}/**`));
  try {
    let started: TestKernel | null = null;
    let why = "";
    try {
      started = await startKernel(["--policy", file], box);
    } catch (e) {
      why = String(e);
    }
    if (started !== null) {
      // it started: show what the lossy grant let through
      try {
        const agent = await started.attach("default", (await createToken(box, "agent:a")).secret);
        await agent.request("exec", { src: `echo x > '${proj}/\ufffd/out'` }).catch(() => {});
      } finally {
        await started.stop();
      }
      const wrote = exists(`${proj}/\ufffd/out`);
      assert.fail(
        `the kernel started; the agent's write to proj/<U+FFFD> ${wrote ? "ran" : "was refused"}`,
      );
    }
    assert.ok(why.includes(file) && /not UTF-8/.test(why), why);
    const r = await kernelUntilExit(box, ["--socket", box.socket(), "--policy", file]);
    assert.equal(r.code, 1, r.stderr);
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-ONB-1: a policy file rewritten with bytes that are not UTF-8 keeps the last good policy and says why once", async () => {
  const box = await sandbox();
  const proj = `${box.dir}/proj`;
  await Deno.mkdir(`${proj}/\ufffd`, { recursive: true });
  const file = `${box.dir}/leash.jsonc`;
  const good = { "agent:a": { ...RUNNER, sandbox: false, fs: { read: [`${proj}/**`] } } };
  await Deno.writeTextFile(file, JSON.stringify({ principal: good }));
  const k = await startKernel(["--policy", file], box);
  try {
    const agent = await k.attach("default", (await createToken(box, "agent:a")).secret);
    await Deno.writeFile(file, rawPolicy(proj, `${proj}/**`));
    const e = await rpcError(agent.request("exec", { src: `echo x > '${proj}/\ufffd/out'` }));
    assert.equal(e.code, -32010, e.message);
    assert.equal((await agent.request("exec", { src: "echo still" }) as Rec).render, "still");
    const said = k.stderr.filter((l) => l.includes(file) && /not UTF-8/.test(l));
    assert.equal(said.length, 1, k.stderr.join("\n"));
    assert.ok(!k.stderr.some((l) => /reloaded/.test(l)), k.stderr.join("\n"));
  } finally {
    await k.cleanup();
  }
});

Deno.test("M-ONB-1: onboard refuses a policy file that is not UTF-8 and leaves it as it was (it rewrote the byte ff as U+FFFD, granting another directory)", async () => {
  const box = await sandbox();
  try {
    const proj = `${box.dir}/proj`;
    await Deno.mkdir(proj);
    const file = `${box.dir}/home/.config/shoal/leash.jsonc`;
    await Deno.mkdir(`${box.dir}/home/.config/shoal`, { recursive: true, mode: 0o700 });
    const before = rawPolicy(proj, `${proj}/**`);
    await Deno.writeFile(file, before, { mode: 0o600 });
    const r = await kernelCli(box, ["onboard", "agent:cursor", "--project", proj]);
    assert.notEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /not UTF-8/);
    assert.deepEqual(await Deno.readFile(file), before);
  } finally {
    await box.cleanup();
  }
});
