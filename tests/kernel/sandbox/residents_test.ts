/**
 * Starting a resident sandbox (P-SBX-4) from a view that went stale (P-SBX-6): a protected path
 * the scan found and the host removed before bwrap bound it.
 */
import assert from "node:assert/strict";
import { runSandbox } from "../../../src/kernel/policy/principal_sandbox.ts";
import { Residents } from "../../../src/kernel/sandbox/residents.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { projectSandboxPolicy } from "../../_support/principals.ts";

hostTest(
  "a protected path the scan found and the host removed before the start: the resident starts from a fresh view instead of failing with 'bwrap exited'",
  NEEDS_TIER_B,
  async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-residents-test-" }));
    const proj = `${root}/home/proj`;
    await Deno.mkdir(`${proj}/sub/.git/hooks`, { recursive: true });
    const policy = projectSandboxPolicy(proj);
    const setting = {
      host: HOST_SANDBOX,
      home: `${root}/home`,
      masked: [],
      gitIdentity: () => null,
    };
    const residents = new Residents(
      HOST_SANDBOX,
      "/bin/bash",
      root,
      new NetProxy(root, () => {}),
      () => {},
    );
    try {
      const stale = runSandbox(setting, policy, false, "agent:a", proj)!;
      const hooks = `${proj}/sub/.git/hooks`;
      assert.ok(stale.view.protection.paths.some((p) => p.path === hooks), "the scan found it");
      // a build or a test suite on the host removes its repository meanwhile
      await Deno.remove(`${proj}/sub/.git`, { recursive: true });
      const resident = await residents.get("s", stale);
      assert.ok(resident.protectionIntact, "started, with every protection of its view in place");
    } finally {
      await residents.closeAll();
      await Deno.remove(root, { recursive: true });
    }
  },
);
