import assert from "node:assert/strict";
import { checkedPaths, checkTrustedPath } from "../../src/protocol/trusted_path.ts";
import { withTempDir } from "../_support/temp_dir.ts";

const EUID = Deno.uid()!;
const asRoot = EUID === 0;

Deno.test("G-SOCK-10 the checked components lie below the runtime root; explicit paths from /", () => {
  assert.deepEqual(checkedPaths("/tmp/shoal-0/shoal/w.sock", "/tmp"), [
    "/tmp/shoal-0",
    "/tmp/shoal-0/shoal",
    "/tmp/shoal-0/shoal/w.sock",
  ]);
  assert.deepEqual(checkedPaths("/run/user/7//shoal/w.sock", "/run/user/7/"), [
    "/run/user/7/shoal",
    "/run/user/7/shoal/w.sock",
  ]);
  assert.deepEqual(checkedPaths("/a/b.sock", "/"), ["/a", "/a/b.sock"]);
});

Deno.test("G-SOCK-10 own private directories and a sticky root-owned /tmp pass; missing parts end the walk", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/own`, { mode: 0o700 });
    checkTrustedPath(`${dir}/own/k.sock`, "/", EUID);
    checkTrustedPath(`${dir}/own/missing/deeper/k.sock`, "/", EUID);
  });
});

Deno.test("G-SOCK-10 the check says whether the path itself is there: an autostarting facade spawns at once when it is not (M-START-1)", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/own`, { mode: 0o700 });
    assert.equal(checkTrustedPath(`${dir}/own/k.sock`, "/", EUID), false);
    assert.equal(checkTrustedPath(`${dir}/own/missing/deeper/k.sock`, "/", EUID), false);
    const listener = Deno.listen({ transport: "unix", path: `${dir}/own/k.sock` });
    try {
      assert.equal(checkTrustedPath(`${dir}/own/k.sock`, "/", EUID), true);
    } finally {
      listener.close();
    }
  });
});

Deno.test("G-SOCK-10 a group- or other-writable own directory and a symlink are refused, naming path and owner", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/open`);
    await Deno.chmod(`${dir}/open`, 0o777);
    assert.throws(
      () => checkTrustedPath(`${dir}/open/k.sock`, dir, EUID),
      new RegExp(`${dir}/open \\(owner uid ${EUID}\\) is writable by others \\(mode 777\\)`),
    );
    await Deno.chmod(`${dir}/open`, 0o1777); // sticky helps only when root owns it
    const sticky = () => checkTrustedPath(`${dir}/open/k.sock`, dir, EUID);
    if (asRoot) sticky();
    else assert.throws(sticky, /writable by others/);
    await Deno.mkdir(`${dir}/real`, { mode: 0o700 });
    await Deno.symlink(`${dir}/real`, `${dir}/link`);
    assert.throws(
      () => checkTrustedPath(`${dir}/link/k.sock`, dir, EUID),
      new RegExp(`${dir}/link is a symlink \\(owner uid ${EUID}\\)`),
    );
  });
});

Deno.test({
  name: "G-SOCK-10 a directory or socket owned by another uid is refused",
  ignore: !asRoot,
  fn: async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(`${dir}/theirs`, { mode: 0o755 });
      await Deno.chown(`${dir}/theirs`, 65534, 65534);
      assert.throws(
        () => checkTrustedPath(`${dir}/theirs/k.sock`, dir, EUID),
        new RegExp(`${dir}/theirs is owned by uid 65534, not by uid ${EUID} or root`),
      );
      await Deno.writeTextFile(`${dir}/k.sock`, "");
      await Deno.chown(`${dir}/k.sock`, 65534, 65534);
      assert.throws(() => checkTrustedPath(`${dir}/k.sock`, dir, EUID), /owned by uid 65534/);
      // Root-owned components are trusted for any euid.
      await Deno.mkdir(`${dir}/rooted`, { mode: 0o755 });
      await Deno.writeTextFile(`${dir}/rooted/k.sock`, "");
      checkTrustedPath(`${dir}/rooted/k.sock`, "/", 1234);
    });
  },
});
