/** Issue 13: the kernel's V8 flags have one source, src/kernel/v8_flags, that every launcher reads. */
import assert from "node:assert/strict";
import { installCheckout } from "../../../scripts/release_smoke.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { REPO } from "../../_support/sandbox.ts";

const FLAGS = `--v8-flags=${Deno.readTextFileSync(`${REPO}/src/kernel/v8_flags`).trim()}`;

hostTest(
  "bin/shoal-kernel runs the kernel with the V8 flags of src/kernel/v8_flags",
  needsLinux("/proc/PID/cmdline"),
  async () => {
    const kernel = await startKernel();
    try {
      const argv = Deno.readTextFileSync(`/proc/${kernel.child.pid}/cmdline`).split("\0");
      assert.ok(argv.includes(FLAGS), argv.join(" "));
    } finally {
      await kernel.cleanup();
    }
  },
);

Deno.test("the release build and the smoke stand-in take the kernel's V8 flags from src/kernel/v8_flags", async () => {
  const release = Deno.readTextFileSync(`${REPO}/.github/workflows/release.yml`);
  assert.match(release, /--v8-flags="\$\(cat src\/kernel\/v8_flags\)"/);
  assert.doesNotMatch(release, /--v8-flags=--/, "no flags written out in release.yml");
  const install = await installCheckout();
  try {
    assert.ok(Deno.readTextFileSync(`${install.dir}/shoal-kernel`).includes(`'${FLAGS}'`));
  } finally {
    await Deno.remove(install.dir, { recursive: true });
  }
});
