// A facade of this version meeting a kernel of an older one still listening on its socket, as
// after `git pull` while the kernel autostarted weeks ago still serves (M-START-1..3, M-ONB-1).
import assert from "node:assert/strict";
import { launchKernel } from "../_support/kernel.ts";
import { REPO, sandbox } from "../_support/sandbox.ts";
import { connectMcp, mcpError } from "./_mcp.ts";

/** The last commit of 2026-12-02 before token names were checked: its kernel has no cwd on attach. */
const OLD = "0681d91";

/** Whether this checkout holds `OLD` (a shallow clone may not). */
function hasOldCommit(): boolean {
  const r = new Deno.Command("git", {
    args: ["-C", REPO, "cat-file", "-e", `${OLD}^{commit}`],
    stdout: "null",
    stderr: "null",
  }).outputSync();
  return r.success;
}

/** The tree of `OLD` extracted into `dir` (git archive: the repository is only read). */
async function oldTree(dir: string): Promise<string> {
  await Deno.mkdir(dir);
  const archive = new Deno.Command("sh", {
    args: ["-c", 'git -C "$1" archive "$2" | tar -x -C "$3"', "sh", REPO, OLD, dir],
  });
  const r = await archive.output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
  await Deno.symlink(`${REPO}/.tools`, `${dir}/.tools`);
  return dir;
}

Deno.test({
  name:
    "M-START-3/M-ONB-1 a facade with a project that reaches a kernel older than M-ONB-1 (it ignores cwd on attach) reports the kernel unavailable, saying it is older and to stop it, instead of running the agent's commands in the kernel's own directory",
  ignore: !hasOldCommit(),
  fn: async () => {
    const box = await sandbox();
    try {
      const old = await oldTree(`${box.dir}/old`);
      const kernel = await launchKernel(box, ["--socket", box.socket()], box.socket(), {}, [
        `${old}/bin/shoal-kernel`,
      ]);
      try {
        const project = `${box.dir}/proj`;
        await Deno.mkdir(project);
        const mcp = await connectMcp(box, { SHOAL_PROJECT: project });
        try {
          const e = await mcpError(mcp.call("shoal_exec", { src: "pwd" }));
          assert.equal(e.code, -32603);
          assert.match(e.message, /kernel unavailable: the kernel on .* left the session in /);
          assert.match(e.message, /older than this facade .* stop that kernel/);
        } finally {
          await mcp.close();
        }
      } finally {
        await kernel.stop();
      }
    } finally {
      await box.cleanup();
    }
  },
});
