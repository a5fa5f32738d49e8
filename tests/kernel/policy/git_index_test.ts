import assert from "node:assert/strict";
import { trackedProtected } from "../../../src/kernel/policy/_git_index.ts";
import { hostGit } from "../../_support/git.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("P-SBX-6: the protected names a git index tracks, at any depth, in index versions 2, 3 and 4", async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(trackedProtected(`${dir}/.git/index`), [], "no index: nothing tracked");
    await hostGit(dir, "init", "-q");
    for (const sub of [".vscode", "a/b/.idea", "c"]) {
      await Deno.mkdir(`${dir}/${sub}`, { recursive: true });
    }
    for (
      const file of [".vscode/s.json", "a/b/.idea/x", ".gitmodules", "a/.envrc", "c/plain", "top"]
    ) {
      await Deno.writeTextFile(`${dir}/${file}`, "x");
    }
    await hostGit(dir, "add", "-A");
    const expected = [".gitmodules", ".vscode", "a/.envrc", "a/b/.idea"];
    for (const version of ["2", "3", "4"]) {
      await hostGit(dir, "update-index", "--index-version", version);
      // an extended entry (skip-worktree) is 2 bytes longer, from version 3 on
      if (version === "3") await hostGit(dir, "update-index", "--skip-worktree", "c/plain");
      assert.deepEqual(trackedProtected(`${dir}/.git/index`), expected, `version ${version}`);
    }
    await Deno.writeTextFile(`${dir}/.git/index`, "DIRC garbage");
    assert.equal(trackedProtected(`${dir}/.git/index`), null, "what is not understood is null");
  });
});
