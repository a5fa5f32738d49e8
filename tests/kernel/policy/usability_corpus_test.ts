/**
 * Usability of effects analysis (issue 14): ordinary agent work keeps exact effects. The corpus
 * (`usability_corpus.txt`, one command line each: builds, tests, git, search, file edits) is
 * analysed in a real git work tree with a stock config, and the exact/opaque counts are asserted
 * so that a change making ordinary commands opaque shows up here.
 */
import assert from "node:assert/strict";
import { deriveEffects } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const CORPUS = new URL("./usability_corpus.txt", import.meta.url);

/** Runs git quietly in `dir`. */
async function git(dir: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "null" })
    .output();
  assert.equal(out.code, 0, `git ${args.join(" ")}`);
}

Deno.test("issue 14: the usability corpus keeps its exact/opaque counts", async () => {
  const lines = (await Deno.readTextFile(CORPUS)).split("\n").filter((line) => line !== "");
  assert.ok(lines.length >= 200, `corpus has ${lines.length} commands`);
  await withTempDir(async (dir) => {
    const home = `${dir}/home`;
    const proj = `${dir}/proj`;
    await Deno.mkdir(home);
    await Deno.mkdir(proj);
    await git(proj, "init", "-q");
    const opaque: string[] = [];
    for (const src of lines) {
      const { effects } = deriveEffects(parseBash(src), src, {
        cwd: proj,
        env: { HOME: home, PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" },
        changedEnv: new Set(),
        home,
        sessionCommands: new Set(),
      });
      const reason = effects.find((effect) => effect.kind === "opaque");
      if (reason !== undefined) opaque.push(`${src}  →  ${JSON.stringify(reason)}`);
    }
    const exact = lines.length - opaque.length;
    assert.deepEqual(
      { commands: lines.length, exact, opaque: opaque.length },
      { commands: 248, exact: 163, opaque: 85 },
      `opaque:\n${opaque.join("\n")}`,
    );
  });
});
