import assert from "node:assert/strict";
import { complete } from "../../../src/kernel/bash/complete.ts";
import { MAX_COMPLETIONS } from "../../../src/protocol/limits.ts";

/** A reader that may read every directory (the local human's). */
const ANYWHERE = () => true;

/** A temp dir with a cwd (files, a dir, a dotfile) and a PATH dir (two executables, one plain file). */
async function fixture(): Promise<{ root: string; cwd: string; bin: string }> {
  const root = await Deno.makeTempDir({ prefix: "shoal-complete-" });
  const cwd = `${root}/cwd`;
  const bin = `${root}/bin`;
  await Deno.mkdir(`${cwd}/src/deep`, { recursive: true });
  await Deno.mkdir(bin);
  for (const name of ["report.csv", "readme.md", ".hidden", "src/main.ts", "src/mod.ts", "é.txt"]) {
    await Deno.writeTextFile(`${cwd}/${name}`, "");
  }
  for (const name of ["gizmo", "gitlike"]) {
    await Deno.writeTextFile(`${bin}/${name}`, "#!/bin/sh\n");
    await Deno.chmod(`${bin}/${name}`, 0o755);
  }
  await Deno.writeTextFile(`${bin}/gi-not-executable`, "");
  return { root, cwd, bin };
}

Deno.test("K-COMP-1: command position offers reserved words, builtins and PATH executables", async () => {
  const { root, cwd, bin } = await fixture();
  try {
    assert.deepEqual(await complete("gi", 2, cwd, bin, ANYWHERE), {
      candidates: ["gitlike", "gizmo"],
      start: 0,
    });
    const result = await complete("ls; wh", undefined, cwd, bin, ANYWHERE);
    assert.deepEqual(result, { candidates: ["while"], start: 4 });
    const builtins = await complete("if true; then ech", undefined, cwd, bin, ANYWHERE);
    assert.deepEqual(builtins.candidates, ["echo"]);
    const afterAssign = await complete("A=1 gi", undefined, cwd, bin, ANYWHERE);
    assert.deepEqual(afterAssign.candidates, ["gitlike", "gizmo"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("K-COMP-1: argument position completes cwd entries, directories with /", async () => {
  const { root, cwd, bin } = await fixture();
  try {
    assert.deepEqual(await complete("cat re", undefined, cwd, bin, ANYWHERE), {
      candidates: ["readme.md", "report.csv"],
      start: 4,
    });
    assert.deepEqual((await complete("cat s", undefined, cwd, bin, ANYWHERE)).candidates, ["src/"]);
    assert.deepEqual(await complete("cat src/m", undefined, cwd, bin, ANYWHERE), {
      candidates: ["src/main.ts", "src/mod.ts"],
      start: 4,
    });
    assert.deepEqual((await complete("cat src/", undefined, cwd, bin, ANYWHERE)).candidates, [
      "src/deep/",
      "src/main.ts",
      "src/mod.ts",
    ]);
    assert.deepEqual((await complete("cat .h", undefined, cwd, bin, ANYWHERE)).candidates, [
      ".hidden",
    ]);
    assert.deepEqual((await complete("echo x > rep", undefined, cwd, bin, ANYWHERE)).candidates, [
      "report.csv",
    ]);
    assert.deepEqual((await complete("./s", undefined, cwd, bin, ANYWHERE)).candidates, ["./src/"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("K-COMP-1: a directory the caller may not read offers no entries, asked by its real path", async () => {
  const { root, cwd, bin } = await fixture();
  try {
    await Deno.symlink(`${cwd}/src`, `${cwd}/link`);
    const asked: string[] = [];
    const onlyCwd = (dir: string) => {
      asked.push(dir);
      return dir === cwd;
    };
    assert.deepEqual((await complete("cat re", undefined, cwd, bin, onlyCwd)).candidates, [
      "readme.md",
      "report.csv",
    ]);
    assert.deepEqual(await complete("cat src/m", undefined, cwd, bin, onlyCwd), {
      candidates: [],
      start: 4,
    });
    assert.deepEqual((await complete("cat link/", undefined, cwd, bin, onlyCwd)).candidates, []);
    assert.deepEqual((await complete("cat nowhere/", undefined, cwd, bin, onlyCwd)).candidates, []);
    assert.deepEqual(asked, [cwd, `${cwd}/src`, `${cwd}/src`]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("K-COMP-1: no path candidates without a cwd (unattached)", async () => {
  const { root, bin } = await fixture();
  try {
    assert.deepEqual(await complete("cat re", undefined, null, bin, ANYWHERE), {
      candidates: [],
      start: 4,
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("K-COMP-1: cursor is a clamped UTF-8 byte offset moved back to a scalar start", async () => {
  const { root, cwd, bin } = await fixture();
  try {
    // "cat é" is 6 bytes; offset 5 is inside "é" and moves back to 4.
    assert.deepEqual(await complete("cat é", 5, cwd, bin, ANYWHERE), {
      candidates: ["readme.md", "report.csv", "src/", "é.txt"],
      start: 4,
    });
    assert.deepEqual(await complete("cat é", 6, cwd, bin, ANYWHERE), {
      candidates: ["é.txt"],
      start: 4,
    });
    assert.deepEqual(await complete("cat é", 1000, cwd, bin, ANYWHERE), {
      candidates: ["é.txt"],
      start: 4,
    });
    assert.deepEqual(await complete("gi", -5, cwd, bin, ANYWHERE), {
      candidates: (await complete("", 0, cwd, bin, ANYWHERE)).candidates,
      start: 0,
    });
    const cut = await complete("cat readme.md", 6, cwd, bin, ANYWHERE);
    assert.deepEqual(cut, { candidates: ["readme.md", "report.csv"], start: 4 });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("K-COMP-1: candidates are sorted, unique and at most 200", async () => {
  const root = await Deno.makeTempDir({ prefix: "shoal-complete-" });
  try {
    for (let i = 0; i < 250; i++) await Deno.writeTextFile(`${root}/f${1000 - i}`, "");
    const { candidates } = await complete("cat f", undefined, root, "", ANYWHERE);
    assert.equal(candidates.length, MAX_COMPLETIONS);
    assert.deepEqual(candidates, [...candidates].sort());
    assert.equal(new Set(candidates).size, candidates.length);
    assert.equal(candidates[0], "f1000");
    const all = await complete("", undefined, root, `${root}:${root}`, ANYWHERE);
    assert.equal(new Set(all.candidates).size, all.candidates.length);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
