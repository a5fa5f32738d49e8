import assert from "node:assert/strict";
import { placeholderExcludes } from "../../../src/kernel/sandbox/git_excludes.ts";
import type { SandboxView } from "../../../src/kernel/sandbox/view.ts";
import type { ProtectedPath } from "../../../src/kernel/sandbox/protected_paths.ts";

/** A view protecting `paths` and nothing else. */
function viewOf(paths: ProtectedPath[]): SandboxView {
  return {
    mounts: [],
    links: [],
    masks: [],
    protection: { paths, pins: [], linked: [] },
  };
}

Deno.test("P-SBX-6: the excludes name each placeholder directory, anchored at the repository holding it, else at its write root; present names and placeholder files are left out", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-git-excludes-" });
  try {
    await Deno.mkdir(`${dir}/repo/.git`, { recursive: true });
    await Deno.mkdir(`${dir}/repo/pkg`);
    await Deno.mkdir(`${dir}/plain`);
    const text = placeholderExcludes(viewOf([
      { path: `${dir}/repo/pkg/.bashrc`, dir: false, absent: true },
      { path: `${dir}/repo/pkg/.vscode`, dir: true, absent: true },
      { path: `${dir}/repo/pkg/.envrc`, dir: false, absent: false },
      { path: `${dir}/repo/.git/commondir`, dir: false, absent: true, text: "" },
      { path: `${dir}/plain/.zshrc`, dir: false, absent: true },
    ]));
    assert.equal(text, "/.zshrc/\n/pkg/.bashrc/\n/pkg/.vscode/\n");
    assert.equal(placeholderExcludes(viewOf([])), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
