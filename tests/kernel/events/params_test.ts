import assert from "node:assert/strict";
import {
  eventsPublishParams,
  eventsReadParams,
  eventsSubscribeParams,
  eventsUnsubscribeParams,
} from "../../../src/kernel/events/params.ts";

const ok = (schema: { safeParse(v: unknown): { success: boolean } }, v: unknown) =>
  schema.safeParse(v).success;

Deno.test("K-EVT-1 events.read defaults since to -1 and limit to 1024, bounds both", () => {
  assert.deepEqual(eventsReadParams.parse({ channel: "journal" }), {
    channel: "journal",
    since: -1,
    limit: 1024,
  });
  assert.deepEqual(
    eventsReadParams.parse({ channel: "journal", since: 5, limit: 10000, extra: 1 }),
    { channel: "journal", since: 5, limit: 10000 },
  );
  assert.equal(ok(eventsReadParams, { channel: "journal", since: -2 }), false);
  assert.equal(ok(eventsReadParams, { channel: "journal", since: 1.5 }), false);
  assert.equal(ok(eventsReadParams, { channel: "journal", limit: 0 }), false);
  assert.equal(ok(eventsReadParams, { channel: "journal", limit: 10001 }), false);
  assert.equal(ok(eventsReadParams, { channel: "bad name" }), false);
  assert.equal(ok(eventsReadParams, {}), false);
});

Deno.test("K-EVT-2 events.publish needs a channel and a payload (any JSON, null included)", () => {
  assert.equal(ok(eventsPublishParams, { channel: "user.x", payload: null }), true);
  assert.equal(ok(eventsPublishParams, { channel: "user.x", payload: [1] }), true);
  assert.equal(ok(eventsPublishParams, { channel: "user.x" }), false);
  assert.equal(ok(eventsPublishParams, { channel: 3, payload: 1 }), false);
});

Deno.test("K-EVT-3/4 events.subscribe since is optional (absent = live only); unsubscribe takes a channel", () => {
  assert.equal(eventsSubscribeParams.parse({ channel: "task.1" }).since, undefined);
  assert.equal(eventsSubscribeParams.parse({ channel: "task.1", since: null }).since, undefined);
  assert.equal(eventsSubscribeParams.parse({ channel: "task.1", since: -1 }).since, -1);
  assert.equal(ok(eventsSubscribeParams, { channel: "task.1", since: -3 }), false);
  assert.equal(ok(eventsUnsubscribeParams, { channel: "x".repeat(129) }), false);
  assert.equal(ok(eventsUnsubscribeParams, { channel: "x".repeat(128) }), true);
});
