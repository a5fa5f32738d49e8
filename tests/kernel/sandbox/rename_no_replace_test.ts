/** renameNoReplace: a file made aside goes in place whole, and never over what is there. */
import assert from "node:assert/strict";
import { renameNoReplace } from "../../../src/kernel/sandbox/rename_no_replace.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("renameNoReplace moves a file to a free name, and refuses a taken one (AlreadyExists) leaving both as they were", async () => {
  await withTempDir((dir) => {
    Deno.writeTextFileSync(`${dir}/staged`, ".\n");
    Deno.writeTextFileSync(`${dir}/taken`, "mine");
    assert.throws(
      () => renameNoReplace(`${dir}/staged`, `${dir}/taken`),
      Deno.errors.AlreadyExists,
    );
    assert.equal(Deno.readTextFileSync(`${dir}/taken`), "mine");
    renameNoReplace(`${dir}/staged`, `${dir}/free`);
    assert.equal(Deno.readTextFileSync(`${dir}/free`), ".\n");
    assert.equal(Deno.lstatSync(`${dir}/free`).nlink, 1, "no second name left");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["free", "taken"]);
  });
});
