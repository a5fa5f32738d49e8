/** The protected paths a view binds read-only inside its writable roots (P-SBX-6). */
import assert from "node:assert/strict";
import { protection, SCAN_DEPTH } from "../../../src/kernel/sandbox/protected_paths.ts";
import { holdPlaceholders } from "../../../src/kernel/sandbox/placeholders.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("below a root, existing protected names down to the scan depth are protected, their parents pinned; node_modules is not entered", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const at = (depth: number) => Array.from({ length: depth }, (_, i) => `d${i}`).join("/");
    for (const depth of [1, SCAN_DEPTH - 1, SCAN_DEPTH]) {
      await Deno.mkdir(`${root}/${at(depth)}`, { recursive: true });
      await Deno.writeTextFile(`${root}/${at(depth)}/.envrc`, "");
    }
    await Deno.mkdir(`${root}/node_modules/p/.vscode`, { recursive: true });
    await Deno.mkdir(`${root}/d0/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/d0/.git/config`, "");
    const { paths, pins } = protection([root], []);
    const deep = paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(deep, [
      `${root}/d0/.envrc`,
      `${root}/d0/.git/config`,
      `${root}/d0/.git/hooks`,
      `${root}/${at(SCAN_DEPTH - 1)}/.envrc`,
    ]);
    assert.deepEqual(pins.slice(0, 2), [`${root}/d0`, `${root}/d0/.git`]);
    assert.ok(!pins.includes(root), "the root itself is a mount already");
    const absent = paths.filter((p) => p.absent).map((p) => p.path.slice(root.length + 1));
    assert.ok(absent.includes(".envrc") && absent.includes(".vscode"));
    assert.ok(!absent.includes(".git/hooks"), "no .git at the root: nothing of it is held");
  });
});

Deno.test("writable_protected names are left out; a placeholder is made once, kept while held and removed after the last release", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const p = protection([root], [".envrc", ".git/config"]);
    assert.ok(!p.paths.some((x) => x.path.endsWith("/.envrc")));
    const first = holdPlaceholders(p);
    const second = holdPlaceholders(protection([root], [".envrc"]));
    assert.ok(Deno.statSync(`${root}/.bashrc`).isDirectory);
    first();
    assert.ok(Deno.statSync(`${root}/.bashrc`).isDirectory, "still held");
    second();
    assert.deepEqual([...Deno.readDirSync(root)], [], "nothing left behind");
  });
});
