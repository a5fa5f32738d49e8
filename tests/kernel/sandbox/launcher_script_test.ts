/**
 * The launcher's protocol driven directly (real perl, outside a sandbox), runs back to back as
 * the kernel asks for them: every run's exit is reported, however its SIGCHLD falls against the
 * launcher's `select` (perl runs the handler that wakes it only between ops).
 */
import assert from "node:assert/strict";
import { LAUNCHER_SCRIPT } from "../../../src/kernel/sandbox/launcher_script.ts";
import { lines } from "../../../src/kernel/sandbox/launcher.ts";
import { within } from "../../../src/protocol/within.ts";

const PERL = "/usr/bin/perl";
const encoder = new TextEncoder();

/** Whether perl is there to run the launcher. */
function hasPerl(): boolean {
  try {
    return Deno.statSync(PERL).isFile;
  } catch {
    return false;
  }
}

/** A request record for spare `spare`: run `/bin/true` in /tmp, its output to /dev/null. */
function request(spare: number): Uint8Array {
  const body = [spare, "/dev/null", "/dev/null", "/tmp", 1, "PATH=/usr/bin:/bin", "/bin/true"]
    .join("\0");
  return encoder.encode(encoder.encode(body).length.toString(16).padStart(8, "0") + body);
}

/** Runs back to back, each started once the previous one's exit and next spare are reported. */
const RUNS = 2000;

Deno.test({
  name: `${RUNS} runs back to back through the launcher: every exit is reported within 5 s`,
  ignore: !hasPerl(),
  fn: async () => {
    const child = new Deno.Command(PERL, {
      args: ["-e", LAUNCHER_SCRIPT],
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    const reports = lines(child.stdout);
    /** The next report line, or null when none comes within 5 s. */
    const next = async () => (await within(reports.next(), 5000))?.value ?? null;
    try {
      let spare = Number((await next())?.match(/^spare (\d+)$/)?.[1]);
      assert.ok(spare > 0, "the launcher announces its first spare");
      for (let i = 0; i < RUNS; i++) {
        const ran = spare;
        await writer.write(request(ran));
        let [exited, replaced] = [false, false];
        while (!exited || !replaced) {
          const line = await next();
          assert.notEqual(line, null, `run ${i}: its exit and the next spare are reported`);
          const [what, pid, status] = line!.split(" ");
          if (what === "exit" && Number(pid) === ran) [exited] = [status === "0"];
          if (what === "spare") [spare, replaced] = [Number(pid), true];
          assert.ok(what !== "exit" || Number(pid) !== ran || exited, `run ${i} ended well`);
        }
      }
    } finally {
      await writer.close().catch(() => {});
      await reports.return(undefined).catch(() => {});
      child.kill("SIGKILL"); // its spare reads the end of stdin and goes
      await child.status;
    }
  },
});
