/**
 * Derived effects against what a run really does (K-EFF-3a): each source is derived, then run by
 * a real bash in a fresh temp tree, and every file the run created, changed or removed must be
 * named by a derived `fs_write`/`fs_delete` path (or below one), unless the derivation gave up
 * (`opaque`). An under-report is what a human approving the plan would not see.
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const PATH = "/usr/bin:/bin";

/** The effects derived for `src` in `cwd`, HOME `home`, an unchanged session environment. */
function derive(src: string, cwd: string, home: string): Effect[] {
  const env = { HOME: home, PATH };
  const state = {
    cwd,
    env,
    changedEnv: new Set<string>(),
    home,
    sessionCommands: new Set<string>(),
  };
  return deriveEffects(parseBash(src), src, state).effects;
}

/** Every entry below `root` (not following links) with what tells a change. */
function snapshot(root: string, into = new Map<string, string>()): Map<string, string> {
  for (const entry of Deno.readDirSync(root)) {
    const path = `${root}/${entry.name}`;
    const info = Deno.lstatSync(path);
    into.set(path, `${info.size}:${info.mtime?.getTime()}:${info.ino}:${info.isSymlink}`);
    if (info.isDirectory) snapshot(path, into);
  }
  return into;
}

/** Runs `src` in a plain bash in `cwd`, as a session would, and waits for it. */
async function run(src: string, cwd: string, home: string): Promise<void> {
  const child = new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", src],
    cwd,
    env: { HOME: home, PATH },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await child.status;
}

/** Paths below `root` the run of `src` touched that no derived write or delete names. */
async function unreported(src: string, root: string, seed: (root: string) => void) {
  const home = `${root}/home`;
  Deno.mkdirSync(home);
  seed(root);
  const effects = derive(src, root, home);
  if (effects.some((e) => e.kind === "opaque")) return [];
  const named = effects.flatMap((e) =>
    e.kind === "fs_write" || e.kind === "fs_delete" ? e.paths : []
  );
  const before = snapshot(root);
  await run(src, root, home);
  const after = snapshot(root);
  const touched = [...new Set([...before.keys(), ...after.keys()])]
    .filter((path) => before.get(path) !== after.get(path));
  return touched.filter((path) => !named.some((p) => path === p || path.startsWith(`${p}/`)));
}

/** Files a, b and c holding a line each. */
function abc(root: string): void {
  for (const name of ["a", "b", "c"]) Deno.writeTextFileSync(`${root}/${name}`, `${name}\n`);
}

Deno.test("K-EFF-3a: cp/mv/ln/install -S SUFFIX and --back… make backups the derivation names", async () => {
  // GNU coreutils: `-S`/`--suffix` implies `--backup`, and `--back` abbreviates `--backup`: the
  // run leaves b.bak (or b~) next to b, which no derived path named before.
  const failures: Record<string, string[]> = {};
  for (
    const src of [
      "cp -S .bak a b",
      "cp --suffix=.bak a b",
      "cp --su .bak a b",
      "cp --back a b",
      "cp --backu=numbered a b",
      "mv -S .old c b",
      "mv --back c b",
      "ln -S .L a b",
      "ln -f --back a b",
      "install -S .I a b",
      "install --back a b",
    ]
  ) {
    await withTempDir(async (root) => {
      const missed = await unreported(src, root, abc);
      if (missed.length > 0) failures[src] = missed.map((path) => path.slice(root.length + 1));
    });
  }
  assert.deepEqual(failures, {});
});
