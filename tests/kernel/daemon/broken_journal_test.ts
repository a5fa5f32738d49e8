// A state directory whose journal cannot be opened (G-STATE-2, J-1, M-START-1/3): the kernel
// says so where its user can read it and leaves no socket behind it.
import assert from "node:assert/strict";
import { kernelUntilExit } from "../../_support/kernel.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { connectMcp, mcpError } from "../../e2e/_mcp.ts";

/** A sandbox whose default state directory holds a `journal.db` of random bytes. */
async function brokenJournalBox(): Promise<Sandbox> {
  const box = await sandbox();
  await Deno.mkdir(`${box.dir}/state/shoal`, { mode: 0o700 });
  const junk = new Uint8Array(8192);
  crypto.getRandomValues(junk);
  await Deno.writeFile(`${box.dir}/state/shoal/journal.db`, junk, { mode: 0o600 });
  return box;
}

Deno.test("G-STATE-2/J-1 a journal.db that is no database stops the kernel with exit 1 and no socket left bound, naming the file on stderr and in kernel.log", async () => {
  const box = await brokenJournalBox();
  try {
    const r = await kernelUntilExit(box, ["--socket", box.socket()]);
    assert.equal(r.code, 1, r.stderr);
    const journal = `${box.dir}/state/shoal/journal.db`;
    assert.ok(r.stderr.includes(journal), r.stderr);
    const log = await Deno.readTextFile(`${box.dir}/state/shoal/kernel.log`).catch(() => "");
    assert.ok(log.includes(journal), `kernel.log: ${JSON.stringify(log)}`);
    assert.equal(await Deno.lstat(box.socket()).catch(() => null), null, "no socket left bound");
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-START-1/3 a facade whose autostarted kernel cannot open its journal says the kernel exited and how to see why, on every call", async () => {
  const box = await brokenJournalBox();
  try {
    const mcp = await connectMcp(box, { SHOAL_SOCKET: box.socket() });
    try {
      for (let i = 0; i < 2; i++) {
        const e = await mcpError(mcp.call("shoal_exec", { src: "echo hi" }));
        assert.equal(e.code, -32603);
        assert.match(e.message, /kernel unavailable: the autostarted kernel exited with status 1/);
      }
    } finally {
      await mcp.close();
    }
  } finally {
    await box.cleanup();
  }
});
