/**
 * The view a sandboxed exec computes before it runs (issue 34), in process on the real modules:
 * `runSandbox` and its `confinementKey` for an agent granted a project holding a copy of this
 * repository's sources (some 50 directories, which the protection scan of P-SBX-6 walks), once
 * the directories' listings are known, as at every exec but the first. Prints the mean time per
 * view and the system calls one view makes (through strace, when installed).
 */
import { parseArgs } from "node:util";
import { benchAgent } from "./bench_agent.ts";
import { runSandbox } from "../../src/kernel/policy/principal_sandbox.ts";
import { confinementKey } from "../../src/kernel/sandbox/command.ts";

/** Views timed (after as many warm-up views): 2000, or the `VIEWS` environment variable. */
const VIEWS = Number(Deno.env.get("VIEWS") ?? 2000);

const { dir, proj, setting, policy } = await benchAgent(
  "shoal-sandbox-view-",
  "/bin/bash",
);
for (const part of ["src", "tests", "scripts"]) {
  await new Deno.Command("cp", {
    args: ["-r", new URL(`../../${part}`, import.meta.url).pathname, proj],
  }).output();
}
/** The repository's deno.json, for the child that strace follows. */
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
const view = () => confinementKey(runSandbox(setting, policy, false, "agent:bench", proj));

try {
  const { views } = parseArgs({ args: Deno.args, options: { views: { type: "string" } } }).values;
  if (views !== undefined) {
    // the child strace follows: `n` views of settled directories
    await settle();
    for (let i = 0; i < Number(views); i++) view();
  } else await timeViews();
} finally {
  await Deno.remove(dir, { recursive: true });
}

/** Waits until the directories have settled: a listing read within 2 s of a change is read again. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2100));
}

/** Prints the mean time of a view, and its system calls. */
async function timeViews(): Promise<void> {
  await settle();
  for (let i = 0; i < VIEWS; i++) view();
  const t0 = performance.now();
  for (let i = 0; i < VIEWS; i++) view();
  const us = (performance.now() - t0) / VIEWS * 1000;
  console.log(`sandboxed exec's view of this repository's tree: ${us.toFixed(0)} us per view`);
  console.log(`system calls per view: ${JSON.stringify(await syscallsPerView())}`);
}

/** The system calls of one view (the difference of 110 and 10 views, over 100), or {} without strace. */
async function syscallsPerView(): Promise<Record<string, number>> {
  const counts = async (views: number) => {
    const file = `${dir}/strace-${views}`;
    const args = ["-f", "-c", "-o", file, Deno.execPath(), "run", "-A", "--config", CONFIG];
    try {
      const run = await new Deno.Command("strace", {
        args: [...args, new URL(import.meta.url).pathname, "--views", String(views)],
        stdout: "null",
        stderr: "null",
      }).output();
      if (!run.success) return null;
    } catch {
      return null;
    }
    const found = new Map<string, number>();
    for (const line of (await Deno.readTextFile(file)).split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 5 && /^\d/.test(f[0]) && f.at(-1) !== "total") found.set(f.at(-1)!, +f[3]);
    }
    return found;
  };
  const [few, many] = [await counts(10), await counts(110)];
  if (few === null || many === null) return {};
  const out: Record<string, number> = {};
  for (const [name, n] of many) {
    const per = (n - (few.get(name) ?? 0)) / 100;
    if (per >= 0.5) out[name] = Math.round(per * 10) / 10;
  }
  return out;
}
