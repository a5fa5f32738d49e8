import assert from "node:assert/strict";
import { stripAnsi } from "../../../src/kernel/values/ansi.ts";
import { BlobValue } from "../../../src/kernel/values/blob_value.ts";
import { stdoutValue } from "../../../src/kernel/values/outcome.ts";
import {
  floatText,
  outcomeRenders,
  renderBounded,
  renderHead,
} from "../../../src/kernel/values/render.ts";
import { RENDER_EVENT_LIMIT } from "../../../src/protocol/limits.ts";
import {
  DateTime,
  Duration,
  IntegralFloat,
  Table,
  type Value,
} from "../../../src/kernel/values/value.ts";
import { bytesRead } from "../../_support/proc.ts";
import { capture, outcomeOf, sparseStr, withCas } from "./_fixtures.ts";

const render = (v: Value, tty = true) => renderBounded(v, "shoal://out/1", tty);
const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("scalars render by V-RENDER-1", async () => {
  assert.equal(await render(null), "null");
  assert.equal(await render(true), "true");
  assert.equal(await render(-42), "-42");
  assert.equal(await render(new IntegralFloat(2)), "2.0");
  assert.equal(await render(0.1), "0.1");
  assert.equal(await render(new IntegralFloat(1e21)), "1e+21");
  assert.equal(await render(new IntegralFloat(-0)), "-0.0");
  assert.equal(floatText(5e-7), "5e-7");
  assert.equal(await render("hello\n\n"), "hello\n");
  assert.equal(await render("hello"), "hello");
  assert.equal(await render(new Uint8Array(3)), "<3 bytes>");
  assert.equal(await render(new Duration(36012345)), "36.012ms");
  assert.equal(await render(new DateTime("2026-01-02T03:04:05.123Z")), "2026-01-02T03:04:05.123Z");
});

Deno.test("lists and records render one line per item, cut to 80 scalars with …", async () => {
  assert.equal(
    await render([1, "a\nb", null, [1, "x"], new Map([["k", 2.5]])]),
    '1\na\\nb\nnull\n[1, "x"]\n{"k": 2.5}',
  );
  assert.equal(
    await render(new Map<string, Value>([["name", "a"], ["size", 1]])),
    "name: a\nsize: 1",
  );
  const long = await render(["é".repeat(200), Array.from({ length: 100 }, (_, i) => i)]);
  const [first, second] = long.split("\n");
  assert.equal(first, "é".repeat(79) + "…");
  assert.equal([...second].length, 80);
  assert.ok(second.endsWith("…") && second.startsWith("[0, 1, 2"));
});

Deno.test("tables render a header with every column, a ─ line, then one row per line", async () => {
  const t = new Table(["name", "size"], [["a", "bbbbbb"], [1, null]], 2);
  assert.equal(await render(t), "name    size\n──────  ────\na       1\nbbbbbb  null");
});

Deno.test("outcomes render out, the stderr block and the exit line (V-RENDER-1)", async () => {
  await withCas(async (cas) => {
    assert.equal(await render(await outcomeOf(cas, "42\n")), "42");
    assert.equal(await render(await outcomeOf(cas, "hi\n", "warn\n")), "hi\n--- stderr ---\nwarn");
    assert.equal(
      await render(await outcomeOf(cas, "", "boom\n", 1)),
      "--- stderr ---\nboom\n[exit status 1]",
    );
    assert.equal(
      await render(await outcomeOf(cas, "part\n", "", null, "SIGTERM")),
      "part\n[killed by SIGTERM]",
    );
  });
});

Deno.test("ANSI sequences are removed from renders for tty:false only (V-RENDER-2)", async () => {
  const text =
    "\x1b[1;31mred\x1b[0m \x1b]0;title\x07x\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\ \x1b(Bplain\x1bc\x1b7ok";
  assert.equal(stripAnsi(text), "red xlink plainok");
  assert.equal(await render(text, false), "red xlink plainok");
  assert.equal(await render(text, true), text);
  assert.equal(stripAnsi("a\x1b]unterminated\nb"), "aunterminated\nb");
  assert.equal(await renderHead("\x1b[32mgreen\x1b[0m", false), "green");
});

Deno.test("the 8-bit (C1) forms of the sequences are removed too: CSI U+009B, OSC U+009D, and each other C1 control, which a UTF-8 terminal acts on as its ESC form (V-RENDER-2)", async () => {
  const text =
    "\u009b1;31mred\u009b0m \u009d0;title\u0007x\u009d8;;http://a\u009clink \u008dup\u0085";
  assert.equal(stripAnsi(text), "red xlink up");
  assert.equal(await render(text, false), "red xlink up");
  assert.equal(await render(text, true), text);
});

