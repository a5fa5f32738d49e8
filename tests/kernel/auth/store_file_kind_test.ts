import assert from "node:assert/strict";
import { TokenStore } from "../../../src/kernel/auth/tokens.ts";
import { kernelUntilExit } from "../../_support/kernel.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const mode = (path: string) => Deno.statSync(path).mode! & 0o777;

Deno.test("T-TOK-3 a tokens.json that links to a directory is refused as no store, and what it names keeps its mode", async () => {
  await withTempDir((dir) => {
    Deno.mkdirSync(`${dir}/shared`, { mode: 0o755 });
    Deno.chmodSync(`${dir}/shared`, 0o755);
    Deno.symlinkSync(`${dir}/shared`, `${dir}/tokens.json`);
    assert.throws(() => new TokenStore(dir));
    assert.equal(mode(`${dir}/shared`), 0o755);
    assert.throws(() => new TokenStore(dir), /malformed token store .*not a regular file/);
  });
});

Deno.test("T-TOK-3/4 a kernel whose tokens.json is a FIFO exits naming the store instead of blocking on its read", async () => {
  const box = await sandbox();
  try {
    const state = `${box.dir}/state/shoal`;
    Deno.mkdirSync(state, { recursive: true, mode: 0o700 });
    const made = await new Deno.Command("mkfifo", { args: ["-m", "600", `${state}/tokens.json`] })
      .output();
    assert.ok(made.success);
    // Blocked on the FIFO the kernel never prints ready nor exits; kernelUntilExit kills it at 30 s.
    const { code, stderr } = await kernelUntilExit(box, ["--socket", box.socket()]);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /malformed token store .*tokens\.json: not a regular file/);
  } finally {
    await box.cleanup();
  }
});
