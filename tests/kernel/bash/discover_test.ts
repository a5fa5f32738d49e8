import assert from "node:assert/strict";
import { bashCandidates, fixedBashPaths, resolveBash } from "../../../src/kernel/bash/discover.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** A fake bash in `dir` that reports `major minor` as its version, like macOS's /bin/bash 3.2 does. */
async function fakeBash(dir: string, version: string): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/bash`;
  await Deno.writeTextFile(path, `#!/bin/sh\necho "${version}"\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** A bash of 4.4 or later on this machine (the tests need one anyway). */
function realBash(): Promise<string> {
  return resolveBash(undefined, bashCandidates(Deno.build.os, Deno.env.get("PATH")));
}

Deno.test("K-CLI-1 candidates: Homebrew and MacPorts first on macOS, /bin and /usr/bin on Linux, then PATH", () => {
  assert.deepEqual(bashCandidates("darwin", "/usr/bin:/bin:relative:/usr/local/bin/"), [
    "/opt/homebrew/bin/bash",
    "/usr/local/bin/bash",
    "/opt/local/bin/bash",
    "/usr/bin/bash",
    "/bin/bash",
  ]);
  assert.deepEqual(bashCandidates("linux", "/opt/b:/bin"), [
    "/bin/bash",
    "/usr/bin/bash",
    "/opt/b/bash",
  ]);
  assert.deepEqual(bashCandidates("linux", undefined), fixedBashPaths("linux"));
});

Deno.test("K-CLI-1 an old bash first on PATH is passed over for a newer one after it", async () => {
  await withTempDir(async (dir) => {
    const old = await fakeBash(`${dir}/old`, "3 2");
    const real = await realBash();
    assert.equal(await resolveBash(undefined, [`${dir}/missing/bash`, old, real]), real);
  });
});

Deno.test("K-CLI-1 no bash 4.4: exit 1 naming what was found and how to install one", async () => {
  await withTempDir(async (dir) => {
    const old = await fakeBash(`${dir}/old`, "3 2");
    const odd = await fakeBash(`${dir}/odd`, "garbage");
    await assert.rejects(
      () => resolveBash(undefined, [`${dir}/missing/bash`, old, odd]),
      (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.match(e.message, new RegExp(`only ${old} \\(3\\.2\\), ${odd} \\(not bash\\)`));
        assert.match(e.message, /brew install bash/);
        assert.match(e.message, /port install bash/);
        assert.match(e.message, /--bash PATH/);
        return true;
      },
    );
    await assert.rejects(() => resolveBash(undefined, []), /no bash 4\.4 or later found \(none\)/);
  });
});

Deno.test("K-CLI-1 --bash is used as given when new enough, refused when old", async () => {
  await withTempDir(async (dir) => {
    const fourFour = await fakeBash(`${dir}/a`, "4 4");
    assert.equal(await resolveBash(fourFour, []), fourFour);
    const old = await fakeBash(`${dir}/b`, "4 3");
    await assert.rejects(
      async () => resolveBash(old, [await realBash()]),
      /is bash 4\.3; 4\.4 or later needed/,
    );
  });
});
