/**
 * What the model reads: a corpus of everyday agent commands (listings, git, search, file reads,
 * process lists, large generated output, and the checkout's build and tests) run in a repository
 * checkout, through shoal (SDK client → shoal-mcp → autostarted kernel) and, when it is installed,
 * through `mcp-server-commands`. Per command it prints the raw stdout bytes of the same command
 * run directly and of shoal's run (from its journal row: outputs such as `ps` differ between
 * runs), shoal's text item, the JSON of shoal's structuredContent (what Claude Code and VS Code
 * hand the model), and the peer's text items (it sends no structuredContent), then the issue 16
 * targets, measured against shoal's own stdout.
 *
 *   deno run -A scripts/bench/context.ts REPO [--peer PATH_TO_mcp-server-commands/build/index.js]
 *
 * The peer is found at /tmp/peer/node_modules/mcp-server-commands/build/index.js by default
 * (`npm install --prefix /tmp/peer mcp-server-commands`); without it that column is skipped.
 */
import { parseArgs } from "node:util";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { byteLength } from "../../tests/_support/bytes.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { connectMcp } from "../../tests/e2e/_mcp.ts";

const DEFAULT_PEER = "/tmp/peer/node_modules/mcp-server-commands/build/index.js";
const CALL_TIMEOUT_MS = 900_000;
const KiB = 1024;

/** One command of the corpus; `small` marks the small complete outputs of the first target. */
interface Command {
  name: string;
  src: string;
  small?: boolean;
}

const FILE_LISTING = "git ls-files";
const CORPUS: Command[] = [
  { name: "ls -la", src: "ls -la", small: true },
  { name: "git status", src: "git status", small: true },
  { name: "git log --stat -n 30", src: "git log --stat -n 30" },
  { name: "git show HEAD~3", src: "git show HEAD~3", small: true },
  { name: "find (files)", src: "find . -path ./.git -prune -o -type f -print" },
  { name: "grep -rn import", src: "grep -rn --exclude-dir=.git import ." },
  { name: "wc -l tracked files", src: `wc -l $(${FILE_LISTING})` },
  {
    name: "cat lock file",
    src:
      `cat "$(${FILE_LISTING} | grep -E '(^|/)([^/]*-lock\\.[a-z]+|[^/]*\\.lock)$' | head -n 1)"`,
  },
  {
    name: "cat largest source",
    src: `cat "$(${FILE_LISTING} -z -- '*.ts' '*.js' '*.py' '*.go' '*.rs' '*.c' | ` +
      `xargs -0 ls -S | head -n 1)"`,
  },
  { name: "ps aux", src: "ps aux", small: true },
  { name: "seq 1 100000", src: "seq 1 100000" },
];

/** Build and test commands for the kind of checkout `repo` is, or a note why there are none. */
function buildCommands(repo: string): Command[] | string {
  const has = (path: string) => {
    try {
      Deno.statSync(`${repo}/${path}`);
      return true;
    } catch {
      return false;
    }
  };
  if (has("deno.json")) {
    return [
      { name: "deno lint", src: "deno lint 2>&1" },
      // The three smallest test files keep the run short on a large suite.
      {
        name: "deno test (3 files)",
        src: `deno test -A $(${FILE_LISTING} -z '*_test.ts' | xargs -0 ls -Sr | head -n 3) 2>&1`,
      },
    ];
  }
  if (has("package.json") && has("node_modules")) {
    return [
      { name: "tsc --noEmit", src: "npx tsc --noEmit 2>&1" },
      { name: "npm test", src: "npm test 2>&1" },
    ];
  }
  return "no deno.json, nor package.json with node_modules: build and test commands skipped";
}

/** The part of a journal row this bench reads (K-JQ-4). */
interface JournalRow {
  outputs: { kind: string; len: number }[];
}

/** A row of the table. */
interface Row {
  command: Command;
  raw: number;
  /** The stdout bytes of shoal's own run of the command. */
  stdout: number;
  text: number;
  structured: number;
  peer: number | null;
}

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: { peer: { type: "string", default: DEFAULT_PEER } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  console.error("usage: context.ts REPO [--peer PATH_TO_mcp-server-commands/build/index.js]");
  Deno.exit(2);
}
const repo = Deno.realPathSync(positionals[0]);
const peerPath = values.peer!;

const builds = buildCommands(repo);
const corpus = typeof builds === "string" ? CORPUS : [...CORPUS, ...builds];

const box = await sandbox();
const env = box.env();

/** The stdout bytes of `src` run directly by bash in the checkout. */
async function rawStdout(src: string): Promise<number> {
  const out = await new Deno.Command("bash", {
    args: ["-c", src],
    cwd: repo,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  }).output();
  return out.stdout.length;
}

