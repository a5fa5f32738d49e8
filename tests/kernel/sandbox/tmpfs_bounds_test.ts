/**
 * A sandbox's own file systems hold bounded memory (`tmpfs_bounds.ts`): its `/tmp` and `/dev/shm`
 * are sized tmpfs, and `/dev` takes no files. Real bwrap, real kernel.
 */
import assert from "node:assert/strict";
import { sandboxCommand } from "../../../src/kernel/sandbox/command.ts";
import { tmpfsBounds } from "../../../src/kernel/sandbox/tmpfs_bounds.ts";
import { sandboxView } from "../../../src/kernel/sandbox/view.ts";
import { exec } from "../../_support/exec.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const MIB = 1024 * 1024;

Deno.test("tmpfsBounds gives /tmp a quarter of the RAM, /dev/shm an eighth and each tool cache a sixteenth", () => {
  assert.deepEqual(tmpfsBounds(16 * 1024 * MIB), {
    tmp: 4 * 1024 * MIB,
    shm: 2 * 1024 * MIB,
    cache: 1024 * MIB,
  });
});

/** Why a test of sized tmpfs cannot run here, or null. */
const NEEDS_SIZED_TMPFS = NEEDS_TIER_B ??
  ((HOST_SANDBOX as { sizedTmpfs?: boolean }).sizedTmpfs ? null : "bwrap cannot size a tmpfs");

hostTest(
  "the probe finds whether bwrap sizes a tmpfs as its --help says",
  NEEDS_TIER_B,
  async () => {
    const host = HOST_SANDBOX as { bwrap: string; sizedTmpfs: boolean };
    const help = await new Deno.Command(host.bwrap, { args: ["--help"] }).output();
    assert.equal(host.sizedTmpfs, new TextDecoder().decode(help.stdout).includes("--size"));
  },
);

hostTest(
  "a write past the bound of /tmp or /dev/shm fails with ENOSPC, /dev takes no file, and its devices still work",
  NEEDS_SIZED_TMPFS,
  async () => {
    const host = HOST_SANDBOX as { bwrap: string; prlimit: string };
    await withTempDir(async (dir) => {
      const view = sandboxView({ read: [`${dir}/**`], write: [] }, undefined, []);
      const script = [
        `head -c ${9 * MIB} /dev/zero > /tmp/big; echo "tmp $?"`,
        `head -c ${5 * MIB} /dev/zero > /dev/shm/big; echo "shm $?"`,
        `rm /dev/shm/big && echo small > /dev/shm/small && echo "shm small ok"`,
        `echo x > /dev/made; echo "dev $?"`,
        `echo x > /dev/null && echo "null ok"`,
      ].join("; ");
      const [cmd, ...args] = sandboxCommand(
        {
          ...host,
          principal: "agent:a",
          view,
          cwd: dir,
          scratch: null,
          net: null,
          portFloor: null,
          proxy: null,
          tmpfs: { tmp: 8 * MIB, shm: 4 * MIB, cache: 4 * MIB },
        },
        ["/bin/bash", "--norc", "-c", script],
      );
      const r = await new Deno.Command(cmd, {
        args,
        env: { PATH: "/usr/bin:/bin" },
        stderr: "piped",
      })
        .output();
      const err = new TextDecoder().decode(r.stderr);
      assert.equal(
        new TextDecoder().decode(r.stdout),
        "tmp 1\nshm 1\nshm small ok\ndev 1\nnull ok\n",
        err,
      );
      assert.match(err, /No space left on device/);
      assert.match(err, /Read-only file system/);
    });
  },
);

hostTest(
  "a sandboxed agent's /tmp, /dev/shm and tool caches (~/.cache, ~/.npm) are sized from the host's RAM",
  NEEDS_SIZED_TMPFS,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const sizeOf = "import os\n" +
        "for path in ['/tmp', '/dev/shm', os.path.expanduser('~/.cache'), os.path.expanduser('~/.npm')]:\n" +
        "  s = os.statvfs(path)\n" +
        "  print(s.f_blocks * s.f_frsize)\n";
      await Deno.writeTextFile(`${proj}/size_of.py`, sizeOf);
      const r = (await exec(agent, "python3 size_of.py", { position: "value" })).value as Rec;
      const sizes = ((r.out as Rec).v as string).trim().split("\n").map(Number);
      const bounds = tmpfsBounds();
      const pairs = [
        [sizes[0], bounds.tmp],
        [sizes[1], bounds.shm],
        [sizes[2], bounds.cache],
        [sizes[3], bounds.cache],
      ];
      for (const [shown, bound] of pairs) {
        assert.ok(Math.abs(shown - bound) < 4096 * 2, `${shown} against ${bound}`);
      }
    } finally {
      await k.cleanup();
    }
  },
);
