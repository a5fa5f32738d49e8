/**
 * P-POL-1, G-STATE-3, M-ONB-1: a policy file that starts with a UTF-8 byte order mark (as editors
 * on Windows and macOS write one) is the same JSONC text without it (RFC 8259 §8.1 lets a parser
 * ignore it): it loads at start and on a re-read, and `onboard` edits it in place keeping the mark.
 */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, kernelCli, RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

const BOM = "\uFEFF";

function policyText(principals: Rec): string {
  return `${BOM}// written by an editor that puts a BOM first\n${
    JSON.stringify({ principal: principals })
  }\n`;
}

Deno.test("P-POL-1, G-STATE-3: a policy file starting with a UTF-8 BOM loads at start and on a re-read (it was refused as malformed JSONC at offset 0)", async () => {
  const box = await sandbox();
  const file = `${box.dir}/leash.jsonc`;
  await Deno.writeTextFile(file, policyText({ "agent:a": { ...RUNNER, sandbox: false } }));
  try {
    const k = await startKernel(["--policy", file], box);
    const agent = await k.attach("default", (await createToken(box, "agent:a")).secret);
    assert.equal((await agent.request("exec", { src: "echo a" }) as Rec).render, "a");
    const b = await k.attach("default", (await createToken(box, "agent:b")).secret);
    await Deno.writeTextFile(
      file,
      policyText({ "agent:a": RUNNER, "agent:b": { ...RUNNER, sandbox: false } }),
    );
    assert.equal((await b.request("exec", { src: "echo b" }) as Rec).render, "b");
    assert.ok(!k.stderr.some((l) => /malformed/.test(l)), k.stderr.join("\n"));
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-ONB-1: onboard adds an agent to a policy file that starts with a BOM, keeping the BOM and the rest of the file (it failed: malformed JSONC)", async () => {
  const box = await sandbox();
  try {
    const project = `${box.dir}/proj`;
    await Deno.mkdir(project);
    const file = `${box.dir}/home/.config/shoal/leash.jsonc`;
    await Deno.mkdir(`${box.dir}/home/.config/shoal`, { recursive: true, mode: 0o700 });
    const before = `${BOM}{\n  // mine\n  "principal": {\n    "agent:old": {}\n  }\n}\n`;
    await Deno.writeTextFile(file, before, { mode: 0o600 });
    const r = await kernelCli(box, ["onboard", "agent:cursor", "--project", project]);
    assert.equal(r.code, 0, r.stderr);
    const after = await Deno.readTextFile(file);
    assert.ok(
      after.startsWith(`${BOM}{\n  // mine\n  "principal": {\n    "agent:old": {},`),
      after,
    );
    assert.ok(after.includes(`"agent:cursor"`), after);
    assert.ok(after.includes(`${project}/**`), after);
  } finally {
    await box.cleanup();
  }
});
