import assert from "node:assert/strict";
import { freshFile, writeAll } from "../../../src/kernel/bash/fresh_file.ts";

const encoder = new TextEncoder();

Deno.test("a fresh file replaces the old one (a new inode, never a truncated one), 0600", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/src`;
    Deno.writeTextFileSync(path, "old source, read by an earlier run\n");
    // A second name of the old file shows whether it was truncated or replaced.
    Deno.linkSync(path, `${dir}/old`);
    const file = freshFile(path);
    writeAll(file, encoder.encode("echo hi\n"));
    file.close();
    assert.equal(Deno.readTextFileSync(`${dir}/old`), "old source, read by an earlier run\n");
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
    assert.equal(Deno.readTextFileSync(path), "echo hi\n");
    // Made where nothing was, too.
    freshFile(`${dir}/restore`).close();
    assert.equal(Deno.statSync(`${dir}/restore`).size, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a symlink in place of a fresh file is replaced, its target left alone", async () => {
  const dir = await Deno.makeTempDir();
  try {
    Deno.writeTextFileSync(`${dir}/target`, "keep");
    Deno.symlinkSync(`${dir}/target`, `${dir}/src`);
    const file = freshFile(`${dir}/src`);
    writeAll(file, encoder.encode("echo hi\n"));
    file.close();
    assert.equal(Deno.lstatSync(`${dir}/src`).isFile, true);
    assert.equal(Deno.readTextFileSync(`${dir}/target`), "keep");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
