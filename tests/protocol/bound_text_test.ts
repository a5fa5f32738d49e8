import assert from "node:assert/strict";
import { boundText, cutText } from "../../src/protocol/bound_text.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

/** V-RENDER-3 written out the slow way, to check the fast one against. */
function reference(text: string, uri: string | null, limit: number): string {
  if (bytes(text) <= limit) return text;
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  const marker = (n: number) => `…(${n} more lines, fetch via ${uri ?? "ref"})`;
  for (let k = lines.length; k >= 1; k--) {
    const prefix = lines.slice(0, k).map((l) => l + "\n").join("");
    if (bytes(prefix + marker(lines.length - k)) <= limit) return prefix + marker(lines.length - k);
  }
  const m = marker(lines.length);
  let prefix = "";
  for (const ch of lines[0]) {
    if (bytes(prefix + ch + m) > limit) break;
    prefix += ch;
  }
  return prefix + m;
}

Deno.test("a text within the limit is unchanged, up to exactly the limit", () => {
  assert.equal(boundText("abc", "shoal://out/1", 3), "abc");
  assert.equal(boundText("é".repeat(10), null, 20), "é".repeat(10));
  assert.equal(boundText("", null, 0), "");
});

Deno.test("whole lines are kept with the marker naming the uri and the lines left (V-RENDER-3)", () => {
  const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const out = boundText(text, "shoal://out/17", 100);
  assert.ok(bytes(out) <= 100);
  assert.match(
    out,
    /^line 0\nline 1\n(line \d+\n)*…\((\d+) more lines, fetch via shoal:\/\/out\/17\)$/,
  );
  const kept = out.split("\n").length - 1;
  assert.ok(out.endsWith(`…(${100 - kept} more lines, fetch via shoal://out/17)`));
  assert.equal(out, reference(text, "shoal://out/17", 100));
});

Deno.test("a final trailing newline does not count as a line; without a uri the marker says ref", () => {
  const three = ["a", "b", "c"].map((c) => c.repeat(30)).join("\n");
  const kept = "a".repeat(30) + "\n";
  assert.equal(boundText(three + "\n", null, 70), kept + "…(2 more lines, fetch via ref)");
  assert.equal(boundText(three, null, 70), kept + "…(2 more lines, fetch via ref)");
  assert.equal(boundText(three + "\n\n", null, 70), kept + "…(3 more lines, fetch via ref)");
});

Deno.test("when no line fits, the first line is cut at a scalar boundary", () => {
  const text = "𝄞".repeat(40) + "\nnext";
  const out = boundText(text, null, 60);
  assert.ok(bytes(out) <= 60);
  assert.equal(out, "𝄞".repeat(7) + "…(2 more lines, fetch via ref)");
  assert.equal(boundText("x".repeat(100), "u", 35), "x".repeat(5) + "…(1 more lines, fetch via u)");
});

Deno.test("matches the reference on random texts and limits, including marker digit changes", () => {
  let seed = 3;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let n = 0; n < 2000; n++) {
    const lines = Array.from(
      { length: Math.floor(random() * 30) },
      () => "ab€𝄞\t".slice(0, Math.floor(random() * 6)).repeat(Math.floor(random() * 4)),
    );
    const text = lines.join("\n") + (random() < 0.5 ? "\n" : "");
    const limit = 30 + Math.floor(random() * 60);
    const uri = random() < 0.5 ? null : "shoal://out/9";
    assert.equal(
      boundText(text, uri, limit),
      reference(text, uri, limit),
      JSON.stringify([text, limit]),
    );
  }
});

Deno.test("cutText bounds from a head and a line total without the rest of the text", () => {
  const head = "a\nb\nc\nd\ne\nf";
  assert.equal(cutText(head, 1000, "u", 40), "a\nb\nc\nd\n…(996 more lines, fetch via u)");
});
