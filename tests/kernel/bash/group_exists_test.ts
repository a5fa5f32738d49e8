/** groupExists tells a live process group from one that is gone, and never asks about its own. */
import assert from "node:assert/strict";
import { groupExists, signalGroup } from "../../../src/kernel/bash/group_leader.ts";

Deno.test("groupExists is true while a group has a member, false once it is reaped", async () => {
  const child = new Deno.Command("setsid", { args: ["sleep", "30"], stdout: "null" }).spawn();
  try {
    // setsid(1) execs sleep once it leads its group
    for (let i = 0; i < 100 && !groupExists(child.pid); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(groupExists(child.pid), true);
  } finally {
    signalGroup(child.pid, "SIGKILL");
    await child.status;
  }
  assert.equal(groupExists(child.pid), false);
});

Deno.test("groupExists(0) is false: kill(-0) would ask about the caller's own group", () => {
  assert.equal(groupExists(0), false);
  assert.equal(groupExists(-1), false);
});
