/** The sandbox of one run of a principal (P-SBX-3): what an approved plan's run sees besides its grants. */
import assert from "node:assert/strict";
import { runSandbox, type SandboxSetting } from "../../../src/kernel/policy/principal_sandbox.ts";
import type { Effect } from "../../../src/kernel/policy/effects.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { projectSandboxPolicy } from "../../_support/principals.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

hostTest(
  "P-SBX-3 an approved plan's run binds no directory a symlink planted since the analysis leads to: the agent swapped a project directory for a link to HOME between plan.apply's stale check and the sandbox, and the run wrote into the human's HOME (found by probe8)",
  NEEDS_TIER_B,
  async () => {
    await withTempDir(async (root) => {
      const home = `${root}/home`;
      const proj = `${home}/proj`;
      await Deno.mkdir(`${proj}/data`, { recursive: true });
      await Deno.mkdir(`${root}/secrets`);
      const setting: SandboxSetting = {
        host: HOST_SANDBOX,
        home,
        masked: [],
        gitIdentity: () => null,
        gitExcludes: () => null,
      };
      const policy = projectSandboxPolicy(proj);
      // The analysis saw real directories and approval named them: physical paths in the project.
      const approved: Effect[] = [
        { kind: "fs_read", paths: [`${proj}/sub/id_rsa`, `${proj}/data/*.csv`] },
        { kind: "fs_write", paths: [`${proj}/sub/.bashrc`, `${proj}/sub/notes.txt`] },
        { kind: "fs_delete", paths: [`${proj}/gone/x`] },
      ];
      const shown = (mounts: readonly { path: string }[]) =>
        mounts.map((m) => m.path).filter((p) => p.startsWith(root));
      const before = runSandbox(setting, policy, false, "agent:a", proj, approved)!;
      assert.deepEqual(shown(before.view.mounts), [proj]);

      // Then the agent's own run made each of them a link out of its grants.
      await Deno.symlink(home, `${proj}/sub`);
      await Deno.symlink(`${root}/secrets`, `${proj}/gone`);
      await Deno.remove(`${proj}/data`);
      await Deno.symlink(`${root}/secrets`, `${proj}/data`);
      const after = runSandbox(setting, policy, false, "agent:a", proj, approved)!;
      assert.deepEqual(shown(after.view.mounts), [proj], "nothing but the project is bound");
    });
  },
);
