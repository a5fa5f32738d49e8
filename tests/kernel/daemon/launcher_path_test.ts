/**
 * Issue 33: bin/shoal-kernel and scripts/deno.sh reach the pinned Deno in .tools/ with shell
 * builtins only. Each dirname or grep they ran was a fork and an exec on every kernel start, in
 * the chain an autostarting facade waits through; a PATH that holds no program at all proves none
 * is left.
 */
import assert from "node:assert/strict";
import { VERSION } from "../../../src/protocol/version.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";

Deno.test("issue 33: bin/shoal-kernel starts the pinned Deno with a PATH that finds no program", async () => {
  const box = await sandbox();
  try {
    const out = await new Deno.Command(KERNEL_BIN, {
      args: ["--version"],
      env: { PATH: `${box.dir}/empty`, HOME: box.dir },
      clearEnv: true,
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.equal(new TextDecoder().decode(out.stdout).trim(), `shoal-kernel ${VERSION}`);
  } finally {
    await box.cleanup();
  }
});
