/**
 * Files of a write root that have other names outside every grant (SPEC §7.8 P-SBX-3: nothing
 * outside the grants is shown, let alone writable). Package managers make them on every install:
 * uv links a virtual environment's packages to its cache (`~/.cache/uv`, its default on Linux),
 * pnpm and bun a project's `node_modules` to their store in HOME, and every other project of the
 * human's that installed the same version shares those files.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

Deno.test({
  name:
    "P-SBX-3 a project file whose other name lies outside every grant (uv's cache linked into .venv) cannot be written through the project's name: the agent rewrote ~/.cache/uv/…/requests/__init__.py, which the human's other projects linked to it import unconfined [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 refuses a run while a protected file has a second name (protected_hardlink), but any file of a write root may have one outside the grants, and a package manager makes thousands; looking at every file's link count at each exec costs a walk of node_modules and .venv: refuse, copy them apart, or leave them writable?]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const home = `${k.box.dir}/home`;
      const cached = `${home}/.cache/uv/archive-v0/abc/requests`;
      const installed = `${home}/proj/.venv/lib/python3.12/site-packages/requests`;
      const other = `${home}/other/.venv/lib/python3.12/site-packages/requests`;
      for (const dir of [cached, installed, other]) await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(`${cached}/__init__.py`, "__version__ = '2.32'\n");
      await Deno.chmod(`${cached}/__init__.py`, 0o444);
      await Deno.link(`${cached}/__init__.py`, `${installed}/__init__.py`);
      await Deno.link(`${cached}/__init__.py`, `${other}/__init__.py`);
      const human = await k.attach("work");
      await exec(human, `cd ${home}/proj`);
      const agent = await k.attach("work", token);
      await Deno.writeTextFile(
        `${home}/proj/edit.sh`,
        [
          "f=.venv/lib/python3.12/site-packages/requests/__init__.py",
          `(chmod u+w $f && echo 'import os; os.system("evil")' >> $f) 2>/dev/null`,
          "echo done",
        ].join("\n"),
      );
      await exec(agent, "sh edit.sh", { position: "value" }).catch((e) => e);
      const seen = Deno.readTextFileSync(`${other}/__init__.py`);
      assert.equal(
        seen,
        "__version__ = '2.32'\n",
        "the human's other project runs the agent's code",
      );
      const outcome = (await exec(agent, "echo ok", { position: "value" })).value as Rec;
      assert.equal(outcome.ok, true);
    } finally {
      await k.cleanup();
    }
  },
});
