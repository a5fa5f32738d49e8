/**
 * Runs the robustness scenarios of issue 13 one after another, each in its own process (each
 * file also runs alone), then prints every figure line together. Exit status 1 when any failed.
 *
 *   deno run -A scripts/stress/run.ts [SCENARIO...] [--execs N]
 *
 * SCENARIO is any of soak, concurrency, kernel_kill, disk_full, stalled_client (default: all);
 * `--execs N` shortens the soak (its figure then covers N execs, not 10,000).
 */
const SCENARIOS = ["soak", "concurrency", "kernel_kill", "disk_full", "stalled_client"];
/** Longest a scenario may run before it is killed and counted as failed. */
const SCENARIO_TIMEOUT_MS = 60 * 60_000;

const named = Deno.args.filter((a) => SCENARIOS.includes(a));
const unknown = Deno.args.filter((a, i) =>
  !SCENARIOS.includes(a) && a !== "--execs" && Deno.args[i - 1] !== "--execs"
);
if (unknown.length > 0) {
  console.error(`usage: run.ts [${SCENARIOS.join("|")}...] [--execs N]; unknown: ${unknown}`);
  Deno.exit(2);
}
const execs = Deno.args.includes("--execs")
  ? ["--execs", Deno.args[Deno.args.indexOf("--execs") + 1]]
  : [];
const figures: string[] = [];
let failed = false;
for (const scenario of named.length > 0 ? named : SCENARIOS) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL(`./${scenario}.ts`, import.meta.url).pathname,
      ...(scenario === "soak" ? execs : []),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), SCENARIO_TIMEOUT_MS);
  let text = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    await Deno.stdout.write(new TextEncoder().encode(chunk));
  }
  const status = await child.status;
  clearTimeout(timer);
  figures.push(`-- ${scenario}`, ...text.split("\n").filter((l) => /^(PASS|FAIL|SKIP) /.test(l)));
  if (!status.success) {
    failed = true;
    if (status.signal !== null) figures.push(`FAIL  ${scenario} killed by ${status.signal}`);
  }
}
console.log(`\n== all figures\n${figures.join("\n")}`);
if (failed) Deno.exitCode = 1;
