/**
 * What a kernel starting removes of the placeholders an ended kernel recorded (P-SBX-6): only the
 * empty directories and files of their text that kernel made, also one it was killed making
 * (recorded only as intended).
 */
import assert from "node:assert/strict";
import { keepPlaceholderRecords } from "../../../src/kernel/sandbox/placeholder_records.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** Makes a directory as the kernel makes a placeholder: the mode of a new one, and sticky. */
function placeholderDir(path: string): void {
  Deno.mkdirSync(path);
  Deno.chmodSync(path, 0o1755);
}

/** The (device, inode, birth) identity a record names, as the kernel writes it. */
function identity(path: string): string {
  const info = Deno.lstatSync(path);
  return `${info.dev}:${info.ino}:${(info.birthtime ?? info.ctime)?.getTime() ?? ""}`;
}

Deno.test("an ended kernel's placeholders go, one recorded only as intended too; what is not its empty directory stays", async () => {
  await withTempDir((dir) => {
    const proj = `${dir}/proj`;
    const state = `${dir}/state`;
    const dead = `${state}/placeholders/999999999-1`; // no such process
    Deno.mkdirSync(proj);
    Deno.mkdirSync(dead, { recursive: true });
    let n = 0;
    const record = (fields: Record<string, unknown>) =>
      Deno.writeTextFileSync(`${dead}/${n++}.json`, JSON.stringify(fields));
    const now = Date.now();
    // killed between the record of its intent and its completion
    placeholderDir(`${proj}/.envrc`);
    record({ path: `${proj}/.envrc`, intended: now });
    // born long before the intent: the user's
    placeholderDir(`${proj}/.vscode`);
    record({ path: `${proj}/.vscode`, intended: now + 60_000 });
    // not sticky: the user's
    Deno.mkdirSync(`${proj}/.idea`, { mode: 0o755 });
    record({ path: `${proj}/.idea`, intended: now });
    // complete, then filled by the user
    placeholderDir(`${proj}/.claude`);
    const mode = Deno.lstatSync(`${proj}/.claude`).mode! & 0o7777;
    record({ path: `${proj}/.claude`, intended: now, identity: identity(`${proj}/.claude`), mode });
    Deno.writeTextFileSync(`${proj}/.claude/settings.json`, "mine");
    // complete and untouched
    placeholderDir(`${proj}/.mcp.json`);
    const made = identity(`${proj}/.mcp.json`);
    record({ path: `${proj}/.mcp.json`, intended: now, identity: made, mode });
    // torn by the kill
    Deno.writeTextFileSync(`${dead}/${n++}.json`, '{"path": "/x", "inten');

    const found = keepPlaceholderRecords(state);
    assert.deepEqual(found.removed.sort(), [`${proj}/.envrc`, `${proj}/.mcp.json`]);
    assert.deepEqual(found.kept.sort(), [`${proj}/.claude`, `${proj}/.idea`, `${proj}/.vscode`]);
    const left = [...Deno.readDirSync(proj)].map((e) => e.name).sort();
    assert.deepEqual(left, [".claude", ".idea", ".vscode"]);
    const owners = [...Deno.readDirSync(`${state}/placeholders`)].map((e) => e.name);
    assert.deepEqual(owners, [`${Deno.pid}-${owners[0].split("-")[1]}`], "only this process's own");
  });
});

Deno.test("an ended kernel's file placeholders go when they still hold their text, one it was killed writing too; one whose text changed stays", async () => {
  await withTempDir((dir) => {
    const proj = `${dir}/proj`;
    const state = `${dir}/state`;
    const dead = `${state}/placeholders/999999999-1`; // no such process
    Deno.mkdirSync(`${proj}/.git`, { recursive: true });
    Deno.mkdirSync(dead, { recursive: true });
    let n = 0;
    const record = (fields: Record<string, unknown>) =>
      Deno.writeTextFileSync(`${dead}/${n++}.json`, JSON.stringify(fields));
    const file = (name: string, text: string) => {
      Deno.writeTextFileSync(`${proj}/.git/${name}`, text, { mode: 0o444 });
      Deno.chmodSync(`${proj}/.git/${name}`, 0o444);
      return `${proj}/.git/${name}`;
    };
    const now = Date.now();
    const complete = (path: string, text: string) =>
      record({ path, intended: now, text, identity: identity(path), mode: 0o444 });
    // complete and untouched
    complete(file("commondir", ".\n"), ".\n");
    // killed before its text was written: empty
    record({ path: file("config.worktree", ""), intended: now, text: "" });
    // killed while writing: the start of its text
    record({ path: file("cut", "."), intended: now, text: ".\n" });
    // complete, then written by the user
    const changed = file("changed", ".\n");
    complete(changed, ".\n");
    Deno.chmodSync(changed, 0o644);
    Deno.writeTextFileSync(changed, "../x\n");
    Deno.chmodSync(changed, 0o444);
    // recorded as intended, but another text is there: the user's
    record({ path: file("other", "mine"), intended: now, text: ".\n" });
    // a directory where a file was recorded: not what was made
    Deno.mkdirSync(`${proj}/.git/dir`, { mode: 0o555 });
    record({ path: `${proj}/.git/dir`, intended: now, text: "" });

    const found = keepPlaceholderRecords(state);
    assert.deepEqual(found.removed.map((p) => p.slice(proj.length + 1)).sort(), [
      ".git/commondir",
      ".git/config.worktree",
      ".git/cut",
    ]);
    assert.deepEqual(found.kept.map((p) => p.slice(proj.length + 1)).sort(), [
      ".git/changed",
      ".git/dir",
      ".git/other",
    ]);
    assert.equal(Deno.readTextFileSync(changed), "../x\n");
  });
});

Deno.test("a file placeholder an ended kernel was killed writing aside goes, recorded only as intended; a writable file at that name stays", async () => {
  await withTempDir((dir) => {
    const git = `${dir}/proj/.git`;
    const state = `${dir}/state`;
    const dead = `${state}/placeholders/999999999-1`; // no such process
    Deno.mkdirSync(git, { recursive: true });
    Deno.mkdirSync(dead, { recursive: true });
    const now = Date.now();
    // killed after writing the start of its text aside, before the rename into place
    Deno.writeTextFileSync(`${git}/commondir.shoal-9-0`, ".", { mode: 0o444 });
    Deno.writeTextFileSync(
      `${dead}/0.json`,
      JSON.stringify({
        path: `${git}/commondir`,
        intended: now,
        text: ".\n",
        staged: `${git}/commondir.shoal-9-0`,
      }),
    );
    // that name is writable: not the kernel's
    Deno.writeTextFileSync(`${git}/config.worktree.shoal-9-1`, "", { mode: 0o644 });
    Deno.writeTextFileSync(
      `${dead}/1.json`,
      JSON.stringify({
        path: `${git}/config.worktree`,
        intended: now,
        text: "",
        staged: `${git}/config.worktree.shoal-9-1`,
      }),
    );

    const found = keepPlaceholderRecords(state);
    assert.deepEqual(found.removed, [`${git}/commondir.shoal-9-0`]);
    assert.deepEqual([...Deno.readDirSync(git)].map((e) => e.name), ["config.worktree.shoal-9-1"]);
  });
});
