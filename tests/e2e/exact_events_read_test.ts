/**
 * §9.2/M-RES-5: a `user.*` payload is "exactly the published payload", and a resource read of its
 * channel is the pretty JSON of the kernel's `events.read` result; so what `resources/read` of
 * `shoal://events/user.*` shows holds the payload's numbers as published, as the push of the same
 * event does (M-SUB-3). Real kernel, real facade, raw stdout lines.
 */
import assert from "node:assert/strict";
import { RawFacade } from "../_support/facade.ts";
import { startKernel } from "../_support/kernel.ts";
import { sandbox } from "../_support/sandbox.ts";

/** Numbers a double cannot hold: past 2^53, past the double range, and -0. */
const PAYLOAD = '{"big":12345678901234567890123,"huge":1e400,"neg":-0,"id":9007199254740993}';
const URI = "shoal://events/user.exact";

Deno.test("§9.2/M-RES-5 resources/read of shoal://events/user.* shows the payload's numbers as published, like its push (they read 1.2345678901234568e+22, null and 0)", async () => {
  const box = await sandbox();
  const kernel = await startKernel([], box);
  const facade = new RawFacade(box, [], { SHOAL_NO_AUTOSTART: "1" });
  const publisher = await Deno.connect({ transport: "unix", path: kernel.socket });
  try {
    await facade.request(1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
    });
    assert.deepEqual((await facade.request(2, "resources/subscribe", { uri: URI })).result, {});
    facade.lines = [];
    await publisher.write(new TextEncoder().encode(
      '{"jsonrpc":"2.0","id":1,"method":"session.attach","params":{}}\n' +
        `{"jsonrpc":"2.0","id":2,"method":"events.publish","params":{"channel":"user.exact","payload":${PAYLOAD}}}\n`,
    ));
    await facade.next((f) => f.method === "notifications/resources/updated");
    await facade.request(3, "resources/read", { uri: URI });
    const push = facade.lines.find((l) => l.includes('"notifications/resources/updated"'));
    const read = facade.lines.find((l) => l.startsWith('{"jsonrpc":"2.0","id":3,'));
    assert.ok(push?.includes(`"payload":${PAYLOAD}`), "the push carries the payload as published");
    assert.ok(read !== undefined, "the read is answered");
    const text = (JSON.parse(read).result.contents[0].text as string).replaceAll(/\s/g, "");
    const structured = read.slice(read.indexOf('"structuredContent":'));
    for (const shown of [text, structured]) {
      assert.ok(shown.includes(`"payload":${PAYLOAD}`), `the read shows ${shown.slice(0, 400)}`);
    }
  } finally {
    publisher.close();
    await facade.stop().catch(() => facade.kill());
    await kernel.cleanup();
  }
});
