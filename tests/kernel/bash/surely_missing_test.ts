import assert from "node:assert/strict";
import { surelyMissing } from "../../../src/kernel/bash/surely_missing.ts";

const LINUX = Deno.build.os === "linux";

Deno.test({
  name: "surelyMissing: a missing file, one under a missing or non-directory parent and a " +
    "dangling symlink are missing; a file, a directory, a symlink to one and a FIFO (at once, " +
    "with no writer) are not, as Deno.statSync tells them",
  ignore: !LINUX,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-surely-missing-" });
    try {
      await Deno.writeTextFile(`${dir}/file`, "x");
      await Deno.symlink(`${dir}/file`, `${dir}/link`);
      await Deno.symlink(`${dir}/gone`, `${dir}/dangling`);
      const mkfifo = await new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).output();
      assert.equal(mkfifo.code, 0);
      const statable = (path: string) => {
        try {
          Deno.statSync(path);
          return true;
        } catch {
          return false;
        }
      };
      for (const name of ["gone", "gone/x", "file/x", "dangling"]) {
        assert.equal(surelyMissing(`${dir}/${name}`), true, name);
        assert.equal(statable(`${dir}/${name}`), false, name);
      }
      for (const name of ["file", "link", "fifo", "."]) {
        assert.equal(surelyMissing(`${dir}/${name}`), false, name);
        assert.equal(statable(`${dir}/${name}`), true, name);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "surelyMissing without following links: a dangling symlink is there, as " +
    "Deno.lstatSync tells it; a missing file and one under a non-directory are not",
  ignore: !LINUX,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-surely-missing-" });
    try {
      await Deno.writeTextFile(`${dir}/file`, "x");
      await Deno.symlink(`${dir}/file`, `${dir}/link`);
      await Deno.symlink(`${dir}/gone`, `${dir}/dangling`);
      const lstatable = (path: string) => {
        try {
          Deno.lstatSync(path);
          return true;
        } catch {
          return false;
        }
      };
      for (const name of ["gone", "gone/x", "file/x"]) {
        assert.equal(surelyMissing(`${dir}/${name}`, false), true, name);
        assert.equal(lstatable(`${dir}/${name}`), false, name);
      }
      for (const name of ["file", "link", "dangling", "."]) {
        assert.equal(surelyMissing(`${dir}/${name}`, false), false, name);
        assert.equal(lstatable(`${dir}/${name}`), true, name);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
