/** A PTY's output flood leaves the kernel answering other connections (E-4, K-PTY-8). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { answersWhileRunning } from "./_helpers.ts";

Deno.test("E-4/K-PTY-8 while a PTY parses 20 MB of random bytes, another connection's requests are answered between its steps: the reader's loop of immediates never let the runtime poll sockets but once in dozens of turns, so a pty.list sent 1 ms after the last answer waited for megabytes of parsing (16-45 answers in the whole flood, 100-190 ms each; 160-290 now)", async () => {
  const k = await startKernel();
  try {
    const { conn, ptyId, answers } = await answersWhileRunning(
      k,
      "head -c 20000000 /dev/urandom",
      200,
      50,
    );
    // answers during 20 MB of flood: each waited for dozens of reader steps, now for one timer
    assert.ok(answers >= 100, `${answers} answers during the flood`);
    await conn.request("pty.close", { pty_id: ptyId });
  } finally {
    await k.cleanup();
  }
});
