/** The inotify watches that tell the protection scan which directories changed (P-SBX-6). */
import assert from "node:assert/strict";
import { DirChanges, WATCH_LIMIT } from "../../../src/kernel/sandbox/dir_changes.ts";
import { mountTmpfs, unmount } from "../../_support/tmpfs.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const linux = Deno.build.os === "linux";

/** A fresh instance (Linux has inotify). */
function open(): DirChanges {
  const changes = DirChanges.open();
  assert.ok(changes !== null, "inotify on Linux");
  return changes;
}

Deno.test({
  name:
    "a watched directory stays unchanged until an entry of it is made, removed or renamed, or it is itself renamed or removed; a listing read after a later watch holds again",
  ignore: !linux,
  fn: async () => {
    await withTempDir(async (dir) => {
      const changes = open();
      await Deno.mkdir(`${dir}/d`);
      await Deno.writeTextFile(`${dir}/d/file`, "");
      let token = changes.watch(`${dir}/d`)!;
      const unchanged = () => {
        changes.collect();
        return changes.unchanged(`${dir}/d`, token);
      };
      assert.ok(unchanged());
      await Deno.writeTextFile(`${dir}/d/file`, "new content");
      assert.ok(unchanged(), "a file's content is no entry of its directory");
      for (
        const change of [
          () => Deno.writeTextFile(`${dir}/d/.envrc`, ""),
          () => Deno.rename(`${dir}/d/.envrc`, `${dir}/d/other`),
          () => Deno.remove(`${dir}/d/other`),
          () => Deno.mkdir(`${dir}/d/.vscode`),
        ]
      ) {
        await change();
        assert.ok(!unchanged());
        token = changes.watch(`${dir}/d`)!;
        assert.ok(unchanged(), "read again after a new watch");
      }
      await Deno.rename(`${dir}/d`, `${dir}/moved`);
      assert.ok(!unchanged(), "moved away");
      await Deno.mkdir(`${dir}/d`);
      token = changes.watch(`${dir}/d`)!;
      assert.ok(unchanged(), "the directory the name has now");
      await Deno.remove(`${dir}/d`);
      assert.ok(!unchanged(), "removed");
    });
  },
});

Deno.test({
  name:
    "listings of one directory read at two times: only the one read after the last change holds",
  ignore: !linux,
  fn: async () => {
    await withTempDir(async (dir) => {
      const changes = open();
      const first = changes.watch(dir)!;
      await Deno.writeTextFile(`${dir}/.envrc`, "");
      changes.collect();
      const second = changes.watch(dir)!;
      changes.collect();
      assert.ok(!changes.unchanged(dir, first));
      assert.ok(changes.unchanged(dir, second));
    });
  },
});

Deno.test({
  name:
    "a mount over a watched directory (which no inotify event tells) counts as a change of every watched directory, and so does its unmount",
  ignore: !linux,
  fn: async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(`${dir}/covered`);
      await Deno.mkdir(`${dir}/other`);
      const changes = open();
      const tokens = [changes.watch(`${dir}/covered`)!, changes.watch(`${dir}/other`)!];
      const unchanged = () => {
        changes.collect();
        return [
          changes.unchanged(`${dir}/covered`, tokens[0]),
          changes.unchanged(`${dir}/other`, tokens[1]),
        ];
      };
      assert.deepEqual(unchanged(), [true, true]);
      const mounted = mountTmpfs(`${dir}/covered`, "1m");
      if (mounted !== null) {
        console.log(`skipped: ${mounted}`);
        return;
      }
      try {
        assert.deepEqual(unchanged(), [false, false]);
        tokens[0] = changes.watch(`${dir}/covered`)!;
        tokens[1] = changes.watch(`${dir}/other`)!;
        assert.deepEqual(unchanged(), [true, true]);
      } finally {
        unmount(`${dir}/covered`);
      }
      assert.deepEqual(unchanged(), [false, false]);
    });
  },
});

Deno.test({
  name:
    "past the watch limit a directory takes no watch until one is forgotten; a path that is no directory takes none",
  ignore: !linux,
  fn: async () => {
    await withTempDir(async (dir) => {
      const changes = open();
      const dirs = Array.from({ length: WATCH_LIMIT + 1 }, (_, i) => `${dir}/d${i}`);
      for (const d of dirs) Deno.mkdirSync(d);
      for (const d of dirs.slice(0, -1)) assert.ok(changes.watch(d) !== null);
      assert.equal(changes.watch(dirs.at(-1)!), null);
      changes.forget(dirs.slice(0, 2), (d) => d === dirs[0]);
      assert.ok(changes.watch(dirs.at(-1)!) !== null, "the second one was forgotten");
      await Deno.writeTextFile(`${dir}/file`, "");
      await Deno.symlink(`${dir}/d0`, `${dir}/link`);
      changes.forget(dirs.slice(2, 10), () => false);
      assert.equal(changes.watch(`${dir}/file`), null);
      assert.equal(changes.watch(`${dir}/link`), null, "a symlink is not followed");
      assert.equal(changes.watch(`${dir}/missing`), null);
    });
  },
});

Deno.test({
  name:
    "a directory on a file system not known to tell every change by inotify (here /proc, whose listings change without any event) takes no watch: the scan stats it",
  ignore: !linux,
  fn: async () => {
    await withTempDir(async (dir) => {
      const changes = open();
      assert.equal(changes.watch("/proc/sys"), null);
      assert.equal(changes.watch("/proc/self/fd"), null);
      assert.notEqual(
        changes.watch(await Deno.realPath(dir)),
        null,
        "the temporary directory's disk is watched",
      );
    });
  },
});
