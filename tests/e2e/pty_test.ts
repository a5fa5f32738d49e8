// Issue 6 through the real stack (SDK client → shoal-mcp → autostarted kernel → real PTY): the six
// shoal_pty_* tools on an interactive bash, the pty resources, and subscription to screen changes.
import assert from "node:assert/strict";
import { groupMembers, processLive } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { pollUntil, waitUntil } from "../_support/wait.ts";
import { type Mcp, mcpTest } from "./_mcp.ts";

/** Reads the screen with shoal_pty_read until some row equals `row` (bounded); returns that read. */
function screenWithRow(mcp: Mcp, ptyId: string, row: string): Promise<Rec> {
  return pollUntil(
    () => mcp.ok("shoal_pty_read", { pty_id: ptyId }),
    (r) => (r.screen as string[]).includes(row),
  );
}

mcpTest(
  "bash --norc -i on a PTY: send echo $((6*7)) + Enter shows a row 42, resize then stty size, list, pty resources, subscription updates, close ends the process (K-PTY-1..7, K-PTY-13, M-TOOL-3, M-SUB-1)",
  async (mcp) => {
    const opened = await mcp.ok("shoal_pty_open", { cmd: "bash", args: ["--norc", "-i"] });
    const ptyId = String(opened.pty_id);
    const n = /^pty:([0-9]+)$/.exec(ptyId)![1];
    assert.equal(opened.cmd, "bash --norc -i");
    assert.equal(opened.cols, 80);
    assert.equal(opened.rows, 24);
    const pid = opened.pid as number;
    assert.equal(processLive(pid), true);

    const uri = `shoal://pty/${n}`;
    await mcp.client.subscribeResource({ uri });
    const sent = await mcp.ok("shoal_pty_send", {
      pty_id: ptyId,
      input: ["echo $((6*7))", { key: "Enter" }],
    });
    assert.equal(sent.sent, "echo $((6*7))".length + 1);
    const screen = await screenWithRow(mcp, ptyId, "42");
    assert.equal((screen.screen as string[]).length, 24);
    assert.equal(screen.alive, true);
    assert.ok(
      (screen.screen as string[]).some((r) => r.endsWith("echo $((6*7))")),
      "the typed line is echoed",
    );

    assert.ok(
      await waitUntil(() => mcp.updates.some((u) => u.uri === uri), 5000),
      "screen changes are notified",
    );
    const updates = mcp.updates.filter((u) => u.uri === uri);
    assert.deepEqual(updates[0].payload, { pty_id: ptyId, alive: true, exit: null });
    for (let i = 1; i < updates.length; i++) {
      assert.ok((updates[i].seq as number) > (updates[i - 1].seq as number));
    }
    const seen = updates.length;
    await mcp.ok("shoal_pty_send", { pty_id: ptyId, input: "echo again\r" });
    assert.ok(
      await waitUntil(() => mcp.updates.filter((u) => u.uri === uri).length > seen, 5000),
      "a later change is notified too",
    );
    await mcp.client.unsubscribeResource({ uri });

    const resized = await mcp.ok("shoal_pty_resize", { pty_id: ptyId, cols: 100, rows: 30 });
    assert.deepEqual(resized, { pty_id: ptyId, cols: 100, rows: 30 });
    await mcp.ok("shoal_pty_send", { pty_id: ptyId, input: ["stty size", { key: "Enter" }] });
    const sized = await screenWithRow(mcp, ptyId, "30 100");
    assert.equal((sized.screen as string[]).length, 30);
    assert.equal(sized.cols, 100);

    const listed = await mcp.ok("shoal_pty_list");
    assert.deepEqual(listed.ptys, [{
      pty_id: ptyId,
      cmd: "bash --norc -i",
      pid,
      cols: 100,
      rows: 30,
      alive: true,
    }]);
    const all = await mcp.read("shoal://pty");
    assert.deepEqual(all.structuredContent, listed);
    const one = await mcp.read(uri);
    assert.equal(one.contents[0].mimeType, "application/json");
    const read = one.structuredContent as Rec;
    assert.equal(read.pty_id, ptyId);
    assert.ok((read.screen as string[]).includes("30 100"));
    const listedResources = (await mcp.client.listResources()).resources;
    assert.ok(listedResources.some((r) => r.uri === uri && r.name === ptyId));

    const closed = await mcp.ok("shoal_pty_close", { pty_id: ptyId });
    assert.deepEqual(closed, {
      pty_id: ptyId,
      closed: true,
      exit: { status: null, signal: "SIGHUP" },
    });
    assert.ok(await waitUntil(() => !processLive(pid), 3000), "the PTY's process is gone");
    assert.deepEqual(groupMembers(pid), [], "nothing of its process group is left");
    const after = await mcp.call("shoal_pty_read", { pty_id: ptyId });
    assert.equal(after.isError, true);
    assert.equal(after.structuredContent.code, -32022);
    assert.deepEqual((await mcp.ok("shoal_pty_list")).ptys, []);
  },
);
