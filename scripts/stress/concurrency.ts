/**
 * Concurrency (issue 13): 20 MCP clients, each with its own facade on one kernel, send 50 execs
 * each at once — 10 clients alone in their session, 10 sharing two sessions five by five. Exec
 * `i` of client `c` exports `C<c>_<i>=<i>` and echoes `c<c>-<i>`; every answer is checked, and
 * afterwards each client lists the `C*` variables of its session, which must be exactly those its
 * session's clients set (K-BASH-2/4: concurrent execs merge their changes in completion order).
 * Prints errors (0), journal rows (1,000 exec rows) and mismatching sessions (0).
 *
 *   deno run -A scripts/stress/concurrency.ts [--clients N] [--execs M]
 */
import { connectMcp, type Mcp } from "../../tests/e2e/_mcp.ts";
import { kernelPid, processLive } from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { ErrorCode } from "../../src/protocol/errors.ts";
import { intFlag, Report } from "./report.ts";
import { journalFacts } from "./state_facts.ts";

/** Calls wait as long as 1,000 queued execs may take on a loaded machine, not the SDK's 60 s. */
const CALL = { timeout: 600_000 };
const CLIENTS = intFlag(Deno.args, "clients", 20);
const EXECS = intFlag(Deno.args, "execs", 50);

/** The session of client `c`: the first half alone, the rest five to a shared session. */
function sessionOf(c: number): string {
  const half = Math.floor(CLIENTS / 2);
  return c < half ? `solo-${c}` : `shared-${Math.floor((c - half) / 5)}`;
}

const box = await sandbox();
const socket = box.socket();
const load = `${CLIENTS} facades x ${EXECS} execs at once`;
const report = new Report(`concurrency: ${load}`);
const clients: Mcp[] = [];
try {
  // The first client autostarts the kernel; the others connect to it.
  for (let c = 0; c < CLIENTS; c++) {
    clients.push(await connectMcp(box, { SHOAL_SOCKET: socket, SHOAL_SESSION: sessionOf(c) }));
  }
  let errors = 0;
  let refused = 0;
  const succeeded = new Set<string>();
  const note = (what: string) => {
    if (errors++ < 5) console.log(what.slice(0, 400));
  };
  const t0 = performance.now();
  await Promise.all(clients.flatMap((mcp, c) =>
    Array.from({ length: EXECS }, async (_, i) => {
      const src = `export C${c}_${i}=${i}; echo c${c}-${i}`;
      try {
        const reply = await mcp.call("shoal_exec", { src }, CALL);
        const sc = reply.structuredContent;
        if (reply.isError && sc.code === ErrorCode.QUOTA_EXCEEDED) refused++;
        else if (reply.isError || !JSON.stringify(sc).includes(`c${c}-${i}\\n`)) {
          note(`client ${c} exec ${i}: ${JSON.stringify(sc)}`);
        } else succeeded.add(`C${c}_${i}=${i}`);
      } catch (e) {
        note(`client ${c} exec ${i}: ${e}`);
      }
    })
  ));
  const seconds = (performance.now() - t0) / 1000;
  console.log(`note: ${CLIENTS * EXECS} execs in ${seconds.toFixed(1)} s`);
  report.add("exec errors (besides the E-2 tasks quota)", "0", errors, errors === 0, load);
  // M-PROG-1 sends every shoal_exec with a timeout_ms slice, so each counts against the 64
  // non-terminal tasks of its session (E-2, K-EXEC-2 step 4) while it runs.
  report.add(
    "-32040 tasks quota refusals",
    "0 where ≤ 64 in flight",
    refused,
    true,
    `${load}; shared sessions hold ${5 * EXECS} in flight`,
  );
  const journal = journalFacts(`${box.dir}/state/shoal`);
  const execRows = [...journal.bySrc.keys()].filter((src) => src.startsWith("export C")).length;
  report.add(
    "journal rows (finished)",
    `= ${succeeded.size} execs run`,
    `${execRows} (${journal.finished})`,
    execRows === succeeded.size && journal.finished === journal.rows,
    load,
  );
  const expected = new Map<string, string[]>();
  for (let c = 0; c < CLIENTS; c++) {
    const names = expected.get(sessionOf(c)) ?? [];
    for (let i = 0; i < EXECS; i++) {
      if (succeeded.has(`C${c}_${i}=${i}`)) names.push(`C${c}_${i}=${i}`);
    }
    expected.set(sessionOf(c), names);
  }
  let wrong = 0;
  for (const [c, mcp] of clients.entries()) {
    const reply = await mcp.call("shoal_exec", { src: "env | grep '^C[0-9]*_' | sort" });
    const out = (reply.structuredContent.value as { out: { v?: string } }).out.v ?? "";
    const got = out.split("\n").filter((l) => l !== "").sort().join(" ");
    const want = expected.get(sessionOf(c))!.sort().join(" ");
    if (got !== want) {
      wrong++;
      const have = new Set(got.split(" "));
      const missing = want.split(" ").filter((v) => !have.has(v));
      console.log(
        `client ${c} (${sessionOf(c)}): ${missing.length} missing, e.g. ${missing.slice(0, 5)}`,
      );
    }
  }
  report.add(
    "sessions whose state differs from its sequence",
    "0",
    `${wrong} of ${CLIENTS} clients`,
    wrong === 0,
    load,
  );
} finally {
  await Promise.all(clients.map((mcp) => mcp.close().catch(() => {})));
  try {
    const kernel = kernelPid(socket);
    if (processLive(kernel)) Deno.kill(kernel, "SIGTERM");
  } catch {
    // no kernel left
  }
  await box.cleanup();
  report.finish();
}
