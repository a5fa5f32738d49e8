import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Blanks, DIRS, FILES } from "../../../src/kernel/store/blanks.ts";
import type { Cas } from "../../../src/kernel/store/cas.ts";
import { exec } from "../../_support/exec.ts";
import { startKernel } from "../../_support/kernel.ts";
import { waitUntil } from "../../_support/wait.ts";
import { capture, withCas } from "../values/_fixtures.ts";

const encoder = new TextEncoder();

/** Inode numbers of the blanks that process `pid` made in `tmp/`, files and directories apart. */
function blankInodes(tmp: string, pid = Deno.pid): { files: Set<number>; dirs: Set<number> } {
  const files = new Set<number>();
  const dirs = new Set<number>();
  for (const entry of Deno.readDirSync(tmp)) {
    if (!entry.name.startsWith(`blank-${pid}-`)) continue;
    (entry.isDirectory ? dirs : files).add(Deno.statSync(`${tmp}/${entry.name}`).ino!);
  }
  return { files, dirs };
}

/** Runs `fn` with a CAS that takes blanks from a pool that is full, and closes the pool after. */
async function withBlanks(
  fn: (cas: Cas, blanks: Blanks, tmp: string) => Promise<void> | void,
) {
  await withCas(async (cas) => {
    const blanks = Blanks.open(cas.tmpDir);
    cas.useBlanks(blanks);
    try {
      await blanks.settled();
      await fn(cas, blanks, cas.tmpDir);
    } finally {
      await blanks.close();
    }
  });
}

Deno.test("a new blob and its fan-out directories are blanks made ahead of time, renamed into place (issue 10)", async () => {
  await withBlanks(async (cas, blanks, tmp) => {
    const ready = blankInodes(tmp);
    assert.equal(ready.files.size > 0 && ready.dirs.size >= 2, true, "the pool fills itself");
    const bytes = encoder.encode("new bytes\n");
    const path = cas.blobPath(cas.put(bytes));
    assert.deepEqual(Deno.readFileSync(path), bytes);
    const blob = Deno.statSync(path);
    assert.equal(ready.files.has(blob.ino!), true, "the blob is a blank file, not a new inode");
    assert.equal(blob.mode! & 0o777, 0o600);
    for (const dir of [path.slice(0, path.lastIndexOf("/")), path.slice(0, -68)]) {
      const stat = Deno.statSync(dir);
      assert.equal(ready.dirs.has(stat.ino!), true, `${dir} is a blank directory`);
      assert.equal(stat.mode! & 0o777, 0o700);
    }
    // A spool (output beyond what is held in memory) starts as a blank too.
    await blanks.settled();
    const spools = blankInodes(tmp).files;
    const { blob: big } = await capture(cas, "x".repeat(200_000));
    assert.equal(spools.has(Deno.statSync(cas.blobPath(big.hash)).ino!), true);
  });
});

Deno.test("the pool tops itself up after takes, and close removes every blank not taken", async () => {
  await withBlanks(async (cas, blanks, tmp) => {
    const full = blankInodes(tmp);
    for (let i = 0; i < 20; i++) cas.put(encoder.encode(`blob ${i}`));
    await blanks.settled();
    const after = blankInodes(tmp);
    assert.equal(after.files.size, full.files.size);
    assert.equal(after.dirs.size, full.dirs.size);
    await blanks.close();
    assert.deepEqual([...Deno.readDirSync(tmp)], []);
    assert.equal(blanks.file(), null, "a closed pool makes no more");
    await blanks.settled();
    assert.deepEqual([...Deno.readDirSync(tmp)], []);
  });
});

Deno.test("blanks removed behind the pool's back: new blobs are still stored, in files of their own", async () => {
  await withBlanks((cas, _blanks, tmp) => {
    for (const entry of Deno.readDirSync(tmp)) Deno.removeSync(`${tmp}/${entry.name}`);
    for (let i = 0; i < 10; i++) {
      const bytes = encoder.encode(`after removal ${i}`);
      assert.deepEqual(Deno.readFileSync(cas.blobPath(cas.put(bytes))), bytes);
    }
  });
});

Deno.test("opening a pool sweeps blanks of kernels that are gone and of an earlier self, not a running kernel's", async () => {
  await withCas(async (cas) => {
    const tmp = cas.tmpDir;
    const ended = new Deno.Command("true").spawn();
    await ended.status;
    const sleeper = new Deno.Command("sleep", { args: ["30"] }).spawn();
    try {
      const names = {
        gone: `blank-${ended.pid}-a`,
        goneDir: `blank-${ended.pid}-b`,
        self: `blank-${Deno.pid}-stale`,
        running: `blank-${sleeper.pid}-c`,
        spool: "0123abcd",
      };
      for (const name of [names.gone, names.self, names.running, names.spool]) {
        Deno.writeFileSync(`${tmp}/${name}`, new Uint8Array());
      }
      Deno.mkdirSync(`${tmp}/${names.goneDir}`);
      const blanks = Blanks.open(tmp);
      await blanks.close();
      const left = [...Deno.readDirSync(tmp)].map((e) => e.name).sort();
      assert.deepEqual(left, [names.spool, names.running].sort());
    } finally {
      sleeper.kill("SIGKILL");
      await sleeper.status;
    }
  });
});

Deno.test("the kernel stores a new output in a blank it made ahead of time, and leaves none at shutdown", async () => {
  const k = await startKernel();
  const state = `${k.box.dir}/state/shoal`;
  try {
    const conn = await k.attach();
    await exec(conn, "true");
    // The pool full and idle: the next blanks taken are among these.
    let ready = blankInodes(`${state}/tmp`, k.child.pid);
    const full = () => {
      ready = blankInodes(`${state}/tmp`, k.child.pid);
      return ready.files.size === FILES && ready.dirs.size === DIRS;
    };
    assert.ok(await waitUntil(full, 10_000), "the kernel fills its pool");
    const text = `new output ${crypto.randomUUID()}\n`;
    await exec(conn, `printf '%s' '${text.trimEnd()}'; echo`);
    const hex = createHash("sha256").update(text).digest("hex");
    const blob = Deno.statSync(`${state}/cas/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`);
    assert.equal(ready.files.has(blob.ino!), true, "the stdout blob is one of the kernel's blanks");
    assert.equal(await k.stop(), 0);
    assert.deepEqual([...Deno.readDirSync(`${state}/tmp`)].map((e) => e.name), []);
  } finally {
    await k.cleanup();
  }
});
