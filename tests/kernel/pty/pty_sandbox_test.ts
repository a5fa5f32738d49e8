/**
 * A sandboxed PTY program (P-SBX-2) starts only once its sandbox's protections are in place
 * (P-SBX-6), checked as a resident's are, and gets exactly the environment it was given (K-PTY-1).
 */
import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import type { Sandboxing } from "../../../src/kernel/sandbox/command.ts";
import { sandboxView } from "../../../src/kernel/sandbox/view.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { openPty, processExists, waitForScreen } from "./_helpers.ts";

/**
 * Runs `body` with a project `proj` the sandbox of `sandboxing(proj)` may write and a scratch
 * directory, outside /tmp (a sandbox's /tmp is its own).
 */
async function withProject(
  body: (proj: string, scratch: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "shoal-pty-sandbox-test-" });
  try {
    await Deno.mkdir(`${dir}/proj`);
    await Deno.mkdir(`${dir}/scratch`);
    await body(`${dir}/proj`, `${dir}/scratch`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The sandbox of an agent that may read and write `proj`, as its view is now. */
function sandboxing(proj: string): Sandboxing {
  const view = sandboxView({ read: [`${proj}/**`], write: [`${proj}/**`] }, undefined, []);
  if (HOST_SANDBOX.tier !== "B") throw new Error("no sandbox");
  const { bwrap, prlimit } = HOST_SANDBOX;
  return { principal: "agent:a", bwrap, prlimit, view, net: null, portFloor: null, tmpfs: null };
}

hostTest(
  "a PTY whose protected path is not in place when its sandbox starts (a parent swapped for a symlink) is refused with -32023 before its program runs",
  NEEDS_TIER_B,
  async () => {
    await withProject(async (proj, scratch) => {
      await Deno.mkdir(`${proj}/sub/a`, { recursive: true });
      await Deno.writeTextFile(`${proj}/sub/a/.envrc`, "orig");
      const sandbox = sandboxing(proj);
      assert.ok(sandbox.view.protection.paths.some((p) => p.path === `${proj}/sub/a/.envrc`));
      // between the scan and the start, sub becomes a link to a decoy: bwrap binds there
      await Deno.rename(`${proj}/sub`, `${proj}/real`);
      await Deno.mkdir(`${proj}/decoy/a`, { recursive: true });
      await Deno.writeTextFile(`${proj}/decoy/a/.envrc`, "decoy");
      await Deno.symlink("decoy", `${proj}/sub`);
      const opening = openPty(proj, "sh", ["-c", "echo evil > real/a/.envrc; sleep 30"], {
        sandbox,
        scratch,
      });
      await assert.rejects(opening, (e: unknown) => {
        assert.ok(e instanceof RpcError && e.code === ErrorCode.PTY_SPAWN_FAILED, String(e));
        assert.match(e.message, /protected path not in place/);
        return true;
      });
      assert.equal(await Deno.readTextFile(`${proj}/real/a/.envrc`), "orig", "it never ran");
      assert.deepEqual([...Deno.readDirSync(scratch)], [], "its gate is gone");
    });
  },
);

hostTest(
  "a sandboxed PTY program runs behind its gate with exactly the environment it was given",
  NEEDS_TIER_B,
  async () => {
    await withProject(async (proj, scratch) => {
      const env = { PATH: "/usr/bin:/bin", HOME: proj, TERM: "dumb", ONLY: "this" };
      const pty = await openPty(proj, "/usr/bin/env", [], {
        sandbox: sandboxing(proj),
        scratch,
        env,
      });
      try {
        const screen = await waitForScreen(pty, (s) => !s.alive);
        const lines = screen.screen.filter((line) => line !== "").sort();
        assert.deepEqual(lines, ["HOME=" + proj, "ONLY=this", "PATH=/usr/bin:/bin", "TERM=dumb"]);
        assert.deepEqual(screen.exit, { status: 0, signal: null });
        assert.ok(!processExists(pty.pid));
        assert.deepEqual([...Deno.readDirSync(scratch)], [], "its gate is gone");
      } finally {
        await pty.close();
      }
    });
  },
);
