// Benchmark: the cost of reading one principal's rows out of a journal that holds 1,000,000 of
// another's, and the cost of journaling a run, on the Journal (SQLite) alone.
// A journal gets 10 of agent:a's finished `git` runs, then --rows (1,000,000) of the human's,
// each with its `journal` and `session.transcript` events, as a kernel's run writes them. Then:
//  - journal.query by agent:a (no journal_read, so scoped to its own rows), limit 1, with each
//    filter of K-JQ-1 alone and all together: median of 5, in ms. These queries run on the
//    kernel's event loop: while one runs, the kernel answers no one.
//  - events.read of the journal (by principal) and session.transcript (by session) channels
//    narrowed to agent:a's events as the kernel reads them below the ring (K-EVT-8).
//  - journaling a run (start in its own transaction, then finish and its transcript event in
//    one batch, as run_source.ts does) on top of those rows: µs per run over 5,000 runs.
// --compare=<checkout>: the same with the Journal of another checkout (e.g. the code before a
// change: `git worktree add --detach /tmp/old main`), in a journal of its own; the runs of both
// are journaled in alternating turns of 100, so that the machine's load falls alike on each.
// Then this checkout opens the other's journal, as a kernel upgraded in place does (adding any
// index that journal lacks), and that open is timed.
// Run: deno run -A scripts/bench/journal_query.ts [--compare=<checkout>] [--rows=N]
import { parseArgs } from "node:util";
import type { JournalScope } from "../../src/kernel/journal/entry.ts";
import { Journal } from "../../src/kernel/journal/journal.ts";
import { journalQueryParams } from "../../src/kernel/journal/query_params.ts";
import { percentile } from "./percentile.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { compare: { type: "string" }, rows: { type: "string", default: "1000000" } },
});
const compare = values.compare;
const ROWS = Number(values.rows);
const OWN_ROWS = 10;
const RUNS = 5_000;
const TURN = 100;
const AGENT: JournalScope = { principal: "agent:a", journalRead: false };
const ALL_FILTERS = {
  head: "git",
  ok: true,
  since: 0,
  until: Number.MAX_SAFE_INTEGER,
  effects: ["proc_spawn"],
};
const QUERIES: Record<string, Record<string, unknown>> = {
  "{}": {},
  ...Object.fromEntries(
    Object.entries(ALL_FILTERS).map(([name, value]) => [`{${name}}`, { [name]: value }]),
  ),
  "{ok: false}": { ok: false },
  "{all five}": ALL_FILTERS,
};

type JournalClass = typeof Journal;
const encoder = new TextEncoder();
let ts = 1767225600000000000n;

/** Journals one finished run of `principal` in `session` as run_source.ts does. */
function journalRun(journal: Journal, principal: string, session: string, n: number): void {
  const id = journal.start({
    session,
    principal,
    ts_ns: ts++,
    cwd: encoder.encode("/home/me/proj"),
    src: `git log -n ${n}`,
    effects: [
      { kind: "fs_read", paths: ["/home/me/proj"] },
      { kind: "proc_spawn", argv0: "git", bin_hash: null },
    ],
  });
  journal.batch(() => {
    journal.finish(id, { dur_ns: 1_000_000n, status: 0, ok: true, outputs: [] });
    journal.appendEvent("session.transcript", {
      n,
      ref: `out:${n}`,
      session,
      summary: { type: "outcome", ok: true, cmd: `git log -n ${n}`, out_type: "text" },
    });
  });
}

/** A journal in a new directory with agent:a's few runs under the human's many. */
function filled(JournalOf: JournalClass, label: string): { journal: Journal; dir: string } {
  const dir = Deno.makeTempDirSync({ prefix: "journal_query_" });
  const journal = JournalOf.open(dir);
  const started = performance.now();
  for (let i = 0; i < OWN_ROWS; i++) journalRun(journal, "agent:a", "work", i);
  for (let done = 0; done < ROWS; done += 10_000) {
    journal.batch(() => {
      for (let i = done; i < Math.min(ROWS, done + 10_000); i++) {
        journalRun(journal, "uid:1000", "home", i);
      }
    });
  }
  console.log(
    `${label}: filled ${OWN_ROWS} + ${ROWS} runs in ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );
  return { journal, dir };
}

/** Median ms of 5 calls of `work`. */
function medianMs(work: () => unknown): number {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    work();
    samples.push(performance.now() - started);
  }
  return percentile(samples.sort((a, b) => a - b), 0.5);
}

/** What agent:a's reads cost in `journal`, by name, in ms. */
function readCosts(journal: Journal): Map<string, number> {
  const costs = new Map<string, number>();
  for (const [name, params] of Object.entries(QUERIES)) {
    const query = journalQueryParams.parse({ ...params, limit: 1 });
    costs.set(
      `journal.query ${name}`,
      medianMs(() => journal.query(query, AGENT)),
    );
  }
  costs.set(
    "events.read journal (principal)",
    medianMs(() => journal.readEvents("journal", -1, 1, undefined, "agent:a")),
  );
  costs.set(
    "events.read session.transcript (session)",
    medianMs(() => journal.readEvents("session.transcript", -1, 1, undefined, "work")),
  );
  return costs;
}

const ways: { label: string; JournalOf: JournalClass }[] = [{ label: "this", JournalOf: Journal }];
if (compare !== undefined) {
  const path = `${Deno.realPathSync(compare)}/src/kernel/journal/journal.ts`;
  ways.push({ label: "compare", JournalOf: (await import(`file://${path}`)).Journal });
}
const journals = ways.map(({ label, JournalOf }) => ({ label, ...filled(JournalOf, label) }));
try {
  const costs = journals.map(({ journal }) => readCosts(journal));
  console.log(`\nagent:a's reads, limit 1, ms (median of 5) at ${ROWS} of the human's runs`);
  console.log(`${"".padEnd(44)}${journals.map(({ label }) => label.padStart(10)).join("")}`);
  for (const name of costs[0].keys()) {
    const figures = costs.map((c) => c.get(name)!.toFixed(3).padStart(10)).join("");
    console.log(`${name.padEnd(44)}${figures}`);
  }

  const perRun = journals.map(() => [] as number[]);
  for (let done = 0; done < RUNS; done += TURN) {
    journals.forEach(({ journal }, w) => {
      for (let i = 0; i < TURN; i++) {
        const started = performance.now();
        journalRun(journal, "uid:1000", "home", done + i);
        perRun[w].push((performance.now() - started) * 1000);
      }
    });
  }
  console.log(`\njournaling a run (start; finish + transcript event), µs over ${RUNS} runs`);
  journals.forEach(({ label }, w) => {
    const sorted = perRun[w].sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    console.log(
      `${label.padEnd(10)} mean ${mean.toFixed(1)}  p50 ${percentile(sorted, 0.5).toFixed(1)}  ` +
        `p95 ${percentile(sorted, 0.95).toFixed(1)}`,
    );
  });

  if (journals.length > 1) {
    const { journal, dir } = journals[1];
    journal.close();
    const started = performance.now();
    const upgraded = Journal.open(dir);
    const openMs = performance.now() - started;
    journals[1].journal = upgraded;
    console.log(`\nthis checkout opening compare's journal: ${openMs.toFixed(0)} ms`);
    for (const [name, ms] of readCosts(upgraded)) {
      console.log(`${name.padEnd(44)}${ms.toFixed(3).padStart(10)}`);
    }
  }
} finally {
  for (const { journal, dir } of journals) {
    journal.close();
    Deno.removeSync(dir, { recursive: true });
  }
}