Deno.test("a 70,000-line str renders within 65536 bytes with the V-RENDER-3 marker", async () => {
  const lines = Array.from({ length: 70000 }, (_, i) => `line ${i} ${"x".repeat(i % 7)}`);
  const text = lines.join("\n") + "\n";
  await withCas(async (cas) => {
    const inCas = stdoutValue(cas, await capture(cas, text));
    assert.ok(inCas instanceof BlobValue);
    for (const v of [text, inCas]) {
      const out = await renderBounded(v, "shoal://out/5", false);
      assert.ok(bytes(out) <= 65536);
      const m = /…\((\d+) more lines, fetch via shoal:\/\/out\/5\)$/.exec(out);
      assert.ok(m, out.slice(-80));
      const kept = out.slice(0, m.index).split("\n").slice(0, -1);
      assert.deepEqual(kept, lines.slice(0, kept.length));
      assert.equal(Number(m[1]), 70000 - kept.length);
      assert.ok(bytes(out) + bytes(lines[kept.length]) + 1 > 65536, "the next line would not fit");
    }
  });
});

Deno.test("a multi-GB CAS-backed str renders from its head only", async () => {
  await withCas(async (cas) => {
    const size = 5 * 1024 ** 3;
    const huge = await sparseStr(cas, "\x1b[1mtitle\x1b[0m\nsecond\n", size, 2);
    const before = bytesRead();
    const out = await renderBounded(huge, "shoal://out/2", false);
    // Where the OS counts reads (Linux), only the head was read.
    if (before !== null) assert.ok(bytesRead()! - before < 16 * 1024 * 1024, "head only");
    assert.ok(bytes(out) <= 65536);
    assert.equal(out, "title\nsecond\n…(1 more lines, fetch via shoal://out/2)");
  });
});

Deno.test("a CAS-backed str is stripped of ANSI even where sequences straddle read chunks", async () => {
  await withCas(async (cas) => {
    const line = "\x1b[31m" + "r".repeat(1000) + "\x1b[0m\n";
    const v = stdoutValue(cas, await capture(cas, line.repeat(3000)));
    assert.ok(v instanceof BlobValue);
    const out = await renderBounded(v, "u", false);
    assert.ok(!out.includes("\x1b"));
    assert.match(out, /^(r{1000}\n)+…\(\d+ more lines, fetch via u\)$/);
  });
});

Deno.test("V-RENDER-2: a CAS-backed str is stripped of the 8-bit CSI and OSC where they straddle the 1 MiB read chunks of a line longer than 64 KiB (they left '31m' and '0;title BEL' as text: only an ESC was carried over)", async () => {
  await withCas(async (cas) => {
    // 262,143 four-byte CSI resets and one byte put the sequence's first three bytes at the end
    // of the first 1 MiB read; the resets strip to nothing, so the render is all that follows.
    for (const sequence of ["\u009b31m", "\u009d0;title\u0007", "\x1b[31m"]) {
      const text = "\u009b0m".repeat(262143) + "a" + sequence + "red\n";
      const v = stdoutValue(cas, await capture(cas, text));
      assert.ok(v instanceof BlobValue);
      assert.equal(await renderBounded(v, "u", false), "ared", JSON.stringify(sequence));
    }
  });
});

Deno.test("a 2,000,000-item list renders its head with the count of the rest", async () => {
  const list = Array.from({ length: 2_000_000 }, (_, i) => i);
  const out = await renderBounded(list, "shoal://out/3", true);
  assert.ok(bytes(out) <= 65536);
  const kept = out.split("\n").length - 1;
  assert.ok(out.startsWith("0\n1\n2\n"));
  assert.ok(out.endsWith(`…(${2_000_000 - kept} more lines, fetch via shoal://out/3)`));
});

Deno.test("render_head is at most 10 lines of 80 scalars", async () => {
  assert.equal(
    await renderHead(Array.from({ length: 20 }, (_, i) => i), true),
    "0\n1\n2\n3\n4\n5\n6\n7\n8\n9",
  );
  assert.equal(await renderHead("y".repeat(300), true), "y".repeat(79) + "…");
});

Deno.test("V-RENDER-1..3 an outcome's three renders, made once when they coincide, are the renders made apart", async () => {
  await withCas(async (cas) => {
    const longLine = "x".repeat(5000);
    const outputs: [string, string][] = [
      ["hi\n", ""],
      ["42\n", "warn\n"],
      ["\x1b[31mred\x1b[0m\n", ""],
      [`${longLine}\n`, ""], // whole for the journal, cut for the event
      [`short\n${"y".repeat(70000)}\n`, ""], // cut for the journal to a small text
      ["ok\n", "\x1b[1mbold warning\x1b[0m\n"],
      // Cut for the journal only by its escapes, which start after the cut.
      [`plain\n${"\x1b[31mx\x1b[0m".repeat(8000)}\n`, ""],
      [Array.from({ length: 3000 }, (_, i) => `\x1b[2mline ${i}\x1b[0m`).join("\n"), ""],
    ];
    for (const [stdout, stderr] of outputs) {
      const outcome = await outcomeOf(cas, stdout, stderr);
      const uri = "shoal://out/7";
      assert.deepEqual(await outcomeRenders(outcome, uri), {
        tty: await renderBounded(outcome, uri, true),
        plain: await renderBounded(outcome, uri, false),
        event: await renderBounded(outcome, uri, false, RENDER_EVENT_LIMIT),
      }, JSON.stringify(stdout.slice(0, 40)));
    }
  });
});
