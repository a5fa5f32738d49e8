/**
 * Disk full (issue 13): the state directory on a 4 MiB tmpfs (needs root and Linux; skipped with
 * the reason otherwise), the whole stack (MCP client → facade → autostarted kernel). An exec
 * whose output cannot fit (8 MB; then 2 MB beside a 3 MiB ballast file) must fail with an error
 * naming the state directory, without a hang, while another client's execs keep working; the
 * journal stays intact with no unfinished row, no spool or partial blob is left, and once the
 * ballast is removed the same exec succeeds.
 *
 *   deno run -A scripts/stress/disk_full.ts
 */
import { connectMcp, type Mcp, type ToolReply } from "../../tests/e2e/_mcp.ts";
import { kernelPids } from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { mountTmpfs, unmount, usedBytes } from "../../tests/_support/tmpfs.ts";
import { waitUntil } from "../../tests/_support/wait.ts";
import { mib, Report } from "./report.ts";
import { casFacts, journalFacts, spoolOrphans } from "./state_facts.ts";

const MiB = 1024 * 1024;
const CALL = { timeout: 60_000 };

const box = await sandbox();
const report = new Report("disk full: state directory on a 4 MiB tmpfs");
const mountPoint = `${box.dir}/state`;
const problem = mountTmpfs(mountPoint, "4m");
const clients: Mcp[] = [];
try {
  if (problem !== null) {
    report.skip("disk full", problem);
  } else {
    const state = `${mountPoint}/shoal`;
    const socket = box.socket();
    const env = { SHOAL_SOCKET: socket };
    const [main, other] = [
      await connectMcp(box, env),
      await connectMcp(box, { ...env, SHOAL_SESSION: "other" }),
    ];
    clients.push(main, other);
    await main.ok("shoal_exec", { src: "echo before" });
    /** Runs `src` while the other client keeps exec'ing; its reply and the other's failures. */
    const underLoad = async (src: string) => {
      let done = false;
      let otherOk = 0;
      let otherFailed = 0;
      const loop = (async () => {
        for (let i = 0; !done && i < 1000; i++) {
          const r = await other.call("shoal_exec", { src: `echo other-${i}` }, CALL).catch(() =>
            null
          );
          if (r !== null && !r.isError) otherOk++;
          else otherFailed++;
        }
      })();
      const t0 = performance.now();
      const reply = await main.call("shoal_exec", { src }, CALL).catch((e) => e as Error);
      const ms = performance.now() - t0;
      done = true;
      await loop;
      return { reply, ms, otherOk, otherFailed };
    };
    const namesState = (reply: ToolReply | Error) =>
      !(reply instanceof Error) && reply.isError &&
      String(reply.structuredContent.message).includes(state);
    const cases = [
      { label: "8 MB output, 4 MiB disk", src: "head -c 8000000 /dev/zero", ballast: 0 },
      { label: "2 MB output, 3 MiB ballast", src: "head -c 2000000 /dev/zero", ballast: 3 },
    ];
    const ballast = `${mountPoint}/ballast`;
    for (const { label, src, ballast: size } of cases) {
      if (size > 0) Deno.writeFileSync(ballast, new Uint8Array(size * MiB));
      const before = usedBytes(state);
      const run = await underLoad(src);
      const text = run.reply instanceof Error
        ? String(run.reply)
        : String(run.reply.structuredContent.message);
      console.log(`  ${label}: ${text.slice(0, 200)}`);
      report.add(
        "exec fails with an error naming the state dir",
        "yes, no hang",
        `${namesState(run.reply) ? "yes" : "no"} (${run.ms.toFixed(0)} ms)`,
        namesState(run.reply),
        label,
      );
      report.add(
        "other client's execs meanwhile: ok (failed)",
        "≥ 1 (0)",
        `${run.otherOk} (${run.otherFailed})`,
        run.otherOk >= 1 && run.otherFailed === 0,
        label,
      );
      const left = spoolOrphans(state);
      const grew = usedBytes(state) - before;
      report.add(
        "spool files left; disk use growth (all clients)",
        "0; < 1 MiB",
        `${left.length}; ${mib(grew)}`,
        left.length === 0 && grew < MiB,
        label,
      );
    }
    const journal = journalFacts(state);
    report.add(
      "PRAGMA integrity_check; unfinished rows",
      "ok; 0",
      `${journal.integrity.join(" ")}; ${journal.rows - journal.finished}`,
      journal.integrity.join(" ") === "ok" && journal.rows === journal.finished,
      "after both failures",
    );
    const cas = casFacts(state);
    report.add(
      "CAS blobs not matching their hash",
      "0",
      `${cas.bad.length} of ${cas.blobs}`,
      cas.bad.length === 0,
      "after both failures",
    );
    Deno.removeSync(ballast);
    const again = await main.call("shoal_exec", { src: cases[1].src }, CALL);
    const n = (again.structuredContent.value as { out?: { n?: number } } | undefined)?.out?.n;
    report.add(
      "the same exec once space is freed",
      "ok, 2000000 bytes",
      again.isError ? JSON.stringify(again.structuredContent).slice(0, 80) : `ok, ${n} bytes`,
      !again.isError && n === 2_000_000,
      "ballast removed",
    );
  }
} finally {
  await Promise.all(clients.map((mcp) => mcp.close().catch(() => {})));
  const kernels = kernelPids(box.socket());
  for (const pid of kernels) Deno.kill(pid, "SIGTERM");
  await waitUntil(() => kernelPids(box.socket()).length === 0, 10_000);
  for (const pid of kernelPids(box.socket())) Deno.kill(pid, "SIGKILL");
  if (problem === null) unmount(mountPoint);
  await box.cleanup();
  report.finish();
}
