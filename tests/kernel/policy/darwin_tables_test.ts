/**
 * Issue 15, analysis part, run on Linux: macOS option tables (BSD `sed -i SUFFIX`, `base64 -o`),
 * Homebrew's bin directories as system directories, and grants written through a link matching
 * the physical paths effects carry (`/tmp/**` on macOS, where `/tmp` is `/private/tmp`).
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { effectVerdict } from "../../../src/kernel/policy/evaluate.ts";
import { localHumanPolicy } from "../../../src/kernel/policy/leash.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

function effects(src: string, platform: string): Effect[] {
  return deriveEffects(parseBash(src), src, {
    cwd: "/w",
    env: {},
    changedEnv: new Set(),
    home: "/home/me",
    sessionCommands: new Set(),
    platform,
  }).effects;
}

const kinds = (list: Effect[]) => list.map((effect) => effect.kind);

Deno.test("issue 15: BSD sed -i/-I take the next word as the backup suffix on macOS", () => {
  assert.deepEqual(effects("sed -i '' 's/a/b/' f", "darwin")[0], {
    kind: "fs_write",
    paths: ["/w/f"],
  });
  assert.deepEqual(effects("sed -I .bak 's/a/b/' f", "darwin")[0], {
    kind: "fs_write",
    paths: ["/w/f", "/w/f.bak"],
  });
  // The script after the suffix is scanned: its `w` file is a write.
  assert.deepEqual(effects("sed -i '' '1w /tmp/zshrc' f", "darwin")[0], {
    kind: "fs_write",
    paths: ["/tmp/zshrc", "/w/f"],
  });
  // A suffix that looks like a script is not followed.
  assert.ok(kinds(effects("sed -i 's/x/y/' '1w out' f", "darwin")).includes("opaque"));
  // GNU sed reads the same words differently: `-i` takes no separate suffix.
  assert.deepEqual(effects("sed -i 's/a/b/' f", "linux")[0], { kind: "fs_write", paths: ["/w/f"] });
});

Deno.test("issue 15: base64 -o FILE writes FILE on macOS", () => {
  assert.deepEqual(effects("base64 -i in -o out", "darwin").slice(0, 2), [
    { kind: "fs_read", paths: ["/w/in"] },
    { kind: "fs_write", paths: ["/w/out"] },
  ]);
  assert.deepEqual(effects("base64 -d in", "linux")[0], { kind: "fs_read", paths: ["/w/in"] });
});

Deno.test("issue 15: Homebrew's bin directories hold system programs on macOS only", () => {
  assert.deepEqual(effects("/opt/homebrew/bin/cat x", "darwin")[0], {
    kind: "fs_read",
    paths: ["/w/x"],
  });
  assert.ok(kinds(effects("/opt/homebrew/bin/cat x", "linux")).includes("opaque"));
});

Deno.test("issue 15: a grant written through a link matches the physical paths effects carry", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/private/tmp`, { recursive: true });
    await Deno.symlink(`${dir}/private/tmp`, `${dir}/tmp`);
    const policy = { ...localHumanPolicy(), fs_write: [`${dir}/tmp/**`] };
    const src = `echo x > ${dir}/tmp/a`;
    const [write] = deriveEffects(parseBash(src), src, {
      cwd: "/",
      env: {},
      changedEnv: new Set(),
      home: undefined,
      sessionCommands: new Set(),
    }).effects;
    assert.deepEqual(write, { kind: "fs_write", paths: [`${dir}/private/tmp/a`] });
    assert.equal(effectVerdict(policy, write, undefined), "allow");
    const elsewhere: Effect = { kind: "fs_write", paths: [`${dir}/private/other`] };
    assert.equal(effectVerdict(policy, elsewhere, undefined), "deny");
  });
});
