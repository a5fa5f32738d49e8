import assert from "node:assert/strict";
import { memberSource } from "../../src/protocol/member_source.ts";

/** A random JSON value written with random spacing and escapes, as its source text. */
function randomJson(rand: () => number, depth: number): string {
  const space = () => [" ", "", "\n", "\t", "\r\n"][Math.floor(rand() * 5)];
  const strings = ['"a"', '"id"', '"\\u0069d"', '"q\\"}],"', '"\\\\"', '"x\\\\\\"y"', '""'];
  const pick = Math.floor(rand() * (depth > 3 ? 4 : 6));
  if (pick === 0) return strings[Math.floor(rand() * strings.length)];
  if (pick === 1) return ["1", "-0", "1.50", "1e3", "1152921504606846977"][Math.floor(rand() * 5)];
  if (pick === 2) return ["true", "false", "null"][Math.floor(rand() * 3)];
  if (pick === 3) return "[]";
  const n = Math.floor(rand() * 4);
  const items = Array.from({ length: n }, () => randomJson(rand, depth + 1));
  if (pick === 4) return `[${space()}${items.join(`${space()},${space()}`)}${space()}]`;
  const members = items.map((v) =>
    `${strings[Math.floor(rand() * strings.length)]}${space()}:${space()}${v}`
  );
  return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
}

Deno.test("memberSource finds the source text JSON.parse keeps for a top-level member, on random objects", () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 0; i < 2000; i++) {
    let text: string;
    do text = randomJson(rand, 0); while (!text.startsWith("{"));
    const parsed = JSON.parse(text);
    const source = memberSource(text, "id");
    if (!Object.hasOwn(parsed, "id")) {
      assert.equal(source, undefined, text);
      continue;
    }
    assert.ok(source !== undefined, text);
    assert.deepEqual(JSON.parse(source), parsed.id, text);
    assert.equal(source, source.trim(), text);
  }
});

Deno.test("memberSource walks 1,000,000 levels of nesting without recursion", () => {
  const deep = "[".repeat(1_000_000) + "]".repeat(1_000_000);
  assert.equal(memberSource(`{"x":${deep},"id":1.50}`, "id"), "1.50");
});
