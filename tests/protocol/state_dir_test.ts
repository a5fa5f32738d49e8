import assert from "node:assert/strict";
import { stateDir } from "../../src/protocol/state_dir.ts";

Deno.test("G-STATE-1 --state-dir wins, then XDG_STATE_HOME/shoal, then HOME/.local/state/shoal", () => {
  const env = { XDG_STATE_HOME: "/x/state/", HOME: "/home/me" };
  assert.equal(stateDir("/flag", env), "/flag");
  assert.equal(stateDir(undefined, env), "/x/state/shoal");
  assert.equal(
    stateDir(undefined, { XDG_STATE_HOME: "", HOME: "/home/me" }),
    "/home/me/.local/state/shoal",
  );
  assert.equal(stateDir(undefined, { HOME: "/" }), "/.local/state/shoal");
});

Deno.test("G-STATE-1 without --state-dir, XDG_STATE_HOME or HOME there is no state directory", () => {
  assert.throws(() => stateDir(undefined, {}), /--state-dir/);
  assert.throws(() => stateDir(undefined, { XDG_STATE_HOME: "", HOME: "" }), /--state-dir/);
  assert.throws(() => stateDir("", { HOME: "/home/me" }), /--state-dir/);
});
