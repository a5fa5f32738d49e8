import assert from "node:assert/strict";
import { fillScratchInput, ScratchInput } from "../../../src/kernel/bash/scratch_input.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const encoder = new TextEncoder();

Deno.test("a scratch input filled again holds exactly the new bytes, in the same file", () =>
  withTempDir((dir) => {
    const path = `${dir}/src`;
    fillScratchInput(path, encoder.encode("echo a long source of an earlier run; echo LEFT\n"));
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
    const inode = Deno.statSync(path).ino;
    fillScratchInput(path, encoder.encode("echo b\n"));
    assert.equal(Deno.readTextFileSync(path), "echo b\n");
    assert.equal(Deno.statSync(path).ino, inode);
    // opened ahead of its filling, as a warm shell's are
    const input = ScratchInput.open(path);
    input.fill(new Uint8Array());
    input.close();
    assert.equal(Deno.statSync(path).size, 0);
    assert.equal(Deno.statSync(path).ino, inode);
  }));

Deno.test("a symlink or a second name in place of a scratch input is replaced, its target left alone", () =>
  withTempDir((dir) => {
    Deno.writeTextFileSync(`${dir}/target`, "keep");
    Deno.symlinkSync(`${dir}/target`, `${dir}/src`);
    Deno.linkSync(`${dir}/target`, `${dir}/restore`);
    fillScratchInput(`${dir}/src`, encoder.encode("echo hi\n"));
    fillScratchInput(`${dir}/restore`, encoder.encode("X=1\n"));
    assert.equal(Deno.lstatSync(`${dir}/src`).isFile, true);
    assert.equal(Deno.readTextFileSync(`${dir}/src`), "echo hi\n");
    assert.equal(Deno.lstatSync(`${dir}/restore`).nlink, 1);
    assert.equal(Deno.readTextFileSync(`${dir}/restore`), "X=1\n");
    assert.equal(Deno.readTextFileSync(`${dir}/target`), "keep");
  }));
