/**
 * bin/shoal-mcp keeps mcp_flags.ts's answers under a checksum of what each depends on:
 * a start whose environment differs only in variables the facade never reads (a client's or a
 * terminal's per-start ids) takes the kept flags, one Deno process instead of two.
 */
import assert from "node:assert/strict";
import { FACADE_ENV } from "../../src/mcp/permissions.ts";
import { REPO, sandbox } from "../_support/sandbox.ts";

/** The kept answers (`.tools/mcp_flags.ID`): each file's name and inode (a new answer, a new one). */
function keptAnswers(): Map<string, number> {
  const kept = new Map<string, number>();
  for (const entry of Deno.readDirSync(`${REPO}/.tools`)) {
    if (!/^mcp_flags\.\d+$/.test(entry.name)) continue;
    kept.set(entry.name, Deno.statSync(`${REPO}/.tools/${entry.name}`).ino!);
  }
  return kept;
}

/** Runs `bin/shoal-mcp --version` under `env`; the name of the answer written last after it. */
async function versionThenNewest(env: Record<string, string>): Promise<string> {
  const out = await new Deno.Command(`${REPO}/bin/shoal-mcp`, {
    args: ["--version"],
    env,
    clearEnv: true,
    stdin: "null",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const mtime = (name: string) => Deno.statSync(`${REPO}/.tools/${name}`).mtime!.getTime();
  return [...keptAnswers().keys()].sort((a, b) => mtime(b) - mtime(a))[0];
}

/** Runs `bin/shoal-mcp --version` under `env`; the inode of the answer written last after it. */
async function versionThenCache(env: Record<string, string>): Promise<number> {
  return Deno.statSync(`${REPO}/.tools/${await versionThenNewest(env)}`).ino!;
}

Deno.test("bin/shoal-mcp: variables the facade does not read leave the kept flags in use; one it reads asks again", async () => {
  const box = await sandbox();
  try {
    const first = await versionThenCache(box.env({ VSCODE_PID: "1", TERM_SESSION_ID: "a" }));
    const other = await versionThenCache(box.env({ VSCODE_PID: "2", TERM_SESSION_ID: "b" }));
    assert.equal(other, first, "the kept answer was used, not written again");
    const session = await versionThenCache(
      box.env({ VSCODE_PID: "2", TERM_SESSION_ID: "b", SHOAL_SESSION: "elsewhere" }),
    );
    assert.notEqual(session, first, "SHOAL_SESSION is read by the facade: flags asked again");
  } finally {
    await box.cleanup();
  }
});

Deno.test("bin/shoal-mcp: the variables of its key are FACADE_ENV's, each one's change asks again", async () => {
  const script = Deno.readTextFileSync(`${REPO}/bin/shoal-mcp`);
  const names = script.match(/for name in ([A-Z_ \\\n]+); do/)![1].split(/[\s\\]+/).filter(Boolean);
  assert.deepEqual(names, [...FACADE_ENV]);
  const box = await sandbox();
  try {
    const base = await versionThenCache(box.env());
    assert.equal(await versionThenCache(box.env()), base, "the same environment: kept");
    let last = base;
    for (const name of FACADE_ENV.filter((n) => n !== "PATH" && n !== "HOME")) {
      const changed = await versionThenCache(box.env({ [name]: `${box.dir}/changed` }));
      assert.notEqual(changed, last, `${name} changed: flags asked again`);
      last = changed;
    }
  } finally {
    await box.cleanup();
  }
});

Deno.test("bin/shoal-mcp: two configurations started in turn (two projects' clients) each keep their answer: neither asks again", async () => {
  const box = await sandbox();
  try {
    // many pairs of unrelated projects: with one of 16 files picked by a checksum, 1 pair in 16
    // shared one (4 in 5 runs of this test would meet such a pair)
    for (let i = 0; i < 24; i++) {
      const first = box.env({ SHOAL_PROJECT: `${box.dir}/${crypto.randomUUID()}` });
      const second = box.env({ SHOAL_PROJECT: `${box.dir}/${crypto.randomUUID()}` });
      const kept = [await versionThenNewest(first), await versionThenNewest(second)];
      assert.notEqual(kept[0], kept[1], `pair ${i}: one file for two configurations`);
      // Only this pair's two answers are compared: facades started elsewhere on this checkout
      // (a developer's, another test run's) may write and evict answers of their own meanwhile.
      const inodes = (answers: Map<string, number>) => kept.map((name) => answers.get(name));
      const before = inodes(keptAnswers());
      await versionThenCache(first);
      await versionThenCache(second);
      assert.deepEqual(
        inodes(keptAnswers()),
        before,
        `pair ${i}: an answer was asked for and written again`,
      );
    }
  } finally {
    await box.cleanup();
  }
});

Deno.test("bin/shoal-mcp: past 16 configurations the answers written last are kept, 16 of them", async () => {
  const box = await sandbox();
  try {
    let newest = "";
    for (let i = 0; i < 20; i++) {
      newest = await versionThenNewest(box.env({ SHOAL_SESSION: `many${i}` }));
    }
    const kept = keptAnswers();
    assert.equal(kept.size, 16, [...kept.keys()].join(" "));
    assert.ok(kept.has(newest), "the answer written last is kept");
  } finally {
    await box.cleanup();
  }
});

Deno.test("bin/shoal-mcp: a kept answer's first line is a short stamp, not the whole key; one whose stamp differs asks again", async () => {
  const box = await sandbox();
  try {
    const name = await versionThenNewest(box.env());
    const path = `${REPO}/.tools/${name}`;
    const [stamp, ...flags] = Deno.readTextFileSync(path).split("\n");
    // the shell reads this file a byte at a time at every start: the key of ~60 checksums made
    // its first line 3.6 KB (issue 33)
    assert.ok(stamp.length <= 40 + REPO.length, `first line of ${stamp.length} bytes`);
    assert.equal(await versionThenCache(box.env()), Deno.statSync(path).ino, "kept: used again");
    // another configuration that met this one's file name (a checksum collision) has another stamp
    Deno.writeTextFileSync(path, [`1 ${stamp}`, ...flags].join("\n"));
    const before = Deno.statSync(path).ino;
    assert.notEqual(await versionThenCache(box.env()), before, "another stamp: flags asked again");
  } finally {
    await box.cleanup();
  }
});
