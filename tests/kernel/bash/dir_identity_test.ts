import assert from "node:assert/strict";
import { dirIdentity } from "../../../src/kernel/bash/dir_identity.ts";
import { delay } from "../../_support/wait.ts";

Deno.test("dirIdentity tells a directory made again at the same path from the removed one, though the new one gets the freed inode (ext4)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-dir-identity-" });
  try {
    const first = dirIdentity(`${dir}/d`);
    assert.equal(first, null);
    Deno.mkdirSync(`${dir}/d`);
    const made = dirIdentity(`${dir}/d`);
    assert.equal(dirIdentity(`${dir}/d`), made, "the same directory, the same identity");
    await delay(5); // a birth time in another millisecond
    Deno.removeSync(`${dir}/d`);
    Deno.mkdirSync(`${dir}/d`);
    assert.notEqual(dirIdentity(`${dir}/d`), made);
    Deno.writeTextFileSync(`${dir}/f`, "");
    assert.equal(dirIdentity(`${dir}/f`), null, "a file is no directory");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
