/** A PTY's output flood leaves the kernel answering other connections (E-4, K-PTY-8). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay } from "../../_support/wait.ts";

Deno.test("E-4/K-PTY-8 while a PTY parses 20 MB of random bytes, another connection's requests are answered between its steps: the reader's loop of immediates never let the runtime poll sockets but once in dozens of turns, so a pty.list sent 1 ms after the last answer waited for megabytes of parsing (16-45 answers in the whole flood, 100-190 ms each; 160-290 now)", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    const other = await k.attach();
    const opened = await conn.request("pty.open", {
      cmd: "sh",
      args: ["-c", "head -c 20000000 /dev/urandom"],
      cols: 200,
      rows: 50,
    }) as Rec;
    let answers = 0;
    for (let alive = true; alive; answers++) {
      // a request that arrives while the kernel waits on its socket, as a client's next one does
      await delay(1);
      const listed = await other.request("pty.list", {}) as Rec;
      alive = (listed.ptys as Rec[]).some((p) => p.pty_id === opened.pty_id && p.alive === true);
    }
    // answers during 20 MB of flood: each waited for dozens of reader steps, now for one timer
    assert.ok(answers >= 100, `${answers} answers during the flood`);
    await conn.request("pty.close", { pty_id: opened.pty_id });
  } finally {
    await k.cleanup();
  }
});
