/**
 * Starting a resident sandbox (P-SBX-4) from a view that went stale (P-SBX-6): a protected path
 * the scan found and the host removed before bwrap bound it.
 */
import assert from "node:assert/strict";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { withResidents } from "../../_support/residents.ts";

hostTest(
  "a protected path the scan found and the host removed before the start: the resident starts from a fresh view instead of failing with 'bwrap exited'",
  NEEDS_TIER_B,
  () =>
    withResidents(async ({ proj, residents, sandboxing }) => {
      await Deno.mkdir(`${proj}/sub/.git/hooks`, { recursive: true });
      const stale = sandboxing();
      const hooks = `${proj}/sub/.git/hooks`;
      assert.ok(stale.view.protection.paths.some((p) => p.path === hooks), "the scan found it");
      // a build or a test suite on the host removes its repository meanwhile
      await Deno.remove(`${proj}/sub/.git`, { recursive: true });
      const resident = await residents.get("s", stale);
      assert.ok(resident.protectionIntact, "started, with every protection of its view in place");
    }),
);

hostTest(
  "a protection the host removes after the sandbox's mount table was checked many times unchanged is seen gone at the next check (P-SBX-6)",
  NEEDS_TIER_B,
  () =>
    withResidents(async ({ proj, residents, sandboxing }) => {
      await Deno.mkdir(`${proj}/sub/.git/hooks`, { recursive: true });
      const resident = await residents.get("s", sandboxing());
      for (let i = 0; i < 100; i++) assert.ok(resident.protectionIntact);
      await Deno.remove(`${proj}/sub/.git`, { recursive: true });
      assert.equal(resident.protectionIntact, false);
      assert.equal(resident.protectionIntact, false, "and stays gone");
    }),
);
