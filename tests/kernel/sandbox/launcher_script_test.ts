/**
 * The launcher's protocol driven directly (real perl, outside a sandbox), runs back to back as
 * the kernel asks for them: every run's exit is reported, however its SIGCHLD falls against the
 * launcher's `select` (perl runs the handler that wakes it only between ops). Each run leads its
 * own session, by setsid's number or, without it, by POSIX, which the launcher never loads itself:
 * it loads no module but strict (each one makes every fork of a spare dearer, issue 34).
 */
import assert from "node:assert/strict";
import { LAUNCHER_SCRIPT, launcherArgs } from "../../../src/kernel/sandbox/launcher_script.ts";
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

/**
 * A request record for spare `spare`: run `argv` (`/bin/true`) in /tmp, its stdout to `out`
 * (/dev/null), its stderr to /dev/null.
 */
function request(spare: number, argv = ["/bin/true"], out = "/dev/null"): Uint8Array {
  const body = [spare, out, "/dev/null", "/tmp", 1, "PATH=/usr/bin:/bin", ...argv].join("\0");
  return encoder.encode(encoder.encode(body).length.toString(16).padStart(8, "0") + body);
}

/** A launcher started with `args` after perl, its stdin's writer and its report lines. */
function startLauncher(args: string[]) {
  const child = new Deno.Command(PERL, {
    args,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reports = lines(child.stdout);
  /** The next report line, or null when none comes within 5 s. */
  const next = async () => (await within(reports.next(), 5000))?.value ?? null;
  const stop = async () => {
    await writer.close().catch(() => {});
    await reports.return(undefined).catch(() => {});
    child.kill("SIGKILL"); // its spare reads the end of stdin and goes
    await child.status;
  };
  return { child, writer, next, stop };
}

/** Runs back to back, each started once the previous one's exit and next spare are reported. */
const RUNS = 2000;

Deno.test({
  name: `${RUNS} runs back to back through the launcher: every exit is reported within 5 s`,
  ignore: !hasPerl(),
  fn: async () => {
    const { writer, next, stop } = startLauncher(launcherArgs());
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
      await stop();
    }
  },
});

const ways: [string, string[]][] = [
  ["by setsid's number", launcherArgs()],
  ["by POSIX", ["-e", LAUNCHER_SCRIPT]],
];
for (const [how, args] of ways) {
  Deno.test({
    name: `a launched run leads its own session and group, ${how}; the launcher loads no POSIX`,
    ignore: !hasPerl(),
    fn: async () => {
      const dir = Deno.makeTempDirSync();
      const { child, writer, next, stop } = startLauncher(args);
      try {
        const spare = Number((await next())?.match(/^spare (\d+)$/)?.[1]);
        assert.ok(spare > 0, "the launcher announces its first spare");
        // fields 1, 5 and 6 of its stat: pid, process group, session
        const stat = [
          "/bin/sh",
          "-c",
          "read -r pid _ _ _ group session _ </proc/self/stat; echo $pid $group $session",
        ];
        // `read` is a builtin: /proc/self is the shell's own, whose pid is the spare's
        await writer.write(request(spare, stat, `${dir}/out`));
        let exited = false;
        while (!exited) {
          const line = await next();
          assert.notEqual(line, null, "the run's exit is reported");
          exited = line === `exit ${spare} 0`;
        }
        assert.equal(Deno.readTextFileSync(`${dir}/out`), `${spare} ${spare} ${spare}\n`);
        const maps = Deno.readTextFileSync(`/proc/${child.pid}/maps`);
        assert.ok(!maps.includes("POSIX"), "the launcher has no POSIX module mapped");
      } finally {
        await stop();
        Deno.removeSync(dir, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "the launcher loads no module but strict, whatever its runs do",
  ignore: !hasPerl(),
  fn: async () => {
    // an END block before the script reports the modules loaded once the launcher ends
    const report = 'END { print STDERR join(",", sort keys %INC), "\\n" if $$ == $main::launcher }';
    const [, script, number] = launcherArgs();
    const child = new Deno.Command(PERL, {
      args: ["-e", `BEGIN { $main::launcher = $$ } ${report}`, "-e", script, number],
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    const reports = lines(child.stdout);
    const spare = Number((await within(reports.next(), 5000))?.value?.match(/^spare (\d+)$/)?.[1]);
    assert.ok(spare > 0, "the launcher announces its first spare");
    await writer.write(request(spare, ["/bin/false"])); // a run that fails
    await within(reports.next(), 5000);
    await writer.close(); // the next spare reads the end of stdin, and the launcher ends
    for await (const _ of reports); // read to its end: a launcher whose reports go unread fails
    const [status, stderr] = await Promise.all([
      child.status,
      new Response(child.stderr).text(),
    ]);
    assert.deepEqual([status.code, stderr], [0, "strict.pm\n"]);
  },
});
