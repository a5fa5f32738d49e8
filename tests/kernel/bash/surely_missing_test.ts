import assert from "node:assert/strict";
import { surelyMissing } from "../../../src/kernel/bash/surely_missing.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const LINUX = Deno.build.os === "linux";

/** Whether Deno's stat (`follow`) or lstat of `path` answers rather than throws. */
function answers(path: string, follow: boolean): boolean {
  try {
    if (follow) Deno.statSync(path);
    else Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A directory holding `file`, `link` to it and `dangling`, a link to nothing. */
function withLinks(body: (dir: string) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/file`, "x");
    await Deno.symlink(`${dir}/file`, `${dir}/link`);
    await Deno.symlink(`${dir}/gone`, `${dir}/dangling`);
    await body(dir);
  });
}

Deno.test({
  name: "surelyMissing: a missing file, one under a missing or non-directory parent and a " +
    "dangling symlink are missing; a file, a directory, a symlink to one and a FIFO (at once, " +
    "with no writer) are not, as Deno.statSync tells them",
  ignore: !LINUX,
  fn: () =>
    withLinks(async (dir) => {
      const mkfifo = await new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).output();
      assert.equal(mkfifo.code, 0);
      for (const name of ["gone", "gone/x", "file/x", "dangling"]) {
        assert.equal(surelyMissing(`${dir}/${name}`), true, name);
        assert.equal(answers(`${dir}/${name}`, true), false, name);
      }
      for (const name of ["file", "link", "fifo", "."]) {
        assert.equal(surelyMissing(`${dir}/${name}`), false, name);
        assert.equal(answers(`${dir}/${name}`, true), true, name);
      }
    }),
});

Deno.test({
  name: "surelyMissing without following links: a dangling symlink is there, as " +
    "Deno.lstatSync tells it; a missing file and one under a non-directory are not",
  ignore: !LINUX,
  fn: () =>
    withLinks((dir) => {
      for (const name of ["gone", "gone/x", "file/x"]) {
        assert.equal(surelyMissing(`${dir}/${name}`, false), true, name);
        assert.equal(answers(`${dir}/${name}`, false), false, name);
      }
      for (const name of ["file", "link", "dangling", "."]) {
        assert.equal(surelyMissing(`${dir}/${name}`, false), false, name);
        assert.equal(answers(`${dir}/${name}`, false), true, name);
      }
      return Promise.resolve();
    }),
});
