/** M-ONB-1: the kernel's policy follows its file: appear, change, malformed edit, removal. */
import assert from "node:assert/strict";
import { defaultPolicy, loadPolicyFile } from "../../../src/kernel/policy/leash.ts";
import { PolicyWatch } from "../../../src/kernel/policy/policy_watch.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const entry = (globs: string[]) =>
  JSON.stringify({ principal: { "agent:a": { "fs.read": globs } } });

Deno.test("M-ONB-1: PolicyWatch loads a file that appears or changes, keeps the last good policy over a malformed edit, and falls back to the default when it is removed", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/leash.jsonc`;
    const logged: string[] = [];
    const watch = new PolicyWatch(path, defaultPolicy(), (l) => logged.push(l));
    assert.equal(watch.current().principals.size, 0, "no file yet: the default policy");
    await Deno.writeTextFile(path, entry(["/a/**"]));
    assert.deepEqual(watch.current().principals.get("agent:a")?.fs_read, ["/a/**"]);
    await Deno.writeTextFile(path, entry(["/a/**", "/bb/**"]));
    assert.deepEqual(watch.current().principals.get("agent:a")?.fs_read, ["/a/**", "/bb/**"]);
    await Deno.writeTextFile(path, "{ broken");
    assert.deepEqual(watch.current().principals.get("agent:a")?.fs_read, ["/a/**", "/bb/**"]);
    assert.equal(logged.filter((l) => /malformed JSONC.*keeping the policy/.test(l)).length, 1);
    watch.current();
    assert.equal(logged.filter((l) => /malformed/.test(l)).length, 1, "logged once per change");
    await Deno.remove(path);
    assert.equal(watch.current().principals.size, 0, "removed: the default policy");
    assert.equal(new PolicyWatch(null, defaultPolicy(), () => {}).current().principals.size, 0);
  });
});

Deno.test("M-ONB-1: an edit that keeps the file's size and mtime is seen (cp -p, rsync -t and tar x set the mtime they copy): the narrowed grant applies", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/leash.jsonc`;
    await Deno.writeTextFile(path, entry(["/a/**"]));
    const watch = new PolicyWatch(path, loadPolicyFile(path), () => {});
    assert.deepEqual(watch.current().principals.get("agent:a")?.fs_read, ["/a/**"]);
    const before = await Deno.stat(path);
    await Deno.writeTextFile(path, entry(["/b/**"]));
    await Deno.utime(path, before.atime!, before.mtime!);
    assert.equal((await Deno.stat(path)).mtime?.getTime(), before.mtime?.getTime());
    assert.deepEqual(watch.current().principals.get("agent:a")?.fs_read, ["/b/**"]);
  });
});
