/** The sandbox view computed from grants (P-SBX-3). */
import assert from "node:assert/strict";
import { grantRoot, sandboxView, visibleIn } from "../../../src/kernel/sandbox/view.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("a grant's root is its longest glob-free directory prefix, ~ expanded", () => {
  assert.equal(grantRoot("~/src/proj/**", "/home/me"), "/home/me/src/proj");
  assert.equal(grantRoot("~", "/home/me"), "/home/me");
  assert.equal(grantRoot("/usr/**", "/h"), "/usr");
  assert.equal(grantRoot("/**", "/h"), "/");
  assert.equal(grantRoot("/var/log/*.log", "/h"), "/var/log");
  assert.equal(grantRoot("/data/a[12]/x", "/h"), "/data");
  assert.equal(grantRoot("/etc/hosts", "/h"), "/etc/hosts");
  assert.equal(grantRoot("/a/../b/./c/**", "/h"), "/b/c");
  assert.equal(grantRoot("relative/**", "/h"), null);
});

Deno.test("nothing is bound below a root that already shows it at least as writable", async () => {
  await withTempDir(async (dir) => {
    for (const d of ["a/b/c", "w/x", "s"]) await Deno.mkdir(`${dir}/${d}`, { recursive: true });
    const view = sandboxView(
      {
        read: [`${dir}/a/**`, `${dir}/a/b/**`, `${dir}/w/x/**`, `${dir}/missing/**`],
        write: [`${dir}/a/b/c/**`, `${dir}/w/**`],
      },
      `${dir}/home`,
      [`${dir}/a/b/s`, `${dir}/s`, `${dir}/w`],
    );
    const mine = view.mounts.filter((m) => m.path.startsWith(dir));
    assert.deepEqual(mine, [
      { path: `${dir}/a`, writable: false },
      { path: `${dir}/a/b/c`, writable: true },
      { path: `${dir}/w`, writable: true },
    ]);
    assert.deepEqual(view.masks, [{ path: `${dir}/w`, dir: true }], "only visible masks apply");
    assert.ok(view.mounts.some((m) => m.path === "/usr" && !m.writable));
    assert.ok(visibleIn(view, `${dir}/a/b`));
    assert.ok(!visibleIn(view, `${dir}/w/x`), "masked");
    assert.ok(!visibleIn(view, dir));
  });
});

Deno.test("a root that is a symlink shows its target at the target's real path", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/real`);
    await Deno.symlink(`${dir}/real`, `${dir}/link`);
    const view = sandboxView({ read: [`${dir}/link/**`], write: [] }, "/h", []);
    assert.deepEqual(view.mounts.filter((m) => m.path.startsWith(dir)), [
      { path: await Deno.realPath(`${dir}/real`), writable: false },
    ]);
  });
});
