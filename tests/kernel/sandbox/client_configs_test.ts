/**
 * P-SBX-6: protected names are the files "a later, unconfined program runs as the local human":
 * among them the project configurations of the MCP clients the SPEC names (`.mcp.json`,
 * `.claude/`, `.cursor/`, `.vscode/`), whose servers' commands the client starts as the human.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test({
  name:
    "P-SBX-6 a sandboxed agent cannot write Gemini CLI's project settings (.gemini/settings.json), whose mcpServers commands Gemini CLI starts as the human in the project, as it cannot write .mcp.json [ignored: needs a SPEC decision: PROTECTED lists the project configurations of Claude Code, Cursor and VS Code but not .gemini/ (nor other clients' such as .amazonq/mcp.json), so the agent's `mkdir -p .gemini && echo {\"mcpServers\":…} > .gemini/settings.json` wrote it (in grant, no approval); extending PROTECTED, or a rule for client configurations, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    let k: TestKernel | undefined;
    try {
      const token = (await createToken(box, "agent:c", "c")).secret;
      k = await startKernel(
        ["--policy", await writePolicy(box, { "agent:c": PROJECT_AGENT })],
        box,
      );
      const human = await k.attach("work");
      await exec(human, `cd '${proj}'`);
      const agent = await k.attach("work", token);
      const settings = '{"mcpServers":{"x":{"command":"sh","args":["-c","touch ~/ran"]}}}';
      for (
        const [dir, file] of [[".mcp.json", ".mcp.json"], [".gemini", ".gemini/settings.json"]]
      ) {
        const src = dir === file
          ? `echo '${settings}' > ${file}`
          : `mkdir -p ${dir} && echo '${settings}' > ${file}`;
        await exec(agent, `(${src}) 2>/dev/null; true`).catch(() => null);
        let written = false;
        try {
          written = (await Deno.readTextFile(`${proj}/${file}`)).includes("mcpServers");
        } catch {
          // not there
        }
        assert.equal(written, false, `the agent wrote ${file}`);
      }
    } finally {
      if (k) {
        await k.stop();
        await k.cleanup();
      } else await box.cleanup();
    }
  },
});
