/**
 * Issue 30 / M-ONB-3: ordinary agent work runs without approval as the `project` agent. Each
 * line of `project_corpus.txt` (git, search, file edits, builds and tests; one command per line,
 * run in order in one session) runs as `agent:claude-code`, provisioned by `shoal-kernel
 * onboard` exactly as `--print-config` does, sandboxed, in a clone of this repository. The test
 * prints how many ran without an approval and which did not, and asserts that count as a floor;
 * every command that ran must also have succeeded (the sandbox must not break ordinary work).
 */
import assert from "node:assert/strict";
import { exec } from "../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import { startKernel } from "../_support/kernel.ts";
import { kernelCli } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { REPO, sandbox } from "../_support/sandbox.ts";
import { ErrorCode, RpcError } from "../../src/protocol/errors.ts";

const CORPUS = new URL("./project_corpus.txt", import.meta.url);

/** How many corpus commands must run without approval (the target is 95 %). */
const FLOOR = 193;

hostTest(
  "M-ONB-3: the project agent runs at least 95 % of an ordinary-work corpus in a real repository without approval",
  NEEDS_TIER_B,
  async () => {
    const lines = (await Deno.readTextFile(CORPUS)).split("\n").filter((l) => l.trim() !== "");
    assert.ok(lines.length >= 150, `corpus has ${lines.length} commands`);
    const box = await sandbox();
    const kernel = await startKernel([], box);
    try {
      const project = `${box.dir}/proj`;
      const clone = await new Deno.Command("git", {
        args: ["clone", "-q", REPO, project],
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.equal(clone.code, 0, new TextDecoder().decode(clone.stderr));
      const r = await kernelCli(box, ["onboard", "agent:claude-code", "--project", project]);
      assert.equal(r.code, 0, r.stderr);
      const conn = await kernel.connect();
      await conn.request("session.attach", { token: JSON.parse(r.stdout).token, cwd: project });
      const refused: string[] = [];
      const failed: string[] = [];
      for (const src of lines) {
        try {
          const ran = await exec(conn, src, { timeout_ms: 60000 });
          const value = ran.value as Rec;
          if (value.ok !== true) failed.push(`${src}  →  ${JSON.stringify(value).slice(0, 300)}`);
        } catch (e) {
          if (!(e instanceof RpcError)) throw e;
          const data = e.data as Rec | undefined;
          if (e.code === ErrorCode.RAISED) {
            failed.push(`${src}  →  ${JSON.stringify(data).slice(0, 400)}`);
            continue;
          }
          refused.push(
            `${src}  →  ${e.code} ${data?.reason ?? data?.verdict ?? ""} ${e.message}`,
          );
        }
      }
      const free = lines.length - refused.length;
      console.log(
        `project corpus: ${free}/${lines.length} ran without approval ` +
          `(${(100 * free / lines.length).toFixed(1)} %); ${failed.length} of them exited non-zero`,
      );
      for (const line of refused) console.log(`  needs approval or refused: ${line}`);
      for (const line of failed) console.log(`  ran, exited non-zero: ${line}`);
      assert.ok(free >= FLOOR, `${free} ran without approval, floor ${FLOOR}`);
      assert.ok(free >= 0.95 * lines.length);
      assert.deepEqual(failed, [], "every command of the corpus works in the sandbox");
    } finally {
      await kernel.cleanup();
    }
  },
);
