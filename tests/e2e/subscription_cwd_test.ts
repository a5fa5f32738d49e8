/**
 * M-SUB-2 with M-ONB-1: a subscription's own kernel connection observes the session, it does not
 * move it. Real kernel, real facade started with SHOAL_PROJECT as the printed configuration is.
 */
import assert from "node:assert/strict";
import { RawFacade } from "../_support/facade.ts";
import { startKernel } from "../_support/kernel.ts";
import { sandbox } from "../_support/sandbox.ts";

Deno.test("M-SUB-2/M-ONB-1: resources/subscribe leaves the session's cwd where the agent's cd left it (its connection's attach took the session back to SHOAL_PROJECT)", async () => {
  const box = await sandbox();
  const project = `${box.dir}/project`;
  await Deno.mkdir(`${project}/sub`, { recursive: true });
  const kernel = await startKernel([], box);
  const facade = new RawFacade(box, [], { SHOAL_PROJECT: project, SHOAL_NO_AUTOSTART: "1" });
  const pwd = async (id: number) => {
    const r = await facade.request(id, "tools/call", {
      name: "shoal_exec",
      arguments: { src: "pwd" },
    });
    return (r.result as { content: { text: string }[] }).content[0].text;
  };
  try {
    assert.equal(await pwd(1), project, "the session starts in SHOAL_PROJECT");
    await facade.request(2, "tools/call", { name: "shoal_exec", arguments: { src: "cd sub" } });
    assert.equal(await pwd(3), `${project}/sub`);
    for (const [id, uri] of [[4, "shoal://events/user.x"], [5, "shoal://task/1"]] as const) {
      assert.deepEqual((await facade.request(id, "resources/subscribe", { uri })).result, {});
    }
    assert.equal(await pwd(6), `${project}/sub`, "a subscription does not move the session");
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    await kernel.cleanup();
  }
});
