// M-ONB-1 through the real stack: the facade of a project starts its session in the project
// directory, and nothing but the session's own commands moves it from there afterwards.
import assert from "node:assert/strict";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp } from "./_mcp.ts";

Deno.test("M-ONB-1/M-SUB-2 a resources/subscribe leaves the project session's cwd where the agent's cd put it: the subscription's own attach moved it back to the project directory", async () => {
  const box = await sandbox();
  const project = `${box.dir}/project`;
  await Deno.mkdir(`${project}/sub`, { recursive: true });
  const mcp = await connectMcp(box, { SHOAL_PROJECT: project });
  try {
    const pwd = async () => {
      const run = await mcp.call("shoal_exec", { src: "pwd" });
      return (run.content[0] as { text: string }).text;
    };
    assert.equal(await pwd(), project);
    await mcp.ok("shoal_exec", { src: "cd sub" });
    assert.equal(await pwd(), `${project}/sub`);
    await mcp.client.subscribeResource({ uri: "shoal://events/user.project-cwd" });
    assert.equal(await pwd(), `${project}/sub`);
  } finally {
    await mcp.close();
    await box.cleanup();
  }
});

Deno.test({
  name:
    "M-ONB-1 a second client starting on the same project leaves the shared project session's cwd where the first agent's cd put it [ignored: needs a SPEC decision: M-ONB-1 says the configuration 'starts the agent's session in DIR', and the facade applies it on attach; both clients of one project share its session (G-TRUST-4), and the second client's attach moves that session back to DIR under the first agent, whose next exec runs in the project root; whether the attach-time directory applies only to a session the attach creates is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const project = `${box.dir}/project`;
    await Deno.mkdir(`${project}/sub`, { recursive: true });
    const first = await connectMcp(box, { SHOAL_PROJECT: project });
    try {
      await first.ok("shoal_exec", { src: "cd sub" });
      const second = await connectMcp(box, { SHOAL_PROJECT: project });
      try {
        await second.ok("shoal_exec", { src: "true" });
      } finally {
        await second.close();
      }
      const run = await first.call("shoal_exec", { src: "pwd" });
      assert.equal((run.content[0] as { text: string }).text, `${project}/sub`);
    } finally {
      await first.close();
      await box.cleanup();
    }
  },
});
