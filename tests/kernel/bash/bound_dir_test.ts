/**
 * A spawn whose state names the directory that must be at its cwd (P-SBX-7) enters exactly that
 * one: a path swapped for a symlink before the spawn refuses it, one swapped between the check and
 * the child's chdir (an agent's loop racing the human's exec) still leads into the checked
 * directory.
 */
import assert from "node:assert/strict";
import { inBoundDir } from "../../../src/kernel/bash/bound_dir.ts";
import { dirIdentity } from "../../../src/kernel/bash/dir_identity.ts";
import { spawnGroupLeader } from "../../../src/kernel/bash/group_leader.ts";
import type { ShellState } from "../../../src/kernel/bash/shell_state.ts";
import { needsLinux } from "../../_support/host.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

function stateIn(cwd: string, cwdIdentity?: string): ShellState {
  const env = new Map([["PATH", "/usr/bin:/bin"]]);
  return { cwd, cwdIdentity, env, vars: new Map(), funcs: new Map(), aliases: new Map() };
}

/** What `pwd -P` prints in a child spawned as the kernel spawns bash, in `state`'s cwd. */
async function physicalCwd(state: ShellState): Promise<string> {
  const child = spawnGroupLeader(["/bin/sh", "-c", "pwd -P"], state);
  const [out] = await Promise.all([new Response(child.stdout).text(), child.status]);
  await child.stderr.cancel();
  return out.trim();
}

Deno.test({
  name:
    "P-SBX-7 a child whose cwd must be one directory enters that one, even when the path is swapped for a symlink after the check; a path that no longer names it is refused",
  ignore: needsLinux("/proc/self/fd") !== null,
  fn: () =>
    withTempDir(async (dir) => {
      const [sub, elsewhere] = [`${dir}/sub`, `${dir}/elsewhere`];
      await Deno.mkdir(sub);
      await Deno.mkdir(elsewhere);
      const bound = stateIn(sub, dirIdentity(sub)!);
      assert.equal(await physicalCwd(bound), sub);
      // swapped while the child is being spawned: after the check, before its chdir
      const child = inBoundDir(bound, (cwd) => {
        Deno.renameSync(sub, `${dir}/old`);
        Deno.symlinkSync(elsewhere, sub);
        return new Deno.Command("/bin/sh", { args: ["-c", "pwd -P"], cwd, stdout: "piped" })
          .spawn();
      });
      const entered = new TextDecoder().decode((await child.output()).stdout).trim();
      assert.equal(entered, `${dir}/old`);
      // swapped before: refused, never entered
      assert.throws(() => inBoundDir(bound, () => "spawned"), Deno.errors.NotFound);
      // a state naming no directory spawns in its path, as before
      assert.equal(await physicalCwd(stateIn(sub)), elsewhere);
    }),
});
