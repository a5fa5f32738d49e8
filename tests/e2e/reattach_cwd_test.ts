/** End to end: the session a facade re-attaches after its main connection dropped while the kernel lives. */
import assert from "node:assert/strict";
import { WireTap } from "./_tap.ts";
import { RawFacade } from "../_support/facade.ts";
import { startKernel } from "../_support/kernel.ts";
import type { Rec } from "../_support/rec.ts";
import { waitUntil } from "../_support/wait.ts";

Deno.test({
  name:
    "M-START-4/M-ONB-1 a main connection dropped while the kernel lives (a malformed frame) is re-attached with the project cwd, which moves the agent's live session back to the project root: after cd sub, pwd answers the project [ignored: needs a SPEC decision: M-ONB-1 starts the agent's session in DIR 'e.g. through an argument the facade applies on attach', M-START-4 re-attaches as M-START-2 does, and the kernel moves an existing session on such an attach; the facade cannot tell a re-attach to the same session (keep its cwd, as ae72269 does for subscriptions) from one to a restarted kernel's new session (start it in DIR) unless the attach result says whether the session was created]",
  ignore: true,
  fn: async () => {
    const kernel = await startKernel();
    const project = `${kernel.box.dir}/proj`;
    await Deno.mkdir(`${project}/sub`, { recursive: true });
    const tap = new WireTap(`${kernel.box.dir}/tap.sock`, kernel.socket);
    const facade = new RawFacade(kernel.box, ["--socket", tap.path], {
      SHOAL_NO_AUTOSTART: "1",
      SHOAL_PROJECT: project,
    });
    const exec = async (id: number, src: string) => {
      const r = await facade.request(id, "tools/call", { name: "shoal_exec", arguments: { src } });
      return (((r.result as Rec).structuredContent as Rec).value as Rec).out;
    };
    try {
      assert.deepEqual(await exec(1, "cd sub && pwd"), { $: "str", v: `${project}/sub\n` });
      const [first] = tap.sent("session.attach");
      await tap.inject(first.conn, new TextEncoder().encode("{not json\n"));
      assert.ok(
        await waitUntil(async () => {
          await facade.request(2, "tools/call", { name: "shoal_pty_list" });
          return tap.sent("session.attach").length === 2;
        }, 10000),
      );
      assert.deepEqual(await exec(3, "pwd"), { $: "str", v: `${project}/sub\n` });
    } finally {
      facade.kill();
      await facade.exit().catch(() => {});
      await tap.close();
      await kernel.cleanup();
    }
  },
});
