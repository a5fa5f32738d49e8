import assert from "node:assert/strict";
import { statfsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { freeFloor } from "../../../src/kernel/store/free_space.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { kernelUntilExit, leftInTmp, startKernel, type TestKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { mountTmpfs, unmount, usedBytes } from "../../_support/tmpfs.ts";

const MiB = 1024 * 1024;
/** How long a call may take before the test calls it a hang (a full disk once hung the exec). */
const HANG_MS = 30_000;

/** `p`, or a rejection after {@link HANG_MS}. */
function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${what}: no answer within ${HANG_MS} ms`)),
        HANG_MS,
      );
    }),
  ]);
}

/**
 * Runs `body` with a kernel whose state directory lies on a tmpfs of `size` (mount(8) syntax),
 * then stops it and removes everything; skips (saying why) where no tmpfs can be mounted.
 */
async function withStateOnTmpfs(
  size: string,
  body: (kernel: TestKernel, state: string, box: Sandbox) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const mounted = mountTmpfs(`${box.dir}/state`, size);
  if (mounted !== null) {
    console.log(`skipped: ${mounted}`);
    await box.cleanup();
    return;
  }
  const kernel = await startKernel([], box);
  try {
    await body(kernel, `${box.dir}/state/shoal`, box);
  } finally {
    await bounded(kernel.stop(), "the kernel's shutdown").catch(() => kernel.child.kill("SIGKILL"));
    unmount(`${box.dir}/state`);
    await box.cleanup();
  }
}

hostTest(
  "a full state directory fails the exec with an error naming it, leaves no partial files, " +
    "and execs work again once space is freed (G-STATE-2, J-4)",
  needsLinux("a tmpfs mount") ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  () =>
    withStateOnTmpfs("4m", async (kernel, state, box) => {
      const conn = await kernel.attach();
      await exec(conn, "echo before");
      const ballast = `${box.dir}/state/ballast`;
      Deno.writeFileSync(ballast, new Uint8Array(3 * MiB));
      const usedBefore = usedBytes(state);
      const big = "head -c 2000000 /dev/zero";
      for (const extra of [{}, { timeout_ms: 60_000 }]) {
        const e = await rpcError(bounded(exec(conn, big, extra), "the exec on a full disk"));
        assert.equal(e.code, -32603);
        assert.ok(e.message.includes(state), `the error names ${state}: ${e.message}`);
      }
      // The kernel keeps serving, on this connection and on another.
      const other = await kernel.attach("other");
      assert.deepEqual(((await exec(other, "echo alive")).value as Rec).out, {
        $: "str",
        v: "alive\n",
      });
      // No spool or partial blob is left behind, and no task stays running.
      assert.deepEqual(leftInTmp(state), []);
      assert.ok(usedBytes(state) - usedBefore < 512 * 1024, "the partial output was removed");
      const tasks = await conn.request("task.list", {}) as Rec[];
      assert.deepEqual(tasks.filter((t) => t.state === "running"), []);
      // The journal is intact and holds no unfinished row.
      const db = new DatabaseSync(`${state}/journal.db`, { readOnly: true });
      try {
        assert.deepEqual(db.prepare("PRAGMA integrity_check").all().map((r) => r.integrity_check), [
          "ok",
        ]);
        const open = db.prepare("SELECT count(*) AS n FROM entries WHERE dur_ns IS NULL").get();
        assert.equal(open?.n, 0);
      } finally {
        db.close();
      }
      Deno.removeSync(ballast);
      const again = await bounded(exec(conn, big, { position: "value" }), "the exec after freeing");
      assert.equal(((again.value as Rec).out as Rec).n, 2_000_000);
    }),
);

hostTest(
  "a run's output stops being stored before the state directory's file system is full: the run fails as on a full disk, naming the state directory, and the file system keeps its floor free for other programs",
  needsLinux("a tmpfs mount") ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  () =>
    withStateOnTmpfs("64m", async (kernel, state) => {
      let lowest = Infinity;
      const watch = setInterval(() => {
        const fs = statfsSync(state);
        lowest = Math.min(lowest, fs.bavail * fs.bsize);
      }, 1);
      try {
        const conn = await kernel.attach();
        const floor = freeFloor(statfsSync(state).blocks * statfsSync(state).bsize);
        const e = await rpcError(
          bounded(exec(conn, "head -c 100000000 /dev/zero"), "the big exec"),
        );
        assert.equal(e.code, -32603);
        assert.ok(e.message.includes(state), `the error names ${state}: ${e.message}`);
        assert.match(e.message, /leaves .* MiB of it to other programs/);
        assert.ok(lowest >= floor - 2 * MiB, `free space fell to ${lowest}, below ${floor}`);
        assert.deepEqual(leftInTmp(state), []);
        // output that leaves the floor free is stored as before
        const fits = await bounded(
          exec(conn, "head -c 20000000 /dev/zero", { position: "value" }),
          "a fitting exec",
        );
        assert.equal(((fits.value as Rec).out as Rec).n, 20_000_000);
      } finally {
        clearInterval(watch);
      }
    }),
);

hostTest(
  "J-2/K-JQ-1 a run that fills the state directory itself, so that neither its output nor its failed row can be written, has its row closed as failed once the disk takes writes again, not left running for good",
  needsLinux("a tmpfs mount") ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  () =>
    withStateOnTmpfs("4m", async (kernel, _state, box) => {
      const conn = await kernel.attach();
      await exec(conn, "echo before");
      const ballast = `${box.dir}/state/ballast`;
      const src = `echo x; dd if=/dev/zero of=${ballast} bs=4k 2>/dev/null; true`;
      const e = await rpcError(bounded(exec(conn, src), "the exec that fills the disk"));
      assert.equal(e.code, -32603);
      Deno.removeSync(ballast);
      await exec(conn, "echo after");
      const rows = await conn.request("journal.query", {}) as Rec[];
      assert.deepEqual(rows.map((r) => [r.src, r.ok]), [
        ["echo after", true],
        [src, false],
        ["echo before", true],
      ]);
      assert.notEqual(rows[1].dur_ns, null, "the failed run's row is finished");
      const failed = await conn.request("journal.query", { ok: false }) as Rec[];
      assert.deepEqual(failed.map((r) => r.src), [src]);
    }),
);

hostTest(
  "G-STATE-2/J-1 a kernel started on a state directory whose file system is full exits 1 saying the file system is full, not only SQLite's 'disk I/O error'; it starts once space is freed",
  needsLinux("a tmpfs mount") ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  () =>
    withStateOnTmpfs("4m", async (kernel, state, box) => {
      await exec(await kernel.attach(), "echo before");
      assert.equal(await kernel.stop(), 0);
      const ballast = `${box.dir}/state/ballast`;
      new Deno.Command("dd", { args: ["if=/dev/zero", `of=${ballast}`, "bs=4k"], stderr: "null" })
        .outputSync();
      const r = await kernelUntilExit(box, ["--socket", box.socket()]);
      assert.equal(r.code, 1, r.stderr);
      assert.ok(r.stderr.includes(`${state}/journal.db`), r.stderr);
      assert.match(r.stderr, /file system is full/, r.stderr);
      Deno.removeSync(ballast);
      const again = await startKernel([], box);
      try {
        const rows = await (await again.attach()).request("journal.query", {}) as Rec[];
        assert.deepEqual(rows.map((row) => row.src), ["echo before"]);
      } finally {
        await again.stop();
      }
    }),
);

hostTest(
  "K-TASK-7/G-STATE-2 task.output of a background run whose output filled the state directory answers an error naming the state directory, not a bare 'internal error: No space left on device'",
  needsLinux("a tmpfs mount") ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  () =>
    withStateOnTmpfs("8m", async (kernel, state) => {
      const conn = await kernel.attach();
      const { task } = await exec(conn, "head -c 20000000 /dev/zero", { async: true });
      const done = await conn.request("task.await", { task, timeout_ms: 30000 }) as Rec;
      assert.equal(done.state, "failed");
      const e = await rpcError(conn.request("task.output", { task }));
      assert.equal(e.code, -32603);
      assert.ok(e.message.includes(state), `the error names ${state}: ${e.message}`);
      // the empty stderr reads as empty
      const err = await conn.request("task.output", { task, stream: "stderr" }) as Rec;
      assert.equal(err.data, "");
    }),
);

hostTest(
  "G-STATE-2/J-1 a kernel started on a state directory whose file system has no free inodes exits 1 saying the file system is full, not only SQLite's 'unable to open database file'",
  needsLinux("a tmpfs mount") ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  () =>
    withStateOnTmpfs("64m,nr_inodes=200", async (kernel, state, box) => {
      await exec(await kernel.attach(), "echo before");
      assert.equal(await kernel.stop(), 0);
      const files: string[] = [];
      try {
        for (let i = 0;; i++) {
          Deno.writeFileSync(`${box.dir}/state/f${i}`, new Uint8Array());
          files.push(`${box.dir}/state/f${i}`);
        }
      } catch {
        // no inode left
      }
      const r = await kernelUntilExit(box, ["--socket", box.socket()]);
      assert.equal(r.code, 1, r.stderr);
      assert.ok(r.stderr.includes(`${state}/journal.db`), r.stderr);
      assert.match(r.stderr, /file system is full: no free inodes/, r.stderr);
      for (const file of files) Deno.removeSync(file);
      const again = await startKernel([], box);
      await again.stop();
    }),
);
