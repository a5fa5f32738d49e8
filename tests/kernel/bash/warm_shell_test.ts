/**
 * A warm shell is spawned as soon as its FIFO is open; its input files and its pipes' identities
 * come while bash starts (issue 10). These check what that order must keep: the identities are
 * the pipes the run reads, and a shell whose inputs cannot be made leaves no process behind.
 */
import assert from "node:assert/strict";
import { bashCandidates, resolveBash } from "../../../src/kernel/bash/discover.ts";
import { outputPipes } from "../../../src/kernel/bash/pipe_holders.ts";
import { ScratchPool } from "../../../src/kernel/bash/scratch_pool.ts";
import { bashOwnVariables, type ShellState } from "../../../src/kernel/bash/shell_state.ts";
import { WarmShell } from "../../../src/kernel/shells/warm_shell.ts";
import { pidsMentioning } from "../../_support/proc.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { waitUntil } from "../../_support/wait.ts";

const bash = await resolveBash(undefined, bashCandidates(Deno.build.os, Deno.env.get("PATH")));

function stateIn(cwd: string): ShellState {
  return { cwd, env: new Map(), vars: new Map(), funcs: new Map(), aliases: new Map() };
}

Deno.test({
  name: "a warm shell's pipe identities, read while it starts, are the pipes it writes to",
  ignore: Deno.build.os !== "linux",
  fn: () =>
    withTempDir(async (dir) => {
      const pool = new ScratchPool(dir);
      const shell = WarmShell.prepare(bash, await bashOwnVariables(bash), stateIn(dir), null, pool);
      assert.ok(shell !== null);
      try {
        assert.ok(shell.pipes !== null && shell.pipes.size === 2);
        assert.deepEqual(shell.pipes, outputPipes(shell.child.pid));
      } finally {
        await shell.discard();
        pool.clear();
      }
    }),
});

Deno.test("a warm shell whose input files cannot be made is not prepared, and leaves no process behind", () =>
  withTempDir(async (dir) => {
    const pool = new ScratchPool(dir);
    const scratch = pool.acquire();
    // A non-empty directory where the `restore` input goes: it cannot be replaced by a file.
    await Deno.mkdir(`${scratch}/restore/blocker`, { recursive: true });
    pool.release(scratch);
    const cwd = `${dir}/cwd-${crypto.randomUUID()}`;
    await Deno.mkdir(cwd);
    const shell = WarmShell.prepare(bash, await bashOwnVariables(bash), stateIn(cwd), null, pool);
    assert.equal(shell, null);
    assert.ok(
      await waitUntil(() => pidsMentioning(scratch).length === 0, 10000),
      "the bash spawned for it is gone",
    );
    // Its scratch directory went back to the pool once that bash had gone.
    assert.ok(
      await waitUntil(() => {
        const again = pool.acquire();
        if (again === scratch) return true;
        pool.release(again);
        return false;
      }, 10000),
    );
    pool.clear();
  }));
