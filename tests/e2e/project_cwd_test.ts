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
