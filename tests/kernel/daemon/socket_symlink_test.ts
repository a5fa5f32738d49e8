// G-SOCK-3 step 1 against G-SOCK-10: a socket path with a symlink in it is refused before the
// kernel creates or chmods anything along it, so the refusal changes nothing where the link points.
import assert from "node:assert/strict";
import { kernelUntilExit } from "../../_support/kernel.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test("G-SOCK-10/G-SOCK-3 a symlinked socket directory is refused (exit 1) without chmodding the directory it points to", async () => {
  const box = await sandbox();
  try {
    const target = `${box.dir}/project`;
    await Deno.mkdir(target);
    await Deno.chmod(target, 0o755);
    await Deno.symlink(target, `${box.dir}/run/shoal`);
    const discovered = await kernelUntilExit(box, []);
    assert.equal(discovered.code, 1, discovered.stderr);
    assert.match(discovered.stderr, /is a symlink/);
    assert.equal(
      (await Deno.stat(target)).mode! & 0o777,
      0o755,
      "the link's target keeps its mode",
    );
    assert.deepEqual([...Deno.readDirSync(target)], [], "nothing made in the link's target");
  } finally {
    await box.cleanup();
  }
});

Deno.test("G-SOCK-10/G-SOCK-3 an explicit socket path through a symlink is refused (exit 1) without creating directories where the link points", async () => {
  const box = await sandbox();
  try {
    const target = `${box.dir}/elsewhere`;
    await Deno.mkdir(target, { mode: 0o755 });
    await Deno.symlink(target, `${box.dir}/link`);
    const explicit = await kernelUntilExit(box, ["--socket", `${box.dir}/link/sub/k.sock`]);
    assert.equal(explicit.code, 1, explicit.stderr);
    assert.match(explicit.stderr, /is a symlink/);
    assert.deepEqual([...Deno.readDirSync(target)], [], "no directory made through the link");
  } finally {
    await box.cleanup();
  }
});
