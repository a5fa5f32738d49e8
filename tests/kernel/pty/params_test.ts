import assert from "node:assert/strict";
import {
  ptyCloseParams,
  ptyListParams,
  ptyOpenParams,
  ptyReadParams,
  ptyResizeParams,
  ptySendParams,
} from "../../../src/kernel/pty/params.ts";

Deno.test("K-PTY-1 pty.open defaults, unknown members ignored", () => {
  assert.deepEqual(ptyOpenParams.parse({ cmd: "python3", extra: 1 }), {
    cmd: "python3",
    args: [],
    cols: 80,
    rows: 24,
    env: {},
  });
  assert.deepEqual(
    ptyOpenParams.parse({ cmd: "vi", args: ["x"], cols: 5000, rows: -1, env: { A: "b" } }),
    { cmd: "vi", args: ["x"], cols: 5000, rows: -1, env: { A: "b" } },
  );
});

Deno.test("K-PTY-1 pty.open rejects wrong shapes", () => {
  for (
    const bad of [
      {},
      { cmd: "" },
      { cmd: 3 },
      { cmd: "a", args: "b" },
      { cmd: "a", args: [1] },
      { cmd: "a", cols: 1.5 },
      { cmd: "a", rows: "24" },
      { cmd: "a", env: { A: 1 } },
      { cmd: "a", env: ["A=b"] },
      { cmd: "a", env: { "A=B": "c" } },
      { cmd: "a", env: { "": "c" } },
      { cmd: "a", env: { "A\0B": "c" } },
    ]
  ) {
    assert.equal(ptyOpenParams.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

Deno.test("K-PTY-2..6 the other pty methods' params", () => {
  assert.deepEqual(ptySendParams.parse({ pty_id: "pty:1", input: ["a", { key: "Enter" }] }), {
    pty_id: "pty:1",
    input: ["a", { key: "Enter" }],
  });
  assert.equal(ptySendParams.safeParse({ pty_id: "pty:1" }).success, false);
  assert.equal(ptySendParams.safeParse({ input: "x" }).success, false);
  assert.deepEqual(ptyReadParams.parse({ pty_id: "pty:2", x: 1 }), { pty_id: "pty:2" });
  assert.equal(ptyReadParams.safeParse({ pty_id: 2 }).success, false);
  assert.deepEqual(ptyResizeParams.parse({ pty_id: "pty:1", cols: 0, rows: 9999 }), {
    pty_id: "pty:1",
    cols: 0,
    rows: 9999,
  });
  assert.equal(ptyResizeParams.safeParse({ pty_id: "pty:1", cols: 80 }).success, false);
  assert.deepEqual(ptyCloseParams.parse({ pty_id: "pty:1" }), { pty_id: "pty:1" });
  assert.equal(ptyCloseParams.safeParse({}).success, false);
  assert.deepEqual(ptyListParams.parse({ anything: true }), {});
});
