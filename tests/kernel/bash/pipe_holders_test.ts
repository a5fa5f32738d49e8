import assert from "node:assert/strict";
import { heldElsewhere, outputPipes } from "../../../src/kernel/bash/pipe_holders.ts";

const linux = Deno.build.os === "linux";

/** A child writing nothing, holding its piped stdout and stderr until its stdin closes. */
function holder(): Deno.ChildProcess {
  return new Deno.Command("cat", { stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
}

Deno.test({
  name: "outputPipes names a live child's two output pipes; they are held elsewhere while it lives",
  ignore: !linux,
  fn: async () => {
    const child = holder();
    try {
      const pipes = outputPipes(child.pid);
      assert.ok(pipes !== null);
      assert.equal(pipes.size, 2);
      for (const pipe of pipes) assert.match(pipe, /^pipe:\[[0-9]+\]$/);
      assert.equal(heldElsewhere(pipes), true);
    } finally {
      await child.stdin.close();
      await Promise.all([child.status, child.stdout.cancel(), child.stderr.cancel()]);
    }
  },
});

Deno.test({
  name: "once the child has exited, only this process holds its pipes (their EOF is on its way)",
  ignore: !linux,
  fn: async () => {
    const child = holder();
    const pipes = outputPipes(child.pid)!;
    await child.stdin.close();
    await child.status;
    try {
      assert.equal(heldElsewhere(pipes), false);
      assert.equal(outputPipes(child.pid), null); // gone: nothing to read
    } finally {
      await Promise.all([child.stdout.cancel(), child.stderr.cancel()]);
    }
  },
});
