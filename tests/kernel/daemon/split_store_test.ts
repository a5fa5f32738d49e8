// A state directory whose cas/ or tmp/ is a link to another file system (a user moving the
// growing content store to a bigger disk): outputs are spooled in tmp/ and renamed into cas/
// (G-STATE-2, J-3, J-4), which cannot cross file systems.
import assert from "node:assert/strict";
import { hostTest } from "../../_support/host.ts";
import { kernelUntilExit } from "../../_support/kernel.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** A directory on a file system other than the one holding `dir`'s, when the host has one. */
function otherFileSystem(dir: string): string | null {
  for (const candidate of ["/dev/shm", "/run"]) {
    try {
      const info = Deno.statSync(candidate);
      if (info.isDirectory && info.dev !== Deno.statSync(dir).dev) return candidate;
    } catch {
      // not on this host
    }
  }
  return null;
}

const ELSEWHERE = otherFileSystem(Deno.env.get("TMPDIR") || "/tmp");

for (const moved of ["cas", "tmp"]) {
  hostTest(
    `G-STATE-2/J-4 a state directory whose ${moved}/ links to another file system stops the kernel at start with exit 1 naming both directories, instead of serving and failing every exec after running it`,
    ELSEWHERE === null ? "needs a second file system (/dev/shm or /run)" : null,
    async () => {
      const box = await sandbox();
      const state = `${box.dir}/state/shoal`;
      const target = Deno.makeTempDirSync({ dir: ELSEWHERE!, prefix: "shoal-split-" });
      try {
        await Deno.mkdir(state, { mode: 0o700 });
        await Deno.symlink(target, `${state}/${moved}`);
        const r = await kernelUntilExit(box, ["--socket", box.socket()]);
        assert.equal(r.code, 1, r.stderr);
        assert.ok(r.stderr.includes(`${state}/cas`), r.stderr);
        assert.ok(r.stderr.includes(`${state}/tmp`), r.stderr);
        assert.ok(r.stderr.includes("file system"), r.stderr);
        assert.equal(await Deno.lstat(box.socket()).catch(() => null), null, "no socket left");
      } finally {
        Deno.removeSync(target, { recursive: true });
        await box.cleanup();
      }
    },
  );
}
