// What an MCP client reads back through shoal:// resources, checked against what bash printed:
// the text content a client hands the model, not only the structuredContent beside it.
import assert from "node:assert/strict";
import { byteLength } from "../_support/bytes.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp } from "./_mcp.ts";

/** The 64 KiB bound on any text handed to a client (V-RENDER-3, M-RES-5). */
const TEXT_LIMIT = 65536;

Deno.test({
  name:
    "M-RES-5 the text of shoal://val/<hash> for a journal output of 64 KiB or more holds some of its bytes [ignored: defect found by the probe round; needs a SPEC decision: M-RES-4 reads val/{hash} with blob.get {hash}, whose default chunk is 65536 bytes (K-BLOB-1), and M-RES-5 makes the text the pretty JSON of the whole result bounded to 65536 bytes, so the chunk's one JSON line never fits: after seq 1 100000 both the stdout (588,895 bytes) and the render (65,536) read as 277 bytes of header lines ('{', hash, len, offset, next, 'value': {, '$': 'str') and '…(3 more lines, fetch via shoal://val/sha256:…)', the very URI just read; only the non-standard structuredContent (78 KB) carries data. Serving val chunks as raw reads are (text/plain for str, blob for bytes), or a chunk length whose JSON fits, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        await mcp.ok("shoal_exec", { src: "seq 1 100000" });
        const journal = await mcp.ok("shoal_journal", { head: "seq", limit: 1 });
        const outputs = (journal.items as Rec[])[0].outputs as Rec[];
        for (const kind of ["stdout", "render"]) {
          const output = outputs.find((o) => o.kind === kind)!;
          const read = await mcp.read(`shoal://val/${output.hash}`);
          const text = read.contents[0].text as string;
          assert.ok(byteLength(text) <= TEXT_LIMIT, `${kind}: ${byteLength(text)} bytes`);
          // Whatever the framing, the first lines bash printed are in the text.
          assert.ok(
            text.includes("1\n2\n3\n") || text.includes("1\\n2\\n3\\n"),
            `${kind}: ${text}`,
          );
        }
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "M-RES-5 the text of shoal://task/N/out?stream=stdout&max_bytes=65536 holds the chunk's bytes [ignored: defect found by the probe round; needs the same SPEC decision as shoal://val: K-TASK-7 allows max_bytes up to 65536 and M-RES-5 makes the text the pretty JSON of the task.output result bounded to 65536 bytes, so the data line of a 65536-byte chunk never fits: after seq 1 30000 (168,894 bytes) the read answers 217 bytes of header lines and '…(2 more lines, fetch via <the same URI>)', where max_bytes=40000 gave 48 KB of text with the data]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        const started = await mcp.ok("shoal_exec", { src: "seq 1 30000", background: true });
        const n = String(started.task).replace("task:", "");
        let chunk: Rec = {};
        for (let i = 0; i < 100 && chunk.eof !== true; i++) {
          const read = await mcp.read(`shoal://task/${n}/out?stream=stdout&max_bytes=65536`);
          chunk = read.structuredContent as Rec;
          const text = read.contents[0].text as string;
          assert.ok(byteLength(text) <= TEXT_LIMIT, `${byteLength(text)} bytes`);
          if (chunk.next_cursor === 65536) {
            assert.ok(text.includes("1\\n2\\n3\\n"), text);
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.fail(`no 65536-byte chunk: ${JSON.stringify(chunk).slice(0, 200)}`);
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "M-OUT-1/M-OUT-7 with elide max_bytes 65536, a value that fits the kernel's 65536-byte cap reaches a client reading structuredContent: stdout of 65,330 bytes (shoal_exec) and a 65,501-scalar str (shoal_get path out) [ignored: defect found by the probe round; needs a SPEC decision: V-ELIDE-2/6 let the kernel return a value of up to 65536 encoded bytes and M-TOOL-3 passes elide verbatim, but M-OUT-7 bounds the structuredContent around it (ref, uri, elapsed_ms) to the same 65536, and M-OUT-1 has already dropped the render of a complete value, so for stdouts of 65,309-65,363 bytes SC is {truncated, bytes, ref, uri, preview} whose preview stops before the output line, and for shoal_get of a str whose wire form is 65,511-65,536 bytes both SC and the text (its pretty JSON line does not fit) hold none of it, the marker naming the whole outcome; clients that show structuredContent (M-OUT-1 names Claude Code and VS Code) see no output. Budgeting the kernel call below 65536 by the envelope, or keeping the value over the bound, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        const elide = { max_bytes: 65536 };
        const run = await mcp.call("shoal_exec", {
          src: `python3 -c 'print("x" * 65330)'`,
          elide,
        });
        const sc = run.structuredContent;
        assert.ok(byteLength(sc) <= TEXT_LIMIT);
        const out = (sc.value as Rec | undefined)?.out as Rec | undefined;
        assert.ok(
          out?.$ === "str" || out?.$ === "ref",
          `exec: ${JSON.stringify(sc).slice(0, 300)}`,
        );

        const big = await mcp.ok("shoal_exec", { src: `python3 -c 'print("y" * 65500)'` });
        const got = await mcp.call("shoal_get", { ref: big.ref, path: "out", elide });
        const value = got.structuredContent.value as Rec | undefined;
        const text = got.content[0].text as string;
        assert.ok(
          value?.$ === "str" || text.includes("y".repeat(1000)),
          `get: ${JSON.stringify(got.structuredContent).slice(0, 300)}`,
        );
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});
