import assert from "node:assert/strict";
import { trackedGitlinks, trackedProtected } from "../../../src/kernel/policy/_git_index.ts";
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

Deno.test("issue 14: the gitlinks a git index tracks, in index versions 2, 3 and 4; a remembered answer is not used once the index changed, even rewritten in place with its size and mtime kept", async () => {
  await withTempDir(async (dir) => {
    const index = `${dir}/.git/index`;
    await hostGit(dir, "init", "-q");
    await Deno.mkdir(`${dir}/sub/emb`, { recursive: true });
    await hostGit(`${dir}/sub/emb`, "init", "-q");
    await Deno.writeTextFile(`${dir}/sub/emb/f`, "x");
    await hostGit(`${dir}/sub/emb`, "add", "f");
    await hostGit(
      `${dir}/sub/emb`,
      "-c",
      "user.name=a",
      "-c",
      "user.email=a@b",
      "commit",
      "-qm",
      "m",
    );
    await Deno.writeTextFile(`${dir}/top`, "x");
    await hostGit(dir, "add", "top", "sub/emb");
    for (const version of ["2", "3", "4"]) {
      await hostGit(dir, "update-index", "--index-version", version);
      if (version === "3") await hostGit(dir, "update-index", "--skip-worktree", "top");
      assert.deepEqual(trackedGitlinks(index), ["sub/emb"], `version ${version}`);
    }

    // The same index with `sub/emb` a plain file: one entry as long, so the same size.
    await hostGit(dir, "update-index", "--index-version", "2");
    const withLink = await Deno.readFile(index);
    await hostGit(dir, "update-index", "--force-remove", "sub/emb");
    await Deno.rename(`${dir}/sub/emb`, `${dir}/sub/gone`);
    await Deno.writeTextFile(`${dir}/sub/emb`, "x");
    await hostGit(dir, "add", "sub/emb");
    const { mtime } = await Deno.stat(index);
    const plain = await Deno.readFile(index);
    assert.equal(plain.length, withLink.length);
    // remembered only once the index has not changed for a second (its ctime)
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.deepEqual(trackedGitlinks(index), []);
    assert.deepEqual(trackedGitlinks(index), [], "remembered");
    await Deno.rename(`${dir}/sub/emb`, `${dir}/sub/plain`);
    await Deno.rename(`${dir}/sub/gone`, `${dir}/sub/emb`);
    const file = await Deno.open(index, { write: true });
    await file.write(withLink);
    file.close();
    await Deno.utime(index, mtime!, mtime!);
    // past the second in which the change counts as recent: only its ctime tells it now
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.deepEqual(trackedGitlinks(index), ["sub/emb"], "read again");
  });
});