let peer: Client | null = null;
let peerNote = "";
try {
  Deno.statSync(peerPath);
  peer = new Client({ name: "shoal-bench-context", version: "0" });
  await peer.connect(
    new StdioClientTransport({ command: "node", args: [peerPath], env, stderr: "ignore" }),
  );
} catch (e) {
  peer = null;
  peerNote =
    `mcp-server-commands not available at ${peerPath} (${e instanceof Error ? e.message : e}); ` +
    "install it with `npm install --prefix /tmp/peer mcp-server-commands` for the peer column";
}

/** Bytes of every text item of the peer's reply: what a client hands its model. */
async function peerBytes(src: string): Promise<number> {
  const reply = await peer!.callTool(
    { name: "run_command", arguments: { command: src, workdir: repo } },
    undefined,
    { timeout: CALL_TIMEOUT_MS },
  ) as { content: { type: string; text?: string }[] };
  return reply.content.reduce((n, c) => n + (c.type === "text" ? byteLength(c.text ?? "") : 0), 0);
}

const mcp = await connectMcp(box);
const rows: Row[] = [];
try {
  await mcp.ok("shoal_exec", { src: `cd '${repo.replaceAll("'", "'\\''")}'` });
  for (const command of corpus) {
    const raw = await rawStdout(command.src);
    const reply = await mcp.call("shoal_exec", { src: command.src }, {
      timeout: CALL_TIMEOUT_MS,
    });
    const row = (await mcp.ok("shoal_journal", { limit: 1 })).items as JournalRow[];
    const stdout = row[0].outputs.find((o) => o.kind === "stdout")?.len ?? 0;
    const text = byteLength(String(reply.content[0].text));
    const structured = byteLength(reply.structuredContent);
    const peerSize = peer === null ? null : await peerBytes(command.src);
    rows.push({ command, raw, stdout, text, structured, peer: peerSize });
  }
} finally {
  await mcp.close();
  await peer?.close();
  await box.cleanup();
}

const num = (n: number | null) => (n === null ? "-" : n.toLocaleString("en-US"));
const ratio = (a: number, b: number | null) => (b === null || b === 0 ? "-" : (a / b).toFixed(2));
/** The figures of one line of the table: a command's row or the totals. */
type Figures = Omit<Row, "command">;
const cells = (name: string, f: Figures) => [
  name,
  num(f.raw),
  num(f.stdout),
  num(f.text),
  num(f.structured),
  ratio(f.structured, f.stdout),
  num(f.peer),
  ratio(f.structured, f.peer),
];
const sum = (f: (r: Row) => number) => rows.reduce((n, r) => n + f(r), 0);
const totals: Figures = {
  raw: sum((r) => r.raw),
  stdout: sum((r) => r.stdout),
  text: sum((r) => r.text),
  structured: sum((r) => r.structured),
  peer: peer === null ? null : sum((r) => r.peer!),
};
const table = [
  [
    "command",
    "raw stdout",
    "shoal stdout",
    "shoal text",
    "shoal SC JSON",
    "SC/stdout",
    "peer text",
    "SC/peer",
  ],
  ...rows.map((r) => cells(r.command.name, r)),
  cells("total", totals),
];
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
console.log(`repository: ${repo}`);
if (typeof builds === "string") console.log(`note: ${builds}`);
if (peerNote !== "") console.log(`note: ${peerNote}`);
console.log("bytes the model receives (shoal SC JSON in Claude Code / VS Code; peer text items),");
console.log("next to the stdout of a direct run and of shoal's run (ps differs between runs):");
for (const row of table) {
  console.log(
    row.map((cell, i) => i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))
      .join("  "),
  );
}

const verdict = (ok: boolean) => (ok ? "met" : "NOT MET");
console.log("\ntargets (issue 16):");
for (const r of rows.filter((r) => r.command.small)) {
  const bound = 1.15 * r.stdout + 400;
  console.log(
    `  ${r.command.name}: SC JSON ${num(r.structured)} ≤ 1.15 × stdout + 400 B = ` +
      `${num(Math.floor(bound))}: ${verdict(r.structured <= bound)}`,
  );
}
const largest = Math.max(...rows.map((r) => r.structured));
console.log(
  `  largest SC JSON ${num(largest)} ≤ 70 KiB (${num(70 * KiB)}): ${verdict(largest <= 70 * KiB)}`,
);
if (totals.peer === null) console.log("  corpus total ≤ 0.3 × peer: not measured (no peer)");
else {
  console.log(
    `  corpus total ${num(totals.structured)} ≤ 0.3 × peer ${num(totals.peer)} = ` +
      `${num(Math.floor(0.3 * totals.peer))}: ${verdict(totals.structured <= 0.3 * totals.peer)}`,
  );
}
