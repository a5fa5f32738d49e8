/** The mount table as /proc/PID/mountinfo shows it. */
import assert from "node:assert/strict";
import { mountOf, mountTable } from "../../../src/kernel/sandbox/mount_table.ts";
import { mountTmpfs, unmount } from "../../_support/tmpfs.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

Deno.test("the mount a path is on is the innermost mount point holding it, the later of two at one point, and never one that only shares a prefix of its name", () => {
  const table = [
    { point: "/", type: "ext4" },
    { point: "/mnt/c", type: "9p" },
    { point: "/mnt/c/x", type: "tmpfs" },
    { point: "/mnt/c/x", type: "nfs4" },
  ];
  assert.equal(mountOf(table, "/home/u/p")?.type, "ext4");
  assert.equal(mountOf(table, "/mnt/c")?.type, "9p");
  assert.equal(mountOf(table, "/mnt/c/p/q")?.type, "9p");
  assert.equal(mountOf(table, "/mnt/cd")?.type, "ext4");
  assert.equal(mountOf(table, "/mnt/c/x/y")?.type, "nfs4");
});

Deno.test({
  name: "this process's mount table has its root and a tmpfs mounted at a path with a space",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withTempDir(async (dir) => {
      const at = `${await Deno.realPath(dir)}/a b`;
      await Deno.mkdir(at);
      assert.ok(mountTable("self").some((mount) => mount.point === "/"));
      const why = mountTmpfs(at, "1m");
      if (why !== null) {
        console.log(`skipped the mount: ${why}`);
        return;
      }
      try {
        assert.equal(mountOf(mountTable("self"), `${at}/f`)?.type, "tmpfs");
      } finally {
        unmount(at);
      }
    });
  },
});
